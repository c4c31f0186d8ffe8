import ArchivistTestSupport
import Testing

@testable import Archivist

@Suite struct CRC32CTests {
    /// RFC 3720 appendix B.4 vectors plus the common "123456789" check value.
    @Test(arguments: [
        ([UInt8](repeating: 0, count: 32), UInt32(0x8A91_36AA)),
        ([UInt8](repeating: 0xFF, count: 32), UInt32(0x62A8_AB43)),
        ((0..<32).map { UInt8($0) }, UInt32(0x46DD_794E)),
        ((0..<32).map { UInt8(31 - $0) }, UInt32(0x113F_DB5C)),
        (Array("123456789".utf8), UInt32(0xE306_9283)),
        ([], UInt32(0)),
    ])
    func matchesPublishedVectors(bytes: [UInt8], expected: UInt32) {
        #expect(CRC32C.checksum(bytes) == expected)
    }

    @Test func checksumInPiecesEqualsWhole() {
        var rng = SplitMix64(seed: 42)
        let bytes = (0..<1_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for cut in [0, 1, 7, 8, 9, 500, 999, 1_000] {
            let first = CRC32C.checksum(bytes[..<cut])
            #expect(CRC32C.checksum(bytes[cut...], seed: first) == CRC32C.checksum(bytes), "cut \(cut)")
        }
    }

    @Test func combineEqualsTheChecksumOfTheConcatenation() {
        var rng = SplitMix64(seed: 7)
        for length in [0, 1, 3, 8, 28, 1_000, 70_001] {
            let a = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let b = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(
                CRC32C.combine(CRC32C.checksum(a), CRC32C.checksum(b), length: b.count) == CRC32C.checksum(a + b),
                "seed 7, length \(length)"
            )
            #expect(
                CRC32C.softwareCombine(CRC32C.checksum(a), CRC32C.checksum(b), length: b.count)
                    == CRC32C.checksum(a + b),
                "software, seed 7, length \(length)"
            )
        }
    }

    /// Lengths of 512 MiB and more need x^(2^k) for k ≥ 32, and modulo CRC-32C's polynomial
    /// x^(2^32) is x², not x (as modulo zlib's CRC-32): combining in two halves must equal
    /// combining at once, up to the largest lengths.
    @Test(arguments: [1 << 28, 1 << 29, (1 << 29) + 12_345, 3 << 30, 1 << 40, Int.max / 2 + 1])
    func combineOfHugeLengthsEqualsCombiningInHalves(length: Int) {
        let first = CRC32C.checksum(Array("123456789".utf8))
        let half = length / 2
        let inHalves = CRC32C.combine(CRC32C.combine(first, 0, length: half), 0, length: length - half)
        #expect(CRC32C.combine(first, 0, length: length) == inHalves, "length \(length)")
        let softwareInHalves = CRC32C.softwareCombine(
            CRC32C.softwareCombine(first, 0, length: half),
            0,
            length: length - half
        )
        #expect(CRC32C.softwareCombine(first, 0, length: length) == softwareInHalves, "software, length \(length)")
        #expect(softwareInHalves == inHalves, "length \(length)")
    }

    /// The carry-less multiply against the software path: random registers over every bit
    /// position of the length (each set bit is one multiplication by a precomputed power),
    /// random lengths, and the ends of the range.
    @Test(.enabled(if: CRC32C.usesCarrylessMultiply))
    func carrylessCombineMatchesSoftware() {
        var rng = SplitMix64(seed: 41)
        var lengths = [
            1, 2, 3, 255, 256, 4_096, 102_400, 102_437, 1 << 29, (1 << 32) - 1, 1 << 32, Int.max, Int.max - 1,
        ]
        lengths += (0..<63).map { 1 << $0 }
        lengths += (0..<200).map { _ in Int.random(in: 1...Int.max, using: &rng) >> Int.random(in: 0...62, using: &rng)
        }
        for length in lengths where length > 0 {
            for first in [0, 1, 0x8000_0000, UInt32.max, UInt32.random(in: 0...UInt32.max, using: &rng)] as [UInt32] {
                let second = UInt32.random(in: 0...UInt32.max, using: &rng)
                #expect(
                    CRC32C.combine(first, second, length: length)
                        == CRC32C.softwareCombine(first, second, length: length),
                    "seed 41, first \(first), length \(length)"
                )
            }
        }
    }

    /// The interleaved loop against the definition, one bit at a time: every length around the
    /// three-block boundaries, unaligned starts and a nonzero seed.
    @Test(arguments: [
        0, 1, 7, 8, 9, 63, 767, 768, 769, 775, 776, 1_535, 1_536, 1_537, 2_303, 2_304, 2_305, 10_000, 100_003,
    ])
    func interleavedLoopMatchesTheBitwiseDefinition(length: Int) {
        var rng = SplitMix64(seed: UInt64(length) &+ 11)
        let bytes = (0..<(length + 8)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for offset in [0, 1, 3, 7] {
            let slice = Array(bytes[offset..<(offset + length)])
            let seed = UInt32.random(in: 0...UInt32.max, using: &rng)
            bytes.withUnsafeBytes { raw in
                let unaligned = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)])
                #expect(CRC32C.checksum(unaligned) == Self.bitwise(slice), "length \(length), offset \(offset)")
                #expect(
                    CRC32C.checksum(unaligned, seed: seed) == Self.bitwise(slice, seed: seed),
                    "length \(length), offset \(offset), seed \(seed)"
                )
            }
        }
    }

    /// Hardware, software and the bit-at-a-time definition agree on every length up to past
    /// the short interleaved loop (three 256-byte blocks, two rounds) and the first rounds of
    /// vector folding (from 1,024 bytes, 256 a round), at every start alignment 0...15, with
    /// and without a seed.
    @Test func hardwareAndSoftwareMatchTheDefinitionOnEveryLengthAndAlignment() {
        var rng = SplitMix64(seed: 20_261_123)
        let bytes = (0..<(2_200 + 16)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes.withUnsafeBytes { raw in
            for offset in 0..<16 {
                let seed = UInt32.random(in: 0...UInt32.max, using: &rng)
                // The definition extended one byte at a time: prefix n's register, then byte n.
                var reference: UInt32 = ~0
                var seededReference = ~seed
                for length in 0...2_200 {
                    let piece = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)])
                    let software = CRC32C.softwareChecksum(piece)
                    let seededSoftware = CRC32C.softwareChecksum(piece, seed: seed)
                    #expect(software == ~reference, "length \(length), offset \(offset)")
                    #expect(seededSoftware == ~seededReference, "length \(length), offset \(offset), seed \(seed)")
                    if CRC32C.usesHardware, let start = piece.baseAddress {
                        #expect(
                            CRC32C.hardwareChecksum(start, length, seed: 0) == software,
                            "length \(length), offset \(offset)"
                        )
                        #expect(
                            CRC32C.hardwareChecksum(start, length, seed: seed) == seededSoftware,
                            "length \(length), offset \(offset), seed \(seed)"
                        )
                    }
                    #expect(CRC32C.checksum(piece, seed: seed) == seededSoftware)
                    guard offset + length < raw.count else { break }
                    reference = Self.bitwiseStep(reference, raw[offset + length])
                    seededReference = Self.bitwiseStep(seededReference, raw[offset + length])
                }
            }
        }
    }

    /// Around the long interleaved loop's rounds (three 8 KB blocks) and in seeded random
    /// buffers of random lengths and starts, hardware equals software.
    @Test(
        .enabled(if: CRC32C.usesHardware),
        arguments: [8_191, 24_575, 24_576, 24_577, 25_343, 25_344, 49_152, 49_160, 1_000_003]
    )
    func hardwareMatchesSoftwareOnLargeInputs(length: Int) {
        var rng = SplitMix64(seed: UInt64(length) &* 31)
        let bytes = (0..<(length + 16)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes.withUnsafeBytes { raw in
            for _ in 0..<4 {
                let offset = Int.random(in: 0..<16, using: &rng)
                let count = Int.random(in: (length / 2)...length, using: &rng)
                let seed = UInt32.random(in: 0...UInt32.max, using: &rng)
                let piece = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + count)])
                let hardware = piece.baseAddress.map { CRC32C.hardwareChecksum($0, count, seed: seed) }
                #expect(
                    hardware == CRC32C.softwareChecksum(piece, seed: seed),
                    "seed \(length &* 31), count \(count), offset \(offset)"
                )
            }
        }
    }

    /// Around the rounds where vector folding and three `crc32` streams share the input (from
    /// 6 KB, 376 bytes a round, the streams appended by carry-less multiplies): every length
    /// over three rounds' worth past the threshold, so every leftover from 0 to 375 bytes (folded
    /// on from 256, word by word below), at four start alignments, seeded; and 100 KB entries.
    @Test(.enabled(if: CRC32C.usesHardware))
    func hardwareMatchesSoftwareWhereFoldingAndStreamsShareTheInput() {
        var rng = SplitMix64(seed: 20_261_126)
        let bytes = (0..<(102_400 + 16)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes.withUnsafeBytes { raw in
            for offset in [0, 1, 8, 15] {
                let seed = UInt32.random(in: 0...UInt32.max, using: &rng)
                for length in Array(6_000...7_300) + [8_192, 100_079, 100_099, 102_400] {
                    let piece = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)])
                    #expect(
                        CRC32C.hardwareChecksum(piece.baseAddress!, length, seed: seed)
                            == CRC32C.softwareChecksum(piece, seed: seed),
                        "length \(length), offset \(offset), seed \(seed)"
                    )
                }
            }
        }
    }

    /// One byte into the register by the definition (the register is the inverted checksum).
    static func bitwiseStep(_ register: UInt32, _ byte: UInt8) -> UInt32 {
        var crc = register ^ UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        return crc
    }

    /// CRC-32C by its definition: the reflected polynomial applied one bit at a time.
    static func bitwise(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }
}
