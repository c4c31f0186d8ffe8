import Foundation
import Testing

@testable import Archivist

@Suite struct MD5Tests {
    /// Every test vector of RFC 1321, appendix A.5.
    @Test(arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
        (
            "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
            "57edf4a22be3c955ac49da2e2107b67a"
        ),
    ])
    func matchesRFC1321Vectors(input: String, expected: String) {
        #expect(MD5.hexDigest(of: input) == expected)
        #expect(MD5.digest(of: Array(input.utf8)).description == expected)
    }

    /// Lengths around the 56- and 64-byte padding boundaries, against digests computed by
    /// another implementation (`printf 'a%.0s' {1..n} | md5sum`).
    @Test(arguments: [
        (55, "ef1772b6dff9a122358552954ad0df65"),
        (56, "3b0c8ac703f828b04c6c197006d17218"),
        (63, "b06521f39153d618550606be297466d5"),
        (64, "014842d480b571495a4a0363793f7367"),
        (65, "c743a45e0d2e6a95cb859adae0248435"),
    ])
    func handlesPaddingBoundaries(length: Int, expected: String) {
        #expect(MD5.hexDigest(of: String(repeating: "a", count: length)) == expected)
    }

    /// The written-out compression function against the table-driven loop of RFC 1321 it
    /// replaced, kept here as the reference: every length from 0 to 300 bytes (one to six
    /// blocks, every padding case), non-ASCII bytes, at an unaligned start.
    @Test func matchesTableDrivenReferenceOnEveryLength() {
        var generator = UInt64(0x9E37_79B9_7F4A_7C15)
        let bytes: [UInt8] = (0..<301).map { _ in
            generator = generator &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: generator >> 56)
        }
        for length in 0...300 {
            bytes.withUnsafeBytes { raw in
                let input = UnsafeRawBufferPointer(rebasing: raw[1..<(1 + length)])
                #expect(MD5.digest(input) == ReferenceMD5.digest(Array(input)), "length \(length)")
            }
        }
    }

    /// Every nibble value in every position spells as `String(_:radix:)` does, and parses back.
    @Test func hexSpellsEveryNibbleInEveryPosition() throws {
        for nibble in UInt64(0)...15 {
            for shift in stride(from: UInt64(0), to: 64, by: 4) {
                let digest = try #require(MD5.Digest(hex: Substring(String(repeating: "0", count: 32))))
                var high = digest
                var low = digest
                high.high = nibble << shift
                low.low = nibble << shift
                let spelled = { (word: UInt64) in
                    String(repeating: "0", count: 16 - String(word, radix: 16).count) + String(word, radix: 16)
                }
                #expect(high.description == spelled(nibble << shift) + String(repeating: "0", count: 16))
                #expect(low.description == String(repeating: "0", count: 16) + spelled(nibble << shift))
                #expect(MD5.Digest(hex: Substring(high.description)) == high)
            }
        }
    }

    @Test func digestParsesBackFromHex() throws {
        let digest = MD5.digest(of: "productList")
        let parsed = try #require(MD5.Digest(hex: Substring(digest.description)))
        #expect(parsed == digest)
        #expect(MD5.Digest(hex: "not-hex") == nil)
        #expect(MD5.Digest(hex: Substring(String(repeating: "g", count: 32))) == nil)
    }
}

/// RFC 1321's MD5 as a loop over its tables of shifts and constants, the way Archivist computed
/// it before the steps were written out: the reference the faster one is tested against.
private enum ReferenceMD5 {
    static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]
    static let constants: [UInt32] = (0..<64).map {
        UInt32(truncatingIfNeeded: Int64((abs(sin(Double($0 + 1))) * 4_294_967_296).rounded(.down)))
    }

    static func digest(_ input: [UInt8]) -> MD5.Digest {
        var message = input + [0x80]
        while message.count % 64 != 56 { message.append(0) }
        let bits = UInt64(input.count) &* 8
        for i in 0..<8 { message.append(UInt8(truncatingIfNeeded: bits >> (UInt64(i) * 8))) }
        var state: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476]
        for block in stride(from: 0, to: message.count, by: 64) {
            let words = (0..<16).map { w in
                (0..<4).reduce(UInt32(0)) { $0 | UInt32(message[block + 4 * w + $1]) << (8 * UInt32($1)) }
            }
            var (a, b, c, d) = (state[0], state[1], state[2], state[3])
            for i in 0..<64 {
                var f: UInt32
                let g: Int
                switch i {
                case 0..<16:
                    f = (b & c) | (~b & d)
                    g = i
                case 16..<32:
                    f = (d & b) | (~d & c)
                    g = (5 * i + 1) % 16
                case 32..<48:
                    f = b ^ c ^ d
                    g = (3 * i + 5) % 16
                default:
                    f = c ^ (b | ~d)
                    g = (7 * i) % 16
                }
                f = f &+ a &+ constants[i] &+ words[g]
                (a, d, c) = (d, c, b)
                b = b &+ (f << shifts[i] | f >> (32 - shifts[i]))
            }
            state[0] &+= a
            state[1] &+= b
            state[2] &+= c
            state[3] &+= d
        }
        let out = state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) } }
        return MD5.Digest(hex: Substring(out.map { String(format: "%02x", $0) }.joined()))!
    }
}
