/// MD5 (RFC 1321) in pure Swift, used to turn caller strings — cache type names, parameters,
/// user ids — into fixed, path-safe file and folder names.
///
/// MD5 is broken as a cryptographic hash: collisions can be manufactured. Archivist uses it for
/// naming only, never for security. Every cache entry also records the original type name and
/// parameter in its header, so a collision (accidental or crafted) is detected on read and
/// reported as an error instead of returning another key's value.
///
/// ```swift
/// let name = MD5.hexDigest(of: "productList")   // 32 lowercase hex characters
/// ```
package enum MD5 {
    /// A 16-byte MD5 digest, stored as two words so it hashes and compares cheaply.
    package struct Digest: Hashable, Sendable, CustomStringConvertible {
        /// Bytes 0..<8 of the digest, big-endian (the first byte is the high byte).
        package var high: UInt64
        /// Bytes 8..<16 of the digest, big-endian.
        package var low: UInt64

        /// The 16 digest bytes in RFC 1321 order.
        package var bytes: [UInt8] {
            (0..<16).map { i in
                let word = i < 8 ? high : low
                return UInt8(truncatingIfNeeded: word >> (UInt64(7 - i % 8) * 8))
            }
        }

        /// The digest as 32 lowercase hexadecimal characters.
        package var description: String {
            String(unsafeUninitializedCapacity: 32) { out in
                let hex: StaticString = "0123456789abcdef"
                hex.withUTF8Buffer { digits in
                    for i in 0..<16 {
                        let word = i < 8 ? high : low
                        let byte = Int(truncatingIfNeeded: word >> (UInt64(7 - i % 8) * 8)) & 0xFF
                        out[2 * i] = digits[byte >> 4]
                        out[2 * i + 1] = digits[byte & 0x0F]
                    }
                }
                return 32
            }
        }

        /// Parses 32 hexadecimal characters (either case); `nil` for anything else.
        package init?(hex: Substring) {
            let utf8 = Array(hex.utf8)
            guard utf8.count == 32 else { return nil }
            var words: [UInt64] = [0, 0]
            for (i, c) in utf8.enumerated() {
                let nibble: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = c - UInt8(ascii: "A") + 10
                default: return nil
                }
                words[i / 16] = words[i / 16] << 4 | UInt64(nibble)
            }
            high = words[0]
            low = words[1]
        }

        init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }
    }

    /// The MD5 digest of `bytes`.
    ///
    /// - Complexity: O(n).
    package static func digest<Bytes: Sequence<UInt8>>(of bytes: Bytes) -> Digest {
        if let digest = bytes.withContiguousStorageIfAvailable({ digest(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes { digest($0) }
    }

    /// The MD5 digest of the UTF-8 bytes of `string`.
    ///
    /// - Complexity: O(n).
    package static func digest(of string: String) -> Digest {
        var copy = string
        return copy.withUTF8 { digest(UnsafeRawBufferPointer($0)) }
    }

    /// The MD5 digest of `string`'s UTF-8 bytes as 32 lowercase hex characters.
    ///
    /// - Complexity: O(n).
    package static func hexDigest(of string: String) -> String {
        digest(of: string).description
    }

    /// The MD5 digest of raw bytes.
    ///
    /// - Complexity: O(n).
    package static func digest(_ input: UnsafeRawBufferPointer) -> Digest {
        var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476)
        let count = input.count
        var offset = 0
        while count - offset >= 64 {
            compress(&state, UnsafeRawBufferPointer(rebasing: input[offset..<(offset + 64)]))
            offset += 64
        }
        // Final one or two blocks: the rest, 0x80, zeros, then the bit length (little-endian).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
            tail.initialize(repeating: 0)
            let rest = count - offset
            for i in 0..<rest { tail[i] = input[offset + i] }
            tail[rest] = 0x80
            let blocks = rest + 1 + 8 <= 64 ? 1 : 2
            let bitLength = UInt64(truncatingIfNeeded: count) &* 8
            for i in 0..<8 { tail[blocks * 64 - 8 + i] = UInt8(truncatingIfNeeded: bitLength >> (UInt64(i) * 8)) }
            let raw = UnsafeRawBufferPointer(tail)
            for b in 0..<blocks {
                compress(&state, UnsafeRawBufferPointer(rebasing: raw[(b * 64)..<(b * 64 + 64)]))
            }
        }
        func bigEndianWord(_ a: UInt32, _ b: UInt32) -> UInt64 {
            UInt64(a.byteSwapped) << 32 | UInt64(b.byteSwapped)
        }
        return Digest(high: bigEndianWord(state.0, state.1), low: bigEndianWord(state.2, state.3))
    }

    /// Processes one 64-byte block: the 64 steps written out, each with its constant
    /// (floor(abs(sin(i + 1)) · 2^32)), message word and rotation (RFC 1321 section 3.4) in place. A loop choosing them by a `switch` and reading them from
    /// arrays took about 2,800 instructions a block (every entry file name is one block).
    private static func compress(_ state: inout (UInt32, UInt32, UInt32, UInt32), _ block: UnsafeRawBufferPointer) {
        @inline(__always) func word(_ i: Int) -> UInt32 {
            UInt32(littleEndian: block.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self))
        }
        let m = (word(0), word(1), word(2), word(3), word(4), word(5), word(6), word(7),
                 word(8), word(9), word(10), word(11), word(12), word(13), word(14), word(15))
        @inline(__always) func rotate(_ x: UInt32, _ s: UInt32) -> UInt32 { (x << s) | (x >> (32 - s)) }
        @inline(__always) func f(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ k: UInt32, _ s: UInt32) -> UInt32 {
            b &+ rotate(a &+ ((b & c) | (~b & d)) &+ k &+ x, s)
        }
        @inline(__always) func g(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ k: UInt32, _ s: UInt32) -> UInt32 {
            b &+ rotate(a &+ ((d & b) | (~d & c)) &+ k &+ x, s)
        }
        @inline(__always) func h(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ k: UInt32, _ s: UInt32) -> UInt32 {
            b &+ rotate(a &+ (b ^ c ^ d) &+ k &+ x, s)
        }
        @inline(__always) func i(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: UInt32, _ x: UInt32, _ k: UInt32, _ s: UInt32) -> UInt32 {
            b &+ rotate(a &+ (c ^ (b | ~d)) &+ k &+ x, s)
        }
        var a = state.0, b = state.1, c = state.2, d = state.3
        a = f(a, b, c, d, m.0, 0xD76A_A478, 7)
        d = f(d, a, b, c, m.1, 0xE8C7_B756, 12)
        c = f(c, d, a, b, m.2, 0x2420_70DB, 17)
        b = f(b, c, d, a, m.3, 0xC1BD_CEEE, 22)
        a = f(a, b, c, d, m.4, 0xF57C_0FAF, 7)
        d = f(d, a, b, c, m.5, 0x4787_C62A, 12)
        c = f(c, d, a, b, m.6, 0xA830_4613, 17)
        b = f(b, c, d, a, m.7, 0xFD46_9501, 22)
        a = f(a, b, c, d, m.8, 0x6980_98D8, 7)
        d = f(d, a, b, c, m.9, 0x8B44_F7AF, 12)
        c = f(c, d, a, b, m.10, 0xFFFF_5BB1, 17)
        b = f(b, c, d, a, m.11, 0x895C_D7BE, 22)
        a = f(a, b, c, d, m.12, 0x6B90_1122, 7)
        d = f(d, a, b, c, m.13, 0xFD98_7193, 12)
        c = f(c, d, a, b, m.14, 0xA679_438E, 17)
        b = f(b, c, d, a, m.15, 0x49B4_0821, 22)
        a = g(a, b, c, d, m.1, 0xF61E_2562, 5)
        d = g(d, a, b, c, m.6, 0xC040_B340, 9)
        c = g(c, d, a, b, m.11, 0x265E_5A51, 14)
        b = g(b, c, d, a, m.0, 0xE9B6_C7AA, 20)
        a = g(a, b, c, d, m.5, 0xD62F_105D, 5)
        d = g(d, a, b, c, m.10, 0x0244_1453, 9)
        c = g(c, d, a, b, m.15, 0xD8A1_E681, 14)
        b = g(b, c, d, a, m.4, 0xE7D3_FBC8, 20)
        a = g(a, b, c, d, m.9, 0x21E1_CDE6, 5)
        d = g(d, a, b, c, m.14, 0xC337_07D6, 9)
        c = g(c, d, a, b, m.3, 0xF4D5_0D87, 14)
        b = g(b, c, d, a, m.8, 0x455A_14ED, 20)
        a = g(a, b, c, d, m.13, 0xA9E3_E905, 5)
        d = g(d, a, b, c, m.2, 0xFCEF_A3F8, 9)
        c = g(c, d, a, b, m.7, 0x676F_02D9, 14)
        b = g(b, c, d, a, m.12, 0x8D2A_4C8A, 20)
        a = h(a, b, c, d, m.5, 0xFFFA_3942, 4)
        d = h(d, a, b, c, m.8, 0x8771_F681, 11)
        c = h(c, d, a, b, m.11, 0x6D9D_6122, 16)
        b = h(b, c, d, a, m.14, 0xFDE5_380C, 23)
        a = h(a, b, c, d, m.1, 0xA4BE_EA44, 4)
        d = h(d, a, b, c, m.4, 0x4BDE_CFA9, 11)
        c = h(c, d, a, b, m.7, 0xF6BB_4B60, 16)
        b = h(b, c, d, a, m.10, 0xBEBF_BC70, 23)
        a = h(a, b, c, d, m.13, 0x289B_7EC6, 4)
        d = h(d, a, b, c, m.0, 0xEAA1_27FA, 11)
        c = h(c, d, a, b, m.3, 0xD4EF_3085, 16)
        b = h(b, c, d, a, m.6, 0x0488_1D05, 23)
        a = h(a, b, c, d, m.9, 0xD9D4_D039, 4)
        d = h(d, a, b, c, m.12, 0xE6DB_99E5, 11)
        c = h(c, d, a, b, m.15, 0x1FA2_7CF8, 16)
        b = h(b, c, d, a, m.2, 0xC4AC_5665, 23)
        a = i(a, b, c, d, m.0, 0xF429_2244, 6)
        d = i(d, a, b, c, m.7, 0x432A_FF97, 10)
        c = i(c, d, a, b, m.14, 0xAB94_23A7, 15)
        b = i(b, c, d, a, m.5, 0xFC93_A039, 21)
        a = i(a, b, c, d, m.12, 0x655B_59C3, 6)
        d = i(d, a, b, c, m.3, 0x8F0C_CC92, 10)
        c = i(c, d, a, b, m.10, 0xFFEF_F47D, 15)
        b = i(b, c, d, a, m.1, 0x8584_5DD1, 21)
        a = i(a, b, c, d, m.8, 0x6FA8_7E4F, 6)
        d = i(d, a, b, c, m.15, 0xFE2C_E6E0, 10)
        c = i(c, d, a, b, m.6, 0xA301_4314, 15)
        b = i(b, c, d, a, m.13, 0x4E08_11A1, 21)
        a = i(a, b, c, d, m.4, 0xF753_7E82, 6)
        d = i(d, a, b, c, m.11, 0xBD3A_F235, 10)
        c = i(c, d, a, b, m.2, 0x2AD7_D2BB, 15)
        b = i(b, c, d, a, m.9, 0xEB86_D391, 21)
        state.0 &+= a
        state.1 &+= b
        state.2 &+= c
        state.3 &+= d
    }
}
