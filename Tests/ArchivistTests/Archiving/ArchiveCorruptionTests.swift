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

/// Sample archives of every shape, used by the corruption tests and the fuzz loop.
enum SampleArchives {
    static func all() throws -> [(name: String, data: Data)] {
        let user = makeUser(3, letters: 4)
        let loop = Node("loop")
        loop.next = loop
        let samples: [(String, Data)] = [
            ("allKinds", try Archive.encode(AllKinds())),
            ("codable", try Archive.encode(CodableKinds())),
            ("letters", try Archive.encode([user])),
            ("selfLoop", try Archive.encode(loop)),
            ("strings", try Archive.encode(["a", "bb", "ccc"])),
        ]
        loop.next = nil
        return samples
    }

    /// Decodes `data` as the type the named sample holds; returns whether it decoded.
    static func decode(_ name: String, _ data: Data) throws {
        switch name {
        case "allKinds": _ = try Archive.decode(AllKinds.self, from: data)
        case "codable": _ = try Archive.decode(CodableKinds.self, from: data)
        case "letters": _ = try Archive.decode([User].self, from: data)
        case "selfLoop": unlinkNodes(try Archive.decode(Node.self, from: data))
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
                let index = Int.random(in: ArchiveFormat.headerSize..<bytes.count, using: &rng)
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

    /// Mutations after the checksum is recomputed reach the structural checks: any result is
    /// fine except a crash, a hang or an error that is not an `ArchiveError`.
    @Test func mutatedArchivesWithValidChecksumsNeverCrash() throws {
        let seed: UInt64 = 0x5EED_0001
        var rng = SplitMix64(seed: seed)
        var decoded = 0, rejected = 0
        for (name, data) in try SampleArchives.all() {
            for _ in 0..<2_000 {
                var bytes = [UInt8](data)
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let index = Int.random(in: ArchiveFormat.headerSize..<bytes.count, using: &rng)
                    bytes[index] = UInt8.random(in: 0...255, using: &rng)
                }
                resign(&bytes)
                do {
                    try SampleArchives.decode(name, Data(bytes))
                    decoded += 1
                } catch is ArchiveError {
                    rejected += 1
                }
            }
        }
        #expect(decoded + rejected == 10_000, "seed \(seed)")
        #expect(rejected > 5_000, "seed \(seed): most random mutations must be rejected")
    }

    @Test func hugeClaimedCountsDoNotAllocate() throws {
        // An array header claiming 2^32-1 elements in a tiny archive.
        var bytes = [UInt8](try Archive.encode([1, 2, 3]))
        let countOffset = ArchiveFormat.headerSize + 5
        for i in 0..<4 { bytes[countOffset + i] = 0xFF }
        resign(&bytes)
        let error = #expect(throws: ArchiveError.self) { try Archive.decode([Int].self, from: Data(bytes)) }
        #expect(error?.code == .corrupt || error?.code == .limitExceeded(.elementCount))
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

    /// Recomputes the checksum so a mutation reaches the structural checks.
    private func resign(_ bytes: inout [UInt8]) {
        let sum = bytes[ArchiveFormat.headerSize...].withUnsafeBytes { CRC32C.checksum($0) }
        withUnsafeBytes(of: sum.littleEndian) { raw in
            for i in 0..<4 { bytes[24 + i] = raw[i] }
        }
    }
}
