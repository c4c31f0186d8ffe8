import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// An NSSecureCoding class Foundation decodes from archives our writer produced.
final class WireNote: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let title: String
    let count: Int64
    let flag: Bool
    let score: Double
    let tags: [String]
    let next: WireNote?

    required init?(coder: NSCoder) {
        guard let title = coder.decodeObject(of: NSString.self, forKey: "title") as String? else { return nil }
        self.title = title
        count = coder.decodeInt64(forKey: "count")
        flag = coder.decodeBool(forKey: "flag")
        score = coder.decodeDouble(forKey: "score")
        tags = (coder.decodeObject(of: [NSArray.self, NSString.self], forKey: "tags") as? [String]) ?? []
        next = coder.decodeObject(of: WireNote.self, forKey: "next")
    }

    func encode(with coder: NSCoder) {}
}

/// The same shape as `WireNote`, written by our NSCoder-shaped API.
struct KeyedNote: KeyedArchiveEncodable {
    var title: String
    var count: Int64
    var flag: Bool
    var score: Double
    var tags: [String]
    var next: [KeyedNote] = []  // at most one: a recursive optional through an array keeps the struct finite

    var keyedArchiveClassChain: [String] { [NSStringFromClass(WireNote.self), "NSObject"] }

    func encode(with archiver: KeyedArchiveArchiver) throws {
        try archiver.encodeObject(title, forKey: "title")
        archiver.encode(count, forKey: "count")
        archiver.encode(flag, forKey: "flag")
        archiver.encode(score, forKey: "score")
        try archiver.encodeObject(tags, forKey: "tags")
        try archiver.encodeObject(next.first, forKey: "next")
    }
}

/// The same shape as `WireNote`, written by the Encoder.
struct KeyedCodableNote: Codable, Equatable, KeyedArchiveClassNamed {
    static var keyedArchiveClassChain: [String] { [NSStringFromClass(WireNote.self), "NSObject"] }
    var title: String
    var count: Int64
    var flag: Bool
    var score: Double
    var tags: [String]
}

/// A class graph with a cycle, written by our API and read by our reader.
final class KeyedRing: KeyedArchiveEncodable {
    let name: String
    var next: KeyedRing?
    init(name: String) { self.name = name }
    var keyedArchiveClassChain: [String] { ["Ring", "NSObject"] }
    func encode(with archiver: KeyedArchiveArchiver) throws {
        try archiver.encodeObject(name, forKey: "name")
        try archiver.encodeObject(next, forKey: "next")
    }
}

@Suite struct KeyedArchiveWriterTests {
    /// Decodes with Foundation's NSKeyedUnarchiver directly (not the bridge).
    static func foundationRoot(_ data: Data, _ classes: [AnyClass] = []) throws -> Any? {
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        unarchiver.requiresSecureCoding = false
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        defer { unarchiver.finishDecoding() }
        return unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
    }

    @Test func everyValueClassIsReadByFoundation() throws {
        let date = Date(timeIntervalSinceReferenceDate: 123_456.5)
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let relative = URL(string: "file.txt", relativeTo: URL(string: "https://example.com/dir/"))!
        #expect(try Self.foundationRoot(try KeyedArchiveWriter.archive("héllo ✉︎")) as? String == "héllo ✉︎")
        #expect(
            try Self.foundationRoot(try KeyedArchiveWriter.archive(-1_234_567_890_123)) as? Int == -1_234_567_890_123
        )
        #expect(try Self.foundationRoot(try KeyedArchiveWriter.archive(2.5)) as? Double == 2.5)
        #expect(try Self.foundationRoot(try KeyedArchiveWriter.archive(true)) as? Bool == true)
        #expect(
            try Self.foundationRoot(try KeyedArchiveWriter.archive(Data([0, 1, 255]))) as? Data == Data([0, 1, 255])
        )
        #expect(try Self.foundationRoot(try KeyedArchiveWriter.archive(date)) as? Date == date)
        #expect(try Self.foundationRoot(try KeyedArchiveWriter.archive(uuid)) as? UUID == uuid)
        let url = try #require(try Self.foundationRoot(try KeyedArchiveWriter.archive(relative)) as? NSURL)
        #expect(url.absoluteString == "https://example.com/dir/file.txt")
        #expect(url.relativeString == "file.txt")
        #expect(url.baseURL?.absoluteString == "https://example.com/dir/")
        #expect(try Self.foundationRoot(try KeyedArchiveWriter.archive(["a", "b"])) as? [String] == ["a", "b"])
        #expect(try Self.foundationRoot(try KeyedArchiveWriter.archive(Set([1, 2, 3]))) as? Set<Int> == [1, 2, 3])
        #expect(
            try Self.foundationRoot(try KeyedArchiveWriter.archive(["k": 1, "j": 2])) as? [String: Int] == [
                "k": 1, "j": 2,
            ]
        )
        #expect(try Self.foundationRoot(try KeyedArchiveWriter.archive(KeyedArchiveNull())) is NSNull)
        let nested = try #require(try Self.foundationRoot(try KeyedArchiveWriter.archive([["x": [date]]])) as? NSArray)
        #expect(((nested[0] as? NSDictionary)?["x"] as? NSArray)?[0] as? Date == date)
    }

    @Test func customClassIsReadByFoundation() throws {
        let note = KeyedNote(
            title: "first",
            count: 42,
            flag: true,
            score: 0.5,
            tags: ["a", "b"],
            next: [KeyedNote(title: "second", count: -1, flag: false, score: 2, tags: [])]
        )
        let data = try KeyedArchiveWriter.archive(note)
        let decoded = try #require(try Self.foundationRoot(data) as? WireNote)
        #expect(decoded.title == "first" && decoded.count == 42 && decoded.flag && decoded.score == 0.5)
        #expect(decoded.tags == ["a", "b"])
        #expect(decoded.next?.title == "second" && decoded.next?.count == -1 && decoded.next?.next == nil)
        // The bridge (validator, then Foundation) accepts it too.
        let viaBridge = try KeyedArchiverBridge.unarchive(WireNote.self, from: data)
        #expect(viaBridge.next?.title == "second")
    }

    @Test func codableStructIsReadByFoundationAsItsClass() throws {
        let note = KeyedCodableNote(title: "coded", count: 7, flag: true, score: 1.25, tags: ["t"])
        let data = try KeyedArchiveWriter.encode(note)
        let decoded = try #require(try Self.foundationRoot(data) as? WireNote)
        #expect(
            decoded.title == "coded" && decoded.count == 7 && decoded.flag && decoded.score == 1.25
                && decoded.tags == ["t"]
        )
        #expect(try KeyedArchive.decode(KeyedCodableNote.self, from: data) == note)
    }

    @Test func codableWithoutClassNameIsAnNSDictionary() throws {
        struct Plain: Codable, Equatable {
            var name: String
            var values: [Int]
            var when: Date
            var nested: [String: Double]
            var missing: String?
        }
        let plain = Plain(
            name: "p",
            values: [1, 2],
            when: Date(timeIntervalSinceReferenceDate: 5),
            nested: ["x": 1.5],
            missing: nil
        )
        let data = try KeyedArchiveWriter.encode(plain)
        let dictionary = try #require(try Self.foundationRoot(data) as? NSDictionary)
        #expect(dictionary["name"] as? String == "p")
        #expect(dictionary["values"] as? [Int] == [1, 2])
        #expect(dictionary["when"] as? Date == Date(timeIntervalSinceReferenceDate: 5))
        #expect((dictionary["nested"] as? NSDictionary)?["x"] as? Double == 1.5)
        #expect(try KeyedArchive.decode(Plain.self, from: data) == plain)
    }

    /// Cycles are written as references back; our reader keeps them. (Foundation on Linux cannot
    /// decode a cycle through init(coder:), so the bridge refuses it rather than crash.)
    @Test func cyclesAreWrittenAsReferences() throws {
        let first = KeyedRing(name: "a")
        let second = KeyedRing(name: "b")
        first.next = second
        second.next = first
        defer { second.next = nil }  // break the cycle, or LeakSanitizer reports the pair
        let data = try KeyedArchiveWriter.archive(first)
        let archive = try KeyedArchive(data: data)
        let root = try #require(archive.root)
        guard case .instance(let a) = archive[root], case .reference(let toB)? = a.fields["next"],
            case .instance(let b) = archive[toB], case .reference(let back)? = b.fields["next"]
        else {
            Issue.record("unexpected shape")
            return
        }
        #expect(back == root)
        #expect(archive.objects.count == 6)  // $null, a, "a", class, b, "b"
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.validate(data, allowedClassNames: ["Ring"])
        }
        #expect(error.code == .unresolvedReference, "\(error)")
    }

    @Test func sharedInstancesAreWrittenOnce() throws {
        let shared = KeyedRing(name: "shared")
        let data = try KeyedArchiveWriter.archive([shared, shared])
        let archive = try KeyedArchive(data: data)
        guard case .array(let elements) = archive[try #require(archive.root)] else {
            Issue.record("not an array")
            return
        }
        #expect(elements.count == 2 && elements[0] == elements[1])
    }

    @Test func writingIsBounded() throws {
        var limits = ArchiveLimits()
        limits.maxDepth = 50
        let nested = (0..<60).reduce(KeyedRing(name: "0")) { inner, level in
            let outer = KeyedRing(name: "\(level)")
            outer.next = inner
            return outer
        }
        let depth = try #require(throws: ArchiveError.self) { try KeyedArchiveWriter.archive(nested, limits: limits) }
        #expect(depth.code == .limitExceeded(.depth))
        limits = ArchiveLimits()
        limits.maxObjectCount = 10
        let count = try #require(throws: ArchiveError.self) {
            try KeyedArchiveWriter.archive(Array(0..<100), limits: limits)
        }
        #expect(count.code == .limitExceeded(.objectCount))
    }

    /// The writer honours `maxTotalBytes` as the reader does: an archive it would write larger
    /// than the limit is refused, and one the limit allows is exactly what the reader accepts.
    @Test func writingHonoursMaxTotalBytes() throws {
        let strings = (0..<200).map { "string number \($0)" }
        let writes: [(String, (ArchiveLimits) throws -> Data)] = [
            ("encode", { try KeyedArchiveWriter.encode(strings, limits: $0) }),
            ("archive", { try KeyedArchiveWriter.archive(strings, limits: $0) }),
        ]
        for (name, write) in writes {
            let size = try write(ArchiveLimits()).count
            var limits = ArchiveLimits()
            limits.maxTotalBytes = size
            let data = try write(limits)
            #expect(data.count == size, "\(name)")
            #expect(try KeyedArchive.decode([String].self, from: data, limits: limits) == strings, "\(name)")
            limits.maxTotalBytes = size - 1
            let error = #expect(throws: ArchiveError.self, "\(name)") { try write(limits) }
            #expect(error?.code == .limitExceeded(.totalBytes), "\(name): \(String(describing: error))")
        }
        // A single value larger than the limit.
        var limits = ArchiveLimits()
        limits.maxTotalBytes = 1_000
        let large = #expect(throws: ArchiveError.self) {
            try KeyedArchiveWriter.encode(Data(count: 4_096), limits: limits)
        }
        #expect(large?.code == .limitExceeded(.totalBytes))
    }

    /// Found by the reader's libFuzzer target (its round trip of `[Double?]`): `Optional`'s
    /// `encode(to:)` called the single-value container's `encodeNil()`, which wrote a new
    /// object holding the string "$null" instead of the `$null` reference (UID 0), so the
    /// element read back as that string. Foundation must still read the archive.
    @Test func nilElementsOfAnUnkeyedContainerReadBackAsNil() throws {
        let data = try KeyedArchiveWriter.encode([1.5, nil, 2] as [Double?])
        #expect(try KeyedArchive.decode([Double?].self, from: data) == [1.5, nil, 2])
        let strings = try KeyedArchiveWriter.encode(["a", nil, "c"] as [String?])
        #expect(try KeyedArchive.decode([String?].self, from: strings) == ["a", nil, "c"])
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: strings)
        unarchiver.requiresSecureCoding = false
        // An NSArray cannot hold nil: corelibs' unarchiver reads the `$null` element as absent.
        let array = unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey) as? NSArray
        #expect(array?.compactMap { $0 as? String } == ["a", "c"])
    }
}
