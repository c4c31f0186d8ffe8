import Archivist
import ArchivistKeyedArchive
import Foundation

/// The keyed-archive benchmark: the pure-Swift reader and writer (`ArchivistKeyedArchive`)
/// against corelibs' NSKeyedUnarchiver and NSKeyedArchiver on the same archives: (a) 10,000
/// tasks, (b) 1,000 users × 20 letters (acyclic, as Foundation on Linux needs). Our writer's
/// output is checked to be readable by Foundation as the same classes. (c) The bridge reading
/// 2,000 dictionaries of value classes (200 with `--quick`). (d), (e): the reader on
/// dictionary-shaped archives (`KeyedDictionaryBenchmarks.swift`).
func runKeyedArchiveBenchmarks(_ harness: Harness) throws {
    let tasks = (0..<(harness.options.quick ? 2_000 : 10_000)).map(HandTask.init)
    try compareKeyed(
        harness,
        suite: "keyed.tasks",
        title: "(a) \(tasks.count) tasks as keyed archives",
        models: tasks.map(KeyedTask.init),
        objects: tasks.map(ObjectTask.init) as NSArray,
        objectClasses: [NSArray.self, ObjectTask.self, NSString.self, NSDate.self]
    )
    let users = (0..<(harness.options.quick ? 200 : 1_000)).map { HandUser($0, letters: 20) }
    try compareKeyed(
        harness,
        suite: "keyed.letters",
        title: "(b) \(users.count) users × 20 letters as keyed archives",
        models: users.map(KeyedUser.init),
        objects: users.map(ObjectUser.init) as NSArray,
        objectClasses: [NSArray.self, ObjectUser.self, ObjectLetter.self, NSString.self]
    )
    for user in users { user.letters.removeAll() }
    // 2,000 in the full run: corelibs' NSKeyedArchiver, which writes the input, looks every
    // object up in a table keyed by the object, and equal-sized NSDictionarys all hash alike,
    // so writing the input is quadratic (isEqual against every earlier one) and 10,000 are out
    // of reach. Even 2,000 would be most of a quick run, so quick mode uses 200 (a hundredth of
    // the quadratic work; the cases measured are linear, so the ratios still show).
    try compareFoundationValueArchive(harness, count: harness.options.quick ? 200 : 2_000)
    try runKeyedDictionaryBenchmarks(harness)
}

/// (c) The bridge's own route for archives of Foundation value classes only:
/// `KeyedArchiverBridge.unarchiveObject`/`unarchive(NSArray.self)` — on corelibs the validator
/// and then objects built from the pure-Swift reader — against corelibs' `NSKeyedUnarchiver`
/// alone (no validation) and after `KeyedArchiverBridge.validate`, roughly the bridge's cost
/// before (it also re-encoded the plist for Foundation). Round-robin, so load hits all alike.
private func compareFoundationValueArchive(_ harness: Harness, count: Int) throws {
    let suite = "keyed.values"
    let categories = (0..<10).map { NSString(string: "category \($0)") }
    let keys: [NSString] = ["id", "name", "category", "price", "created"]
    let rows = NSArray(
        array: (0..<count).map { (i: Int) -> NSDictionary in
            let values: [NSObject] = [
                NSNumber(value: i), NSString(string: "item \(i)"), categories[i % 10],
                NSNumber(value: Double(i) / 4), NSDate(timeIntervalSinceReferenceDate: Double(i) * 60),
            ]
            return NSDictionary(objects: values, forKeys: keys)
        }
    )
    let data = try NSKeyedArchiver.archivedData(withRootObject: rows, requiringSecureCoding: true)
    let valueClasses: [AnyClass] = [NSArray.self, NSDictionary.self, NSString.self, NSNumber.self, NSDate.self]
    // Sanity: both routes return the same rows.
    guard let ours = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data) as? NSArray,
        let theirs = try NSKeyedUnarchiver.unarchivedObject(ofClasses: valueClasses, from: data) as? NSArray,
        ours.count == count, ours.isEqual(theirs)
    else { throw ArchiveError(.invalidValue, "\(suite): the routes disagree") }
    print("\n(c) \(count) dictionaries of strings, numbers and dates (\(data.count) bytes)")
    harness.measureInterleaved(
        suite,
        samples: harness.options.quick ? 5 : 9,
        [
            (
                "bridge unarchiveObject",
                { (try? KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)) == nil ? nil : data.count }
            ),
            (
                "bridge unarchive(NSArray)",
                { (try? KeyedArchiverBridge.unarchive(NSArray.self, from: data)) == nil ? nil : data.count }
            ),
            (
                "NSKeyedUnarchiver decode",
                {
                    (try? NSKeyedUnarchiver.unarchivedObject(ofClasses: valueClasses, from: data)) == nil
                        ? nil : data.count
                }
            ),
            (
                "validate + NSKeyedUnarchiver",
                {
                    guard (try? KeyedArchiverBridge.validate(data)) != nil else { return nil }
                    return (try? NSKeyedUnarchiver.unarchivedObject(ofClasses: valueClasses, from: data)) == nil
                        ? nil : data.count
                }
            ),
            // The bridge's parts: the validator, and the reader's table (the bridge reuses the
            // validator's parse; building the objects is the rest).
            ("validate only", { (try? KeyedArchiverBridge.validate(data)) == nil ? nil : data.count }),
            ("KeyedArchive table only", { (try? KeyedArchive(data: data)) == nil ? nil : data.count }),
        ]
    )
    harness.printTable(suite, title: "(c) \(count) value dictionaries through the bridge") { _ in
        "NSKeyedUnarchiver decode"
    }
}

private func compareKeyed<Model: Codable & KeyedArchiveClassNamed>(
    _ harness: Harness,
    suite: String,
    title: String,
    models: [Model],
    objects: NSArray,
    objectClasses: [AnyClass]
) throws {
    let foundationData = try NSKeyedArchiver.archivedData(withRootObject: objects, requiringSecureCoding: true)
    let ourData = try KeyedArchiveWriter.encode(models)
    // Sanity: each side reads the other's output completely.
    guard try KeyedArchive.decode([Model].self, from: foundationData).count == models.count,
        (try NSKeyedUnarchiver.unarchivedObject(ofClasses: objectClasses, from: ourData) as? NSArray)?.count
            == models.count
    else { throw ArchiveError(.invalidValue, "\(suite): cross-reading failed") }
    // Foundation's encoder is slow enough here that one cold sample settles its ratio (as in
    // the archiving suites).
    harness.measure(suite, "NSKeyedArchiver encode", samples: 1, warmUp: false) {
        try? NSKeyedArchiver.archivedData(withRootObject: objects, requiringSecureCoding: true).count
    }
    harness.measure(suite, "KeyedArchiveWriter encode") { try? KeyedArchiveWriter.encode(models).count }
    // The decoders round-robin, so load hits all alike: with one cold sample of Foundation's
    // decode, the ratio swings from run to run on a shared machine.
    harness.measureInterleaved(
        suite,
        samples: harness.options.quick ? 3 : 5,
        [
            (
                "NSKeyedUnarchiver decode",
                {
                    (try? NSKeyedUnarchiver.unarchivedObject(ofClasses: objectClasses, from: foundationData)) == nil
                        ? nil : foundationData.count
                }
            ),
            (
                "KeyedArchive table only decode",
                { (try? KeyedArchive(data: foundationData)) == nil ? nil : foundationData.count }
            ),
            (
                "KeyedArchive decode",
                { (try? KeyedArchive.decode([Model].self, from: foundationData)) == nil ? nil : foundationData.count }
            ),
        ]
    )
    harness.printTable(suite, title: title) {
        $0.hasSuffix("encode") ? "NSKeyedArchiver encode" : "NSKeyedUnarchiver decode"
    }
}

/// The task with ObjectTask's keys, written as an ObjectTask.
private struct KeyedTask: Codable, KeyedArchiveClassNamed {
    static var keyedArchiveClassChain: [String] { [NSStringFromClass(ObjectTask.self), "NSObject"] }
    var id: String, name: String, color: String, diligenceTime: Int, isRestMode: Bool, restTime: Int
    var isFocusMode: Bool, musicName: String, isMusicEnabled: Bool, isAlertEnabled: Bool, alertTime: Date

    init(_ t: HandTask) {
        id = t.id
        name = t.name
        color = t.color
        diligenceTime = t.diligenceTime
        isRestMode = t.isRestMode
        restTime = t.restTime
        isFocusMode = t.isFocusMode
        musicName = t.musicName
        isMusicEnabled = t.isMusicEnabled
        isAlertEnabled = t.isAlertEnabled
        alertTime = t.alertTime
    }
}

/// The user with ObjectUser's keys, written as an ObjectUser.
private struct KeyedUser: Codable, KeyedArchiveClassNamed {
    static var keyedArchiveClassChain: [String] { [NSStringFromClass(ObjectUser.self), "NSObject"] }
    var account: String, writeName: String, letters: [KeyedLetter]

    init(_ user: HandUser) {
        account = user.account
        writeName = user.writeName
        letters = user.letters.map(KeyedLetter.init)
    }
}

/// The letter with ObjectLetter's keys, written as an ObjectLetter.
private struct KeyedLetter: Codable, KeyedArchiveClassNamed {
    static var keyedArchiveClassChain: [String] { [NSStringFromClass(ObjectLetter.self), "NSObject"] }
    var pkNumber: Int, sender: String, content: String, dateString: String, isRead: Bool, incoming: Bool

    init(_ l: HandLetter) {
        pkNumber = l.pkNumber
        sender = l.sender
        content = l.content
        dateString = l.dateString
        isRead = l.isRead
        incoming = l.incoming
    }
}
