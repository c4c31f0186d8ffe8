import Foundation
import Testing

@testable import Archivist

struct CodableKinds: Codable, Archivable, Equatable {
    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case polygon([Double], closed: Bool)
        case empty
    }

    enum Color: String, Codable, Archivable { case red, green }

    var bool = false
    var int8: Int8 = -3
    var uint64: UInt64 = .max
    var float: Float = 0.25
    var text = "Codable ✓"
    var data = Data(repeating: 7, count: 100)
    var date = Date(timeIntervalSince1970: 1_000_000)
    var url = URL(string: "file:///tmp/x")!
    var uuid = UUID()
    var missing: Int? = nil
    var present: Int? = 9
    var shapes: [Shape] = [.circle(radius: 2), .polygon([1, 2, 3], closed: true), .empty]
    var color = Color.green
    var nestedMap = ["a": [1, 2], "b": []]
    var tuples: [[String?]] = [["x", nil], []]
}

/// A Codable graph: users own letters, letters point back through `@BackReference`.
final class Mailbox: Codable, Archivable {
    var owner: String
    var letters: [Note]
    init(owner: String, letters: [Note]) {
        self.owner = owner
        self.letters = letters
    }
}

final class Note: Codable, Archivable {
    var text: String
    @BackReference var mailbox: Mailbox?
    init(text: String) { self.text = text }
}

/// Optional fields are left out when nil, so archives of this one model have different key
/// tables, and one record may lack a key the record before it used.
struct SparseFields: Codable, Archivable, Equatable {
    var a: Int?
    var b: String?
    var c: Bool?
}

/// Decodes its fields in the reverse of the order it encodes them, with enum keys (`Reversed`)
/// or with keys that are not plain values (`Named`, a `String` inside).
struct ReorderedFields: Codable, Archivable, Equatable {
    var first: Int
    var second: String
    var third: Double?

    enum Reversed: String, CodingKey { case first, second, third }

    struct Named: CodingKey {
        var stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    init(first: Int, second: String, third: Double?) {
        self.first = first
        self.second = second
        self.third = third
    }

    init(from decoder: any Decoder) throws {
        if usesNamedKeys(decoder) {
            let container = try decoder.container(keyedBy: Named.self)
            third = try container.decodeIfPresent(Double.self, forKey: Named(stringValue: "third"))
            second = try container.decode(String.self, forKey: Named(stringValue: "second"))
            first = try container.decode(Int.self, forKey: Named(stringValue: "first"))
        } else {
            let container = try decoder.container(keyedBy: Reversed.self)
            third = try container.decodeIfPresent(Double.self, forKey: .third)
            second = try container.decode(String.self, forKey: .second)
            first = try container.decode(Int.self, forKey: .first)
        }
        // Named keys for odd values of `first`, enum keys for even ones.
        func usesNamedKeys(_ decoder: any Decoder) -> Bool {
            (try? decoder.container(keyedBy: Reversed.self).decode(Int.self, forKey: .first)).map { $0 % 2 != 0 }
                ?? false
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Reversed.self)
        try container.encode(first, forKey: .first)
        try container.encode(second, forKey: .second)
        try container.encodeIfPresent(third, forKey: .third)
    }
}

/// Codable inheritance through `superEncoder`/`superDecoder`.
class Base: Codable {
    var id: Int
    init(id: Int) { self.id = id }
}

final class Derived: Base, Archivable {
    var extra: String
    init(id: Int, extra: String) {
        self.extra = extra
        super.init(id: id)
    }
    private enum CodingKeys: String, CodingKey { case extra }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        extra = try container.decode(String.self, forKey: .extra)
        try super.init(from: container.superDecoder())
    }
    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(extra, forKey: .extra)
        try super.encode(to: container.superEncoder())
    }
    func encode(to archive: ArchiveEncoder) throws {
        try encode(to: CodableArchiveEncoder(archive: archive, target: .frame(id: archive.storage.pointee.frame.id)))
    }
    convenience init(from archive: ArchiveDecoder) throws {
        try self.init(from: CodableArchiveDecoder(archive: archive))
    }
}

/// A Codable field of a class type that is not `Archivable` whose values are (`Derived`),
/// read back with the values' dynamic type.
struct BaseHolder: Codable, Archivable {
    var items: [Base]
    init(items: [Base]) { self.items = items }
    init(from decoder: any Decoder) throws {
        items = try decoder.container(keyedBy: CodingKeys.self).decode([Derived].self, forKey: .items)
    }
}

@Suite struct ArchiveCodableTests {
    @Test func archivableSubclassOfPlainCodableClassKeepsIdentity() throws {
        // The field's static type says "plain Codable"; each value is still written through
        // its `Archivable` conformance, as one shared object.
        let derived = Derived(id: 7, extra: "shared")
        let data = try Archive.encode(BaseHolder(items: [derived, derived, derived]))
        let items = try Archive.decode(BaseHolder.self, from: data).items.compactMap { $0 as? Derived }
        #expect(items.count == 3)
        #expect(items.allSatisfy { $0 === items[0] && $0.extra == "shared" && $0.id == 7 })
    }

    @Test func codableValuesRoundTrip() throws {
        let value = CodableKinds()
        let copy = try Archive.decode(CodableKinds.self, from: Archive.encode(value))
        #expect(copy == value)
    }

    @Test func codableGraphKeepsBackReferences() throws {
        let box = Mailbox(owner: "alice", letters: (0..<5).map { Note(text: "note \($0)") })
        for note in box.letters { note.mailbox = box }
        let copy = try Archive.decode(Mailbox.self, from: Archive.encode(box))
        #expect(copy.letters.map(\.text) == box.letters.map(\.text))
        #expect(copy.letters.allSatisfy { $0.mailbox === copy })
    }

    @Test func codableSharedInstancesStayShared() throws {
        let note = Note(text: "shared")
        let copy = try Archive.decode([Note].self, from: Archive.encode([note, note]))
        #expect(copy[0] === copy[1])
    }

    @Test func fieldsAreFoundWhateverTheKeyTable() throws {
        let values = [
            SparseFields(a: nil, b: "x", c: nil), SparseFields(a: 1, b: "y", c: true),
            SparseFields(a: 2, b: nil, c: false), SparseFields(),
        ]
        let sequence = values + values.reversed()
        // One archive each: a key table holds only the keys its value uses (`b` is key 0,
        // then key 1), and archives decode one after another on the same thread's decoder.
        for value in sequence {
            #expect(try Archive.decode(SparseFields.self, from: Archive.encode(value)) == value)
        }
        // One archive: records lack keys the records before them used, and have new ones.
        #expect(try Archive.decode([SparseFields].self, from: Archive.encode(sequence)) == sequence)
    }

    @Test func fieldsDecodeInAnyOrderWithAnyKeys() throws {
        let values = (0..<6).map { ReorderedFields(first: $0, second: "s\($0)", third: $0 % 3 == 0 ? nil : Double($0)) }
        #expect(try Archive.decode([ReorderedFields].self, from: Archive.encode(values)) == values)
        for value in values {
            #expect(try Archive.decode(ReorderedFields.self, from: Archive.encode(value)) == value)
        }
    }

    @Test func aMissingFieldStillThrowsKeyNotFound() throws {
        // `b` is in the key table (the first records have it) but not in the last record; from
        // the second model on, the decoder looks keys up by the index they were found under.
        let data = try Archive.encode([
            SparseFields(a: 1, b: "x", c: nil), SparseFields(a: 2, b: "y", c: nil), SparseFields(a: 3, b: nil, c: nil),
        ])
        struct NeedsB: Codable, Archivable {
            static var archiveTypeName: String { SparseFields.archiveTypeName }
            var a: Int
            var b: String
        }
        let error = #expect(throws: ArchiveError.self) { try Archive.decode([NeedsB].self, from: data) }
        #expect(error?.code == .keyNotFound)
        let first = try Archive.decode([SparseFields].self, from: data)
        #expect(first.map(\.b) == ["x", "y", nil])
    }

    @Test func superEncoderRoundTrips() throws {
        let copy = try Archive.decode(Derived.self, from: Archive.encode(Derived(id: 7, extra: "x")))
        #expect(copy.id == 7 && copy.extra == "x")
    }

    @Test func backReferenceEncodesAsNilInJSON() throws {
        let box = Mailbox(owner: "bob", letters: [Note(text: "hi")])
        box.letters[0].mailbox = box
        let json = try JSONDecoder().decode(Mailbox.self, from: JSONEncoder().encode(box))
        #expect(json.letters[0].mailbox == nil)
        #expect(json.letters[0].text == "hi")
    }

    @Test func handWrittenAndCodableModelsNest() throws {
        struct Envelope: Codable, Archivable {
            var kinds: AllKindsBox
            var priority: Priority
        }
        let envelope = Envelope(kinds: AllKindsBox(), priority: .low)
        let copy = try Archive.decode(Envelope.self, from: Archive.encode(envelope))
        #expect(copy.kinds.value == AllKinds())
        #expect(copy.priority == .low)
    }
}

/// A Codable wrapper around the hand-written ``AllKinds``, to nest one style inside the other.
struct AllKindsBox: Codable, Archivable {
    var value = AllKinds()
    init() {}
    init(from decoder: any Decoder) throws {
        guard let archive = (decoder as? CodableArchiveDecoder)?.archive else {
            throw ArchiveError(.invalidValue, "archive only")
        }
        value = try archive.decodeSingleValue(AllKinds.self)
    }
    func encode(to encoder: any Encoder) throws {
        guard let codable = encoder as? CodableArchiveEncoder else { throw ArchiveError(.invalidValue, "archive only") }
        try codable.archive.encodeSingleValue(value)
    }
}

@Suite struct ArchiveCodableFoundationTypesTests {
    struct Priced: Codable, Archivable, Equatable {
        var price: Decimal?
        var tags: Set<String>
        var components: DateComponents
    }

    @Test func foundationCodableTypesRoundTrip() throws {
        let value = Priced(
            price: Decimal(string: "19.99"),
            tags: ["a"],
            components: DateComponents(year: 2026, month: 11)
        )
        #expect(try Archive.decode(Priced.self, from: Archive.encode(value)) == value)
    }
}
