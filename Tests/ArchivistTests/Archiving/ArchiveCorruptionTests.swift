import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// Breaks the `next` links of a decoded node chain (cycles included) so it can be freed.
func unlinkNodes(_ node: Node) {
    var seen = Set<ObjectIdentifier>()
    var current: Node? = node
    while let link = current, seen.insert(ObjectIdentifier(link)).inserted {
        current = link.next
        link.next = nil
    }
}

/// Sample archives of every shape, used by the corruption tests and the fuzz loop. Each one is
/// decoded as the type it holds, so every decoder path (hand-written records, Codable, shared
/// and deferred references, polymorphism, collections) sees the mutations.
enum SampleArchives {
    /// The names of the samples, in the order ``all()`` returns them.
    static let names = ["allKinds", "codable", "letters", "selfLoop", "strings", "animals", "dictionary"]

    static func all() throws -> [(name: String, data: Data)] {
        let user = makeUser(3, letters: 4)
        let loop = Node("loop")
        loop.next = loop
        let dog = Dog(name: "Rex", goodBoy: true)
        let samples: [(String, Data)] = [
            ("allKinds", try Archive.encode(AllKinds())),
            ("codable", try Archive.encode(CodableKinds())),
            ("letters", try Archive.encode([user])),
            ("selfLoop", try Archive.encode(loop)),
            ("strings", try Archive.encode(["a", "bb", "ccc"])),
            ("animals", try Archive.encode([Animal(name: "generic"), dog, dog])),
            ("dictionary", try Archive.encode(["one": [1.5, -2], "none": [], "many": [0, 1e300, -0.0]])),
        ]
        loop.next = nil
        return samples
    }

    /// The sample called `name`.
    static func data(_ name: String) throws -> Data {
        guard let sample = try all().first(where: { $0.name == name }) else {
            throw ArchiveError(.invalidValue, "no sample archive named \(name)")
        }
        return sample.data
    }

    /// Decodes `data` as the type the named sample holds.
    static func decode(_ name: String, _ data: Data) throws {
        switch name {
        case "allKinds": _ = try Archive.decode(AllKinds.self, from: data)
        case "codable": _ = try Archive.decode(CodableKinds.self, from: data)
        case "letters": _ = try Archive.decode([User].self, from: data)
        case "selfLoop": unlinkNodes(try Archive.decode(Node.self, from: data))
        case "animals":
            _ = try Archive.decode([Animal].self, from: data, options: ArchiveOptions(allowedTypes: [Dog.self]))
        case "dictionary": _ = try Archive.decode([String: [Double]].self, from: data)
        default: _ = try Archive.decode([String].self, from: data)
        }
    }
}

@Suite struct ArchiveCorruptionTests {
    @Test func everyTruncationThrows() throws {
        for (name, data) in try SampleArchives.all() {
            for length in 0..<data.count {
                let error = #expect(throws: ArchiveError.self, "\(name) cut at \(length)") {
                    try SampleArchives.decode(name, data.prefix(length))
                }
                #expect(error?.code == .truncated || error?.code == .badMagic, "\(name) cut at \(length)")
            }
        }
    }

    @Test func appendedBytesAreCorrupt() throws {
        let data = try Archive.encode("x") + Data([0])
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(String.self, from: data) }
        #expect(error?.code == .corrupt)
    }

    @Test func flippedBitsAreCaughtByTheChecksum() throws {
        let seed: UInt64 = 0xA5C1_7E57
        var rng = SplitMix64(seed: seed)
        for (name, data) in try SampleArchives.all() {
            for _ in 0..<600 {
                var bytes = [UInt8](data)
                let index = Int.random(in: try bodyStart(bytes)..<bytes.count, using: &rng)
                bytes[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
                let error = #expect(throws: ArchiveError.self, "seed \(seed) \(name) byte \(index)") {
                    try SampleArchives.decode(name, Data(bytes))
                }
                #expect(error?.code == .checksumMismatch, "seed \(seed) \(name) byte \(index)")
            }
        }
    }

    @Test func badMagicAndVersionAreReported() throws {
        var bytes = [UInt8](try Archive.encode(1))
        bytes[0] = 0x50
        #expect(throws: ArchiveError.self) { try Archive.decode(Int.self, from: Data(bytes)) }
        bytes[0] = 0x89
        bytes[4] = 9
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(Int.self, from: Data(bytes)) }
        #expect(error?.code == .unsupportedVersion)
        let json = Data(#"{"a":1}"#.utf8)
        let notArchive = #expect(throws: ArchiveError.self) { try Archive.decode(Int.self, from: json) }
        #expect(notArchive?.code == .badMagic)
    }

    /// How many checksum-valid mutations each sample gets: 7 samples × 15,000 = 105,000 in all,
    /// run as one test per sample so they spread over the cores.
    static let mutationsPerSample = 15_000

    /// Mutations after the checksum is recomputed reach the structural checks: any result is
    /// fine except a crash, a hang or an error that is not an `ArchiveError`.
    @Test(arguments: SampleArchives.names)
    func mutatedArchivesWithValidChecksumsNeverCrash(_ name: String) throws {
        // One seed per sample, so a failure names a case that reruns alone.
        let seed = 0x5EED_0001 &+ UInt64(try #require(SampleArchives.names.firstIndex(of: name)))
        var rng = SplitMix64(seed: seed)
        let data = try SampleArchives.data(name)
        var decoded = 0
        var rejected = 0
        for round in 0..<Self.mutationsPerSample {
            var bytes = [UInt8](data)
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let index = Int.random(in: try bodyStart(bytes)..<bytes.count, using: &rng)
                bytes[index] = UInt8.random(in: 0...255, using: &rng)
            }
            resign(&bytes)
            do {
                try SampleArchives.decode(name, Data(bytes))
                decoded += 1
            } catch is ArchiveError {
                rejected += 1
            } catch {
                Issue.record("seed \(seed) \(name) round \(round): untyped error \(error)")
            }
        }
        #expect(decoded + rejected == Self.mutationsPerSample, "seed \(seed) \(name)")
        #expect(rejected > Self.mutationsPerSample / 2, "seed \(seed) \(name): most random mutations must be rejected")
    }

    @Test func hugeClaimedCountsDoNotAllocate() throws {
        // An array header claiming 2^32-1 elements in a tiny archive.
        var bytes = [UInt8](try Archive.encode([1, 2, 3]))
        let countOffset = try bodyStart(bytes) + 5
        for i in 0..<4 { bytes[countOffset + i] = 0xFF }
        resign(&bytes)
        let error = #expect(throws: ArchiveError.self) { try Archive.decode([Int].self, from: Data(bytes)) }
        #expect(error?.code == .corrupt || error?.code == .limitExceeded(.elementCount))
    }

    /// A count under ``ArchiveLimits/maxElementCount`` that the bytes left cannot hold is
    /// refused by the container header's own check, before storage is reserved for it: not by
    /// a failed read after reserving hundreds of megabytes.
    @Test(arguments: [UInt32(1_000), 50_000_000, 99_999_999])
    func aCountTheBytesCannotHoldIsRefusedBeforeReading(count: UInt32) throws {
        var bytes = [UInt8](try Archive.encode([1, 2, 3]))
        let countOffset = try bodyStart(bytes) + 5
        withUnsafeBytes(of: count.littleEndian) { raw in
            for i in 0..<4 { bytes[countOffset + i] = raw[i] }
        }
        resign(&bytes)
        for decode in [
            { _ = try Archive.decode([Int].self, from: Data(bytes)) },
            { _ = try Archive.decode([Product].self, from: Data(bytes)) },
        ] as [() throws -> Void] {
            let error = #expect(throws: ArchiveError.self) { try decode() }
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains("claims \(count) elements") == true, "\(String(describing: error))")
        }
    }

    @Test func elementLimitIsEnforced() throws {
        let data = try Archive.encode(Array(repeating: 0, count: 100))
        let options = ArchiveOptions(limits: ArchiveLimits(maxElementCount: 10))
        let error = #expect(throws: ArchiveError.self) { try Archive.decode([Int].self, from: data, options: options) }
        #expect(error?.code == .limitExceeded(.elementCount))
        let encodeError = #expect(throws: ArchiveError.self) {
            try Archive.encode(Array(repeating: 0, count: 100), options: options)
        }
        #expect(encodeError?.code == .limitExceeded(.elementCount))
    }

    /// Recomputes the checksum (of a version 2 archive) so a mutation reaches the structural
    /// checks.
    private func resign(_ bytes: inout [UInt8]) {
        let sum = bytes[ArchiveFormat.fixedHeaderSize...].withUnsafeBytes { CRC32C.checksum($0) }
        withUnsafeBytes(of: sum.littleEndian) { raw in
            for i in 0..<4 { bytes[6 + i] = raw[i] }
        }
    }
}

@Suite struct ArchiveChecksumOptionTests {
    /// The storage layer skips the archive's CRC only for bytes its own checksum verified;
    /// structural checks still run then.
    @Test func checksumCanBeSkippedButStructureIsStillChecked() throws {
        var bytes = [UInt8](try Archive.encode(["a", "b"]))
        bytes[6] ^= 0xFF  // break only the stored checksum
        var options = ArchiveOptions()
        #expect(throws: ArchiveError.self) { try Archive.decode([String].self, from: Data(bytes), options: options) }
        options.verifiesChecksum = false
        #expect(try Archive.decode([String].self, from: Data(bytes), options: options) == ["a", "b"])
        bytes[try bodyStart(bytes)] = 0x7F  // an unknown tag
        let error = #expect(throws: ArchiveError.self) {
            try Archive.decode([String].self, from: Data(bytes), options: options)
        }
        #expect(error?.code == .typeMismatch || error?.code == .corrupt)
    }
}

@Suite struct ArchiveEncodedChecksumTests {
    @Test func derivedChecksumEqualsAFullPass() throws {
        for value in [["a"], Array(repeating: "x", count: 5_000), []] {
            let data = try Archive.encode(value)
            #expect(Archive.checksumOfEncoded(data) == CRC32C.checksum(data))
        }
        #expect(Archive.checksumOfEncoded(Data([1, 2, 3])) == nil)
        #expect(Archive.checksumOfEncoded(try Archive.encode(1) + Data([0])) == nil, "a length that disagrees")
    }
}

/// Where the root value of the archive `bytes` starts (after its header).
func bodyStart(_ bytes: [UInt8]) throws -> Int {
    try bytes.withUnsafeBytes { try ArchiveHeader(parsing: $0).bodyStart }
}
