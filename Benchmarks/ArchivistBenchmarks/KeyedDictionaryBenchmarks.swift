import Archivist
import ArchivistKeyedArchive
import Foundation

/// The keyed-archive reader against corelibs' `NSKeyedUnarchiver` on dictionary-shaped archives:
/// an `NSArray` of `NSDictionary` records, as apps keep data without classes of their own — (d)
/// 10,000 records of eight fields with a nested array of strings, (e) 1,000 users × 20 letters,
/// each user a dictionary holding its letters' dictionaries. Written by corelibs'
/// `NSKeyedArchiver` (numbers and strings stored once per value, as it stores them), and read
/// round-robin by both into the same data: `KeyedArchive.decode` into `Decodable` structs,
/// Foundation into its `NSDictionary`s.
func runKeyedDictionaryBenchmarks(_ harness: Harness) throws {
    let records = (0..<(harness.options.quick ? 2_000 : 10_000)).map(DictionaryRecord.init)
    try compareDictionaryArchive(
        harness,
        suite: "keyed.dictionaries",
        title: "(d) \(records.count) records as dictionaries",
        root: NSArray(array: records.map { $0.foundationObject() }),
        as: [DictionaryRecord].self,
        count: records.count
    )
    let users = (0..<(harness.options.quick ? 200 : 1_000)).map { DictionaryUser($0, letters: 20) }
    try compareDictionaryArchive(
        harness,
        suite: "keyed.dictionary-letters",
        title: "(e) \(users.count) users × 20 letters as dictionaries",
        root: NSArray(array: users.map { $0.foundationObject() }),
        as: [DictionaryUser].self,
        count: users.count
    )
}

private func compareDictionaryArchive<Model: Decodable>(
    _ harness: Harness,
    suite: String,
    title: String,
    root: NSArray,
    as type: [Model].Type,
    count: Int
) throws {
    let data = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: true)
    let classes: [AnyClass] = [NSArray.self, NSDictionary.self, NSString.self, NSNumber.self, NSDate.self]
    // Sanity: both read every record.
    guard try KeyedArchive.decode(type, from: data).count == count,
        (try NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: data) as? NSArray)?.count == count
    else { throw ArchiveError(.invalidValue, "\(suite): the readers disagree") }
    print("\n\(title) (\(data.count) bytes)")
    harness.measureInterleaved(
        suite,
        samples: harness.options.quick ? 3 : 5,
        [
            (
                "NSKeyedUnarchiver decode",
                {
                    (try? NSKeyedUnarchiver.unarchivedObject(ofClasses: classes, from: data)) == nil ? nil : data.count
                }
            ),
            ("KeyedArchive decode", { (try? KeyedArchive.decode(type, from: data)) == nil ? nil : data.count }),
            ("KeyedArchive table only", { (try? KeyedArchive(data: data)) == nil ? nil : data.count }),
        ]
    )
    harness.printTable(suite, title: title) { _ in "NSKeyedUnarchiver decode" }
}

/// An `NSDictionary` (or `NSArray`) archived exactly as it archives itself and under its class
/// name, but looked up in the archiver's object table by identity. corelibs' `NSKeyedArchiver`
/// looks every object up by equality, and an `NSDictionary` or `NSArray` hashes by its count,
/// so archiving 10,000 records directly compares each with every other of its size
/// (quadratic, as the (c) case above is): the archive is the same, written in linear time.
/// The strings and numbers inside are still stored once per value.
private final class ArchivedCollection: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let collection: NSObject & NSCoding

    init(_ collection: NSObject & NSCoding) { self.collection = collection }

    override var classForCoder: AnyClass { collection.classForCoder }

    func encode(with coder: NSCoder) { collection.encode(with: coder) }

    init?(coder: NSCoder) { nil }
}

/// Builds an archived `NSDictionary` of `entries`.
private func archivedDictionary(_ entries: [String: NSObject]) -> ArchivedCollection {
    ArchivedCollection(NSDictionary(dictionary: entries))
}

/// A record as an app keeps it without a class: eight fields, tags a nested array of strings.
private struct DictionaryRecord: Decodable {
    var id: Int, title: String, notes: String, done: Bool, estimate: Double, priority: Int, created: Date
    var tags: [String]

    init(_ i: Int) {
        id = i
        title = "Task number \(i)"
        notes = "Remember to check item \(i) against the list before Friday's review."
        done = i % 3 == 0
        estimate = Double(i % 16) / 4
        priority = i % 5
        created = Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(i) * 60)
        tags = (0..<(2 + i % 3)).map { "tag-\((i + $0 * 7) % 40)" }
    }

    func foundationObject() -> NSObject {
        let tags = ArchivedCollection(NSArray(array: tags.map { NSString(string: $0) }))
        return archivedDictionary([
            "id": NSNumber(value: id), "title": NSString(string: title), "notes": NSString(string: notes),
            "done": NSNumber(value: done), "estimate": NSNumber(value: estimate), "priority": NSNumber(value: priority),
            "created": NSDate(timeIntervalSinceReferenceDate: created.timeIntervalSinceReferenceDate), "tags": tags,
        ])
    }
}

/// The user and letters, as dictionaries.
private struct DictionaryUser: Decodable {
    var account: String, writeName: String, letters: [DictionaryLetter]

    init(_ i: Int, letters count: Int) {
        let user = HandUser(i, letters: count)
        account = user.account
        writeName = user.writeName
        letters = user.letters.map(DictionaryLetter.init)
    }

    func foundationObject() -> NSObject {
        let letters = ArchivedCollection(NSArray(array: letters.map { $0.foundationObject() }))
        return archivedDictionary([
            "account": NSString(string: account), "writeName": NSString(string: writeName), "letters": letters,
        ])
    }
}

private struct DictionaryLetter: Decodable {
    var pkNumber: Int, sender: String, content: String, dateString: String, isRead: Bool, incoming: Bool

    init(_ l: HandLetter) {
        pkNumber = l.pkNumber
        sender = l.sender
        content = l.content
        dateString = l.dateString
        isRead = l.isRead
        incoming = l.incoming
    }

    func foundationObject() -> NSObject {
        archivedDictionary([
            "pkNumber": NSNumber(value: pkNumber), "sender": NSString(string: sender),
            "content": NSString(string: content),
            "dateString": NSString(string: dateString), "isRead": NSNumber(value: isRead),
            "incoming": NSNumber(value: incoming),
        ])
    }
}
