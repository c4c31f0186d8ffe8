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
            #expect(CRC32C.combine(CRC32C.checksum(a), CRC32C.checksum(b), length: b.count) == CRC32C.checksum(a + b),
                    "seed 7, length \(length)")
        }
    }

    /// The interleaved loop against the definition, one bit at a time: every length around the
    /// three-block boundaries, unaligned starts and a nonzero seed.
    @Test(arguments: [0, 1, 7, 8, 9, 63, 767, 768, 769, 775, 776, 1_535, 1_536, 1_537, 2_303, 2_304, 2_305, 10_000, 100_003])
    func interleavedLoopMatchesTheBitwiseDefinition(length: Int) {
        var rng = SplitMix64(seed: UInt64(length) &+ 11)
        let bytes = (0..<(length + 8)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        for offset in [0, 1, 3, 7] {
            let slice = Array(bytes[offset..<(offset + length)])
            let seed = UInt32.random(in: 0...UInt32.max, using: &rng)
            bytes.withUnsafeBytes { raw in
                let unaligned = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + length)])
                #expect(CRC32C.checksum(unaligned) == Self.bitwise(slice), "length \(length), offset \(offset)")
                #expect(CRC32C.checksum(unaligned, seed: seed) == Self.bitwise(slice, seed: seed),
                        "length \(length), offset \(offset), seed \(seed)")
            }
        }
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
