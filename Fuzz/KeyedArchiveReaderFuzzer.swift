// libFuzzer target for the pure-Swift keyed-archive reader (no NSKeyedUnarchiver involved).
// Build and run with `Fuzz/run.sh reader`.
//
// Each input is parsed as a property list (binary or XML, whichever it claims to be) into the
// object table (`KeyedArchive(data:limits:)`), then decoded four ways: every container walked
// through the `Decoder` (`FuzzReaderAnyValue`), a concrete Codable struct (`FuzzReaderNote`),
// the NSCoder-shaped API on a concrete type (`FuzzReaderCoderNote`) and on every object of the
// table (`FuzzReaderAnyObject`), and every `NSURL` resolved. A note that decodes is written
// again by `KeyedArchiveWriter` and must read back to the same bytes when written once more.
// Anything but a value or an `ArchiveError` — a trap, an ASan report, a hang, an allocation over
// libFuzzer's limit, a non-typed error — is a finding. The seed corpus is the 28 fixtures of
// `shared/fixtures/nskeyedarchiver` (copied by `run.sh`) plus `readerFuzzerSeeds()`.

import Foundation

/// A Codable model of every value kind the reader's `Decoder` produces, nested through `replies`.
struct FuzzReaderNote: Codable {
    var title: String
    var count: Int
    var ratio: Double
    var pinned: Bool
    var created: Date
    var payload: Data
    var link: URL?
    var id: UUID?
    var tags: [String]
    /// Not `[Double?]`: the writer writes a `nil` element as the string "$null" (a known issue,
    /// `KeyedArchiveWriterTests.nilElementsOfAnUnkeyedContainerReadBackAsNil`), so the round trip
    /// below would report it on every input holding one.
    var scores: [Double]
    var replies: [FuzzReaderNote]

    enum CodingKeys: String, CodingKey {
        case title, count, ratio, pinned, created, payload, link, id, tags, scores, replies
    }
}

/// The same note written as a class instance (numbers inline), for the class-named Codable path.
struct FuzzReaderNamedNote: Encodable, KeyedArchiveClassNamed {
    static let keyedArchiveClassChain = ["FuzzReaderNote", "NSObject"]
    var note: FuzzReaderNote

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FuzzReaderNote.CodingKeys.self)
        try container.encode(note.title, forKey: .title)
        try container.encode(note.count, forKey: .count)
        try container.encode(note.ratio, forKey: .ratio)
        try container.encode(note.pinned, forKey: .pinned)
        try container.encode(note.created, forKey: .created)
        try container.encode(note.payload, forKey: .payload)
        try container.encodeIfPresent(note.link, forKey: .link)
        try container.encodeIfPresent(note.id, forKey: .id)
        try container.encode(note.tags, forKey: .tags)
        try container.encode(note.scores, forKey: .scores)
        try container.encode(note.replies, forKey: .replies)
    }
}

/// The note read through the NSCoder-shaped API, as an `init?(coder:)` would.
struct FuzzReaderCoderNote: KeyedArchiveDecodable, KeyedArchiveEncodable {
    var keyedArchiveClassChain: [String] { ["FuzzReaderCoderNote", "NSObject"] }
    var title: String
    var count: Int
    var small: Int32
    var big: Int64
    var ratio: Double
    var fraction: Float
    var pinned: Bool
    var bytes: Data?
    var created: Date?
    var link: URL?
    var id: UUID?
    var tags: [String]
    var table: [String: Int]
    var reply: [FuzzReaderCoderNote]

    init(title: String, reply: [FuzzReaderCoderNote]) {
        self.title = title
        count = 42
        small = -7
        big = .max
        ratio = 2.5
        fraction = 0.25
        pinned = true
        bytes = Data([0, 1, 2, 255])
        created = Date(timeIntervalSinceReferenceDate: 123_456.5)
        link = URL(string: "https://www.swift.org/index.xml")
        id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        tags = ["a", "ü", ""]
        table = ["one": 1, "two": 2]
        self.reply = reply
    }

    init(from unarchiver: KeyedArchiveUnarchiver) throws {
        title = try unarchiver.decodeRequiredObject(of: String.self, forKey: "title")
        count = try unarchiver.decodeInteger(forKey: "count")
        small = try unarchiver.decodeInt32(forKey: "small")
        big = try unarchiver.decodeInt64(forKey: "big")
        ratio = try unarchiver.decodeDouble(forKey: "ratio")
        fraction = try unarchiver.decodeFloat(forKey: "fraction")
        pinned = try unarchiver.decodeBool(forKey: "pinned")
        bytes = try unarchiver.decodeBytes(forKey: "bytes")
        created = try unarchiver.decodeObject(of: Date.self, forKey: "created")
        link = try unarchiver.decodeObject(of: URL.self, forKey: "link")
        id = try unarchiver.decodeObject(of: UUID.self, forKey: "id")
        tags = try unarchiver.decodeObject(of: [String].self, forKey: "tags") ?? []
        table = try unarchiver.decodeObject(of: [String: Int].self, forKey: "table") ?? [:]
        reply = try unarchiver.decodeObject(of: [FuzzReaderCoderNote].self, forKey: "reply") ?? []
    }

    func encode(with archiver: KeyedArchiveArchiver) throws {
        try archiver.encodeObject(title, forKey: "title")
        archiver.encode(count, forKey: "count")
        archiver.encode(small, forKey: "small")
        archiver.encode(big, forKey: "big")
        archiver.encode(ratio, forKey: "ratio")
        archiver.encode(fraction, forKey: "fraction")
        archiver.encode(pinned, forKey: "pinned")
        if let bytes { archiver.encodeBytes(bytes, forKey: "bytes") }
        try archiver.encodeObject(created, forKey: "created")
        try archiver.encodeObject(link, forKey: "link")
        try archiver.encodeObject(id, forKey: "id")
        try archiver.encodeObject(tags, forKey: "tags")
        // `table` is not written: a dictionary's order is its hash order, and `rewrite` compares bytes.
        try archiver.encodeObject(reply, forKey: "reply")
    }
}

/// Any object read through the NSCoder-shaped API: every field with the method its kind calls
/// for (and the scalar methods on every field, which must throw `.typeMismatch`, not trap),
/// every referenced object recursively, every element of a collection.
struct FuzzReaderAnyObject: KeyedArchiveDecodable {
    init(from unarchiver: KeyedArchiveUnarchiver) throws {
        _ = unarchiver.classChain
        switch unarchiver.object {
        case .array, .set, .orderedSet:
            _ = try? unarchiver.decodeElements(of: FuzzReaderAnyObject.self)
            _ = try? unarchiver.decodeElements(of: String.self)
        case .dictionary:
            _ = try? [String: FuzzReaderAnyObject](from: unarchiver)
        case .instance(let instance):
            for key in instance.fields.keys.sorted() {
                _ = unarchiver.containsValue(forKey: key)
                _ = try? unarchiver.decodeBool(forKey: key)
                _ = try? unarchiver.decodeInteger(forKey: key)
                _ = try? unarchiver.decodeInt32(forKey: key)
                _ = try? unarchiver.decodeFloat(forKey: key)
                _ = try? unarchiver.decodeBytes(forKey: key)
                if case .reference? = unarchiver.field(forKey: key) {
                    _ = try? unarchiver.decodeObject(of: FuzzReaderAnyObject.self, forKey: key)
                    _ = try? unarchiver.decodeObject(of: Date.self, forKey: key)
                    _ = try? unarchiver.decodeObject(of: URL.self, forKey: key)
                    _ = try? unarchiver.decodeObject(of: UUID.self, forKey: key)
                    _ = try? unarchiver.decodeObject(of: [Double].self, forKey: key)
                }
            }
        default:
            _ = try? String(from: unarchiver)
            _ = try? Double(from: unarchiver)
            _ = try? Int64(from: unarchiver)
            _ = try? Data(from: unarchiver)
        }
    }
}

/// Decodes whatever the archive holds through the `Decoder`, walking every container.
struct FuzzReaderAnyValue: Decodable {
    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: AnyKey.self) {
            for key in container.allKeys {
                _ = container.contains(key)
                _ = try? container.decodeNil(forKey: key)
                _ = try? container.decode(FuzzReaderAnyValue.self, forKey: key)
                _ = try? container.decode(Int8.self, forKey: key)
                _ = try? container.decode(UInt64.self, forKey: key)
            }
            return
        }
        if var container = try? decoder.unkeyedContainer() {
            _ = container.count
            while !container.isAtEnd, (try? container.decode(FuzzReaderAnyValue.self)) != nil {}
            return
        }
        let single = try decoder.singleValueContainer()
        _ = single.decodeNil()
        _ = try? single.decode(String.self)
        _ = try? single.decode(Double.self)
        _ = try? single.decode(Float.self)
        _ = try? single.decode(Int.self)
        _ = try? single.decode(UInt8.self)
        _ = try? single.decode(Bool.self)
        _ = try? single.decode(Date.self)
        _ = try? single.decode(Data.self)
        _ = try? single.decode(URL.self)
        _ = try? single.decode(UUID.self)
    }
}

/// Archives of the models above, by the pure-Swift writer and by `NSKeyedArchiver` in binary
/// and XML form (the fixtures are mostly binary; these give the XML reader real archives).
func readerFuzzerSeeds() throws -> [(name: String, data: Data)] {
    let date = Date(timeIntervalSinceReferenceDate: 123_456.5)
    let reply = FuzzReaderNote(
        title: "re",
        count: -1,
        ratio: -0.0,
        pinned: false,
        created: date,
        payload: Data(),
        link: nil,
        id: nil,
        tags: [],
        scores: [],
        replies: []
    )
    let note = FuzzReaderNote(
        title: "Dear Bob ✉︎",
        count: 1 << 40,
        ratio: 1.5,
        pinned: true,
        created: date,
        payload: Data((0..<32).map { UInt8($0) }),
        link: URL(string: "index.xml", relativeTo: URL(string: "https://www.swift.org/")),
        id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
        tags: ["a", "b", "a"],
        scores: [1, -.infinity, .infinity],
        replies: [reply, reply]
    )
    let coderNote = FuzzReaderCoderNote(title: "outer", reply: [FuzzReaderCoderNote(title: "inner", reply: [])])
    var seeds: [(name: String, data: Data)] = [
        ("codable-note", try KeyedArchiveWriter.encode(note)),
        ("codable-named-note", try KeyedArchiveWriter.encode(FuzzReaderNamedNote(note: note))),
        ("coder-note", try KeyedArchiveWriter.archive(coderNote)),
        ("strings", try KeyedArchiveWriter.archive(["x": ["y", "z"], "w": []])),
    ]
    let values: [(String, NSObject & NSSecureCoding)] = [
        (
            "array",
            NSArray(array: [
                "a", 1, 2.5, true, NSArray(array: ["inner"]), NSNull(), NSDate(timeIntervalSinceReferenceDate: 1),
            ])
        ),
        (
            "dictionary",
            NSDictionary(dictionary: ["k": "v", "n": 3, "nested": NSDictionary(dictionary: ["x": Data([1, 2])])])
        ),
        ("set", NSSet(array: [1, 2, "three"])),
        ("ordered-set", NSOrderedSet(array: [1, "two", 3.5])),
        (
            "url",
            NSURL(string: "index.xml", relativeTo: URL(string: "https://www.swift.org/"))
                ?? NSURL(fileURLWithPath: "/tmp")
        ),
        ("uuid", NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? NSUUID()),
    ]
    for (name, object) in values {
        for (suffix, format) in [("binary", PropertyListSerialization.PropertyListFormat.binary), ("xml", .xml)] {
            let archiver = NSKeyedArchiver(requiringSecureCoding: true)
            archiver.outputFormat = format
            archiver.encode(object, forKey: NSKeyedArchiveRootObjectKey)
            archiver.finishEncoding()
            seeds.append(("foundation-\(name)-\(suffix)", archiver.encodedData))
        }
    }
    return seeds
}

/// With `ARCHIVIST_FUZZ_WRITE_SEEDS=<folder>`, writes the generated seeds there and exits.
@_cdecl("LLVMFuzzerInitialize")
public func readerFuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>
) -> Int32 {
    guard let folder = ProcessInfo.processInfo.environment["ARCHIVIST_FUZZ_WRITE_SEEDS"] else { return 0 }
    do {
        for (name, data) in try readerFuzzerSeeds() {
            try data.write(to: URL(fileURLWithPath: folder).appendingPathComponent("generated-\(name).plist"))
            // The seeds of the models must decode, or the round trip below is never reached.
            let archive = try KeyedArchive(data: data, limits: readerFuzzLimits)
            if name.hasPrefix("codable-") {
                try rewrite(try archive.decode(FuzzReaderNote.self), as: FuzzReaderNote.self) {
                    try KeyedArchiveWriter.encode($0, limits: readerFuzzLimits)
                }
            } else if name == "coder-note" {
                try rewrite(try archive.unarchive(FuzzReaderCoderNote.self), as: FuzzReaderCoderNote.self) {
                    try KeyedArchiveWriter.archive($0, limits: readerFuzzLimits)
                }
            }
        }
    } catch {
        fatalError("could not write or read back the seeds: \(error)")
    }
    exit(0)
}

/// High enough for every seed, low enough that an input sharing objects along many paths stops
/// within a few thousand decoded values (at 20,000 such inputs cost about 10 ms each and
/// libFuzzer ran 300 inputs a second instead of thousands).
private let readerFuzzLimits: ArchiveLimits = {
    var limits = ArchiveLimits()
    limits.maxObjectCount = 4_096
    limits.maxElementCount = 4_096
    limits.maxDepth = 64
    return limits
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func readerFuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let start else { return 0 }
    let data = Data(UnsafeBufferPointer(start: start, count: count))
    do {
        let archive = try KeyedArchive(data: data, limits: readerFuzzLimits)
        _ = try? archive.decode(FuzzReaderAnyValue.self)
        _ = try? archive.unarchive(FuzzReaderAnyObject.self)
        for (index, object) in archive.objects.enumerated() {
            if case .url = object { _ = try? archive.url(at: KeyedArchiveReference(index)) }
        }
        if let note = try? archive.decode(FuzzReaderNote.self) {
            try rewrite(note, as: FuzzReaderNote.self) { try KeyedArchiveWriter.encode($0, limits: readerFuzzLimits) }
        }
        if let note = try? archive.unarchive(FuzzReaderCoderNote.self) {
            try rewrite(note, as: FuzzReaderCoderNote.self) {
                try KeyedArchiveWriter.archive($0, limits: readerFuzzLimits)
            }
        }
    } catch is ArchiveError {
        // The contract: a typed error.
    } catch {
        fatalError("an error that is not an ArchiveError escaped: \(error)")
    }
    return 0
}

/// Writes a decoded value, reads it back and writes it again: the writer's output must be
/// readable, and reading must lose nothing the writer wrote (the two archives are the same bytes).
/// A value the writer refuses (a typed error) is fine; it came from hostile bytes.
private func rewrite<T>(_ value: T, as type: T.Type, write: (T) throws -> Data) throws {
    guard let first = try? write(value) else { return }
    let archive: KeyedArchive
    do {
        archive = try KeyedArchive(data: first, limits: readerFuzzLimits)
    } catch {
        fatalError("the writer's archive of a decoded \(T.self) does not read back: \(error)")
    }
    let copy: T
    do {
        if let codable = T.self as? any Decodable.Type {
            copy = try archive.decode(codable) as! T
        } else if let coded = T.self as? any KeyedArchiveDecodable.Type {
            copy = try archive.unarchive(coded) as! T
        } else {
            return
        }
    } catch {
        fatalError("the writer's archive of a decoded \(T.self) does not decode: \(error)")
    }
    let second: Data
    do {
        second = try write(copy)
    } catch {
        fatalError("a \(T.self) read from the writer's archive does not write again: \(error)")
    }
    if second != first {
        fatalError("\(T.self) changed in a write-read-write round trip (\(first.count) → \(second.count) bytes)")
    }
}
