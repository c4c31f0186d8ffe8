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
                writeHex(into: out.baseAddress!)
                return 32
            }
        }

        /// Writes the 32 lowercase hexadecimal characters of ``description`` at `out`, which
        /// has room for them: every cache read and write spells one into a path this way.
        ///
        /// Four bytes at a time, without a table: their eight nibbles spread into the bytes of
        /// a word, each turned into its digit at once (`0`–`9` or `a`–`f`), the word stored in
        /// big-endian order.
        package func writeHex(into out: UnsafeMutablePointer<UInt8>) {
            let raw = UnsafeMutableRawPointer(out)
            /// The eight characters of the four bytes in the low half of `bytes`, at `offset`.
            @inline(__always) func write(_ bytes: UInt64, at offset: Int) {
                var x = bytes & 0xFFFF_FFFF
                x = (x | x << 16) & 0x0000_FFFF_0000_FFFF
                x = (x | x << 8) & 0x00FF_00FF_00FF_00FF
                x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F
                // 1 in each byte whose nibble is 10 or more: those skip from '9' + 1 to 'a'.
                let letters = ((x &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
                let digits = x &+ 0x3030_3030_3030_3030 &+ letters &* 0x27
                raw.storeBytes(of: digits.bigEndian, toByteOffset: offset, as: UInt64.self)
            }
            write(high >> 32, at: 0)
            write(high, at: 8)
            write(low >> 32, at: 16)
            write(low, at: 24)
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
        withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { tail in
            let rest = count - offset
            let blocks = rest + 1 + 8 <= 64 ? 1 : 2
            tail.initializeMemory(as: UInt8.self, repeating: 0)
            if rest > 0 { tail.baseAddress!.copyMemory(from: input.baseAddress! + offset, byteCount: rest) }
            tail[rest] = 0x80
            tail.storeBytes(
                of: (UInt64(truncatingIfNeeded: count) &* 8).littleEndian,
                toByteOffset: blocks * 64 - 8,
                as: UInt64.self
            )
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

    /// Processes one 64-byte block: the 64 steps of RFC 1321 section 3.4 written out, each
    /// with its message word, its constant (floor(abs(sin(i + 1)) * 2^32)) and its rotation as
    /// literals, where a loop over tables pays a bounds-checked table load and a four-way
    /// switch per step; every cache read and write hashes at least one block (the
    /// `cache-manager` suite's 1 KB set and get guard it).
    private static func compress(_ state: inout (UInt32, UInt32, UInt32, UInt32), _ block: UnsafeRawBufferPointer) {
        precondition(block.count >= 64)
        func word(_ i: Int) -> UInt32 { block.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self).littleEndian }
        let x0 = word(0)
        let x1 = word(1)
        let x2 = word(2)
        let x3 = word(3)
        let x4 = word(4)
        let x5 = word(5)
        let x6 = word(6)
        let x7 = word(7)
        let x8 = word(8)
        let x9 = word(9)
        let x10 = word(10)
        let x11 = word(11)
        let x12 = word(12)
        let x13 = word(13)
        let x14 = word(14)
        let x15 = word(15)
        /// One step: `a + f + message word + constant`, rotated left by `s`, plus `b`.
        @inline(__always) func step(
            _ a: UInt32,
            _ b: UInt32,
            _ f: UInt32,
            _ wordAndConstant: UInt32,
            _ s: UInt32
        ) -> UInt32 {
            let t = a &+ f &+ wordAndConstant
            return b &+ (t << s | t >> (32 &- s))
        }
        var a = state.0
        var b = state.1
        var c = state.2
        var d = state.3
        // Round 1: F(b, c, d) = (b & c) | (~b & d), written d ^ (b & (c ^ d)).
        a = step(a, b, d ^ (b & (c ^ d)), x0 &+ 0xD76A_A478, 7)
        d = step(d, a, c ^ (a & (b ^ c)), x1 &+ 0xE8C7_B756, 12)
        c = step(c, d, b ^ (d & (a ^ b)), x2 &+ 0x2420_70DB, 17)
        b = step(b, c, a ^ (c & (d ^ a)), x3 &+ 0xC1BD_CEEE, 22)
        a = step(a, b, d ^ (b & (c ^ d)), x4 &+ 0xF57C_0FAF, 7)
        d = step(d, a, c ^ (a & (b ^ c)), x5 &+ 0x4787_C62A, 12)
        c = step(c, d, b ^ (d & (a ^ b)), x6 &+ 0xA830_4613, 17)
        b = step(b, c, a ^ (c & (d ^ a)), x7 &+ 0xFD46_9501, 22)
        a = step(a, b, d ^ (b & (c ^ d)), x8 &+ 0x6980_98D8, 7)
        d = step(d, a, c ^ (a & (b ^ c)), x9 &+ 0x8B44_F7AF, 12)
        c = step(c, d, b ^ (d & (a ^ b)), x10 &+ 0xFFFF_5BB1, 17)
        b = step(b, c, a ^ (c & (d ^ a)), x11 &+ 0x895C_D7BE, 22)
        a = step(a, b, d ^ (b & (c ^ d)), x12 &+ 0x6B90_1122, 7)
        d = step(d, a, c ^ (a & (b ^ c)), x13 &+ 0xFD98_7193, 12)
        c = step(c, d, b ^ (d & (a ^ b)), x14 &+ 0xA679_438E, 17)
        b = step(b, c, a ^ (c & (d ^ a)), x15 &+ 0x49B4_0821, 22)
        // Round 2: G(b, c, d) = (b & d) | (c & ~d), written c ^ (d & (b ^ c)).
        a = step(a, b, c ^ (d & (b ^ c)), x1 &+ 0xF61E_2562, 5)
        d = step(d, a, b ^ (c & (a ^ b)), x6 &+ 0xC040_B340, 9)
        c = step(c, d, a ^ (b & (d ^ a)), x11 &+ 0x265E_5A51, 14)
        b = step(b, c, d ^ (a & (c ^ d)), x0 &+ 0xE9B6_C7AA, 20)
        a = step(a, b, c ^ (d & (b ^ c)), x5 &+ 0xD62F_105D, 5)
        d = step(d, a, b ^ (c & (a ^ b)), x10 &+ 0x0244_1453, 9)
        c = step(c, d, a ^ (b & (d ^ a)), x15 &+ 0xD8A1_E681, 14)
        b = step(b, c, d ^ (a & (c ^ d)), x4 &+ 0xE7D3_FBC8, 20)
        a = step(a, b, c ^ (d & (b ^ c)), x9 &+ 0x21E1_CDE6, 5)
        d = step(d, a, b ^ (c & (a ^ b)), x14 &+ 0xC337_07D6, 9)
        c = step(c, d, a ^ (b & (d ^ a)), x3 &+ 0xF4D5_0D87, 14)
        b = step(b, c, d ^ (a & (c ^ d)), x8 &+ 0x455A_14ED, 20)
        a = step(a, b, c ^ (d & (b ^ c)), x13 &+ 0xA9E3_E905, 5)
        d = step(d, a, b ^ (c & (a ^ b)), x2 &+ 0xFCEF_A3F8, 9)
        c = step(c, d, a ^ (b & (d ^ a)), x7 &+ 0x676F_02D9, 14)
        b = step(b, c, d ^ (a & (c ^ d)), x12 &+ 0x8D2A_4C8A, 20)
        // Round 3: H(b, c, d) = b ^ c ^ d.
        a = step(a, b, b ^ c ^ d, x5 &+ 0xFFFA_3942, 4)
        d = step(d, a, a ^ b ^ c, x8 &+ 0x8771_F681, 11)
        c = step(c, d, d ^ a ^ b, x11 &+ 0x6D9D_6122, 16)
        b = step(b, c, c ^ d ^ a, x14 &+ 0xFDE5_380C, 23)
        a = step(a, b, b ^ c ^ d, x1 &+ 0xA4BE_EA44, 4)
        d = step(d, a, a ^ b ^ c, x4 &+ 0x4BDE_CFA9, 11)
        c = step(c, d, d ^ a ^ b, x7 &+ 0xF6BB_4B60, 16)
        b = step(b, c, c ^ d ^ a, x10 &+ 0xBEBF_BC70, 23)
        a = step(a, b, b ^ c ^ d, x13 &+ 0x289B_7EC6, 4)
        d = step(d, a, a ^ b ^ c, x0 &+ 0xEAA1_27FA, 11)
        c = step(c, d, d ^ a ^ b, x3 &+ 0xD4EF_3085, 16)
        b = step(b, c, c ^ d ^ a, x6 &+ 0x0488_1D05, 23)
        a = step(a, b, b ^ c ^ d, x9 &+ 0xD9D4_D039, 4)
        d = step(d, a, a ^ b ^ c, x12 &+ 0xE6DB_99E5, 11)
        c = step(c, d, d ^ a ^ b, x15 &+ 0x1FA2_7CF8, 16)
        b = step(b, c, c ^ d ^ a, x2 &+ 0xC4AC_5665, 23)
        // Round 4: I(b, c, d) = c ^ (b | ~d).
        a = step(a, b, c ^ (b | ~d), x0 &+ 0xF429_2244, 6)
        d = step(d, a, b ^ (a | ~c), x7 &+ 0x432A_FF97, 10)
        c = step(c, d, a ^ (d | ~b), x14 &+ 0xAB94_23A7, 15)
        b = step(b, c, d ^ (c | ~a), x5 &+ 0xFC93_A039, 21)
        a = step(a, b, c ^ (b | ~d), x12 &+ 0x655B_59C3, 6)
        d = step(d, a, b ^ (a | ~c), x3 &+ 0x8F0C_CC92, 10)
        c = step(c, d, a ^ (d | ~b), x10 &+ 0xFFEF_F47D, 15)
        b = step(b, c, d ^ (c | ~a), x1 &+ 0x8584_5DD1, 21)
        a = step(a, b, c ^ (b | ~d), x8 &+ 0x6FA8_7E4F, 6)
        d = step(d, a, b ^ (a | ~c), x15 &+ 0xFE2C_E6E0, 10)
        c = step(c, d, a ^ (d | ~b), x6 &+ 0xA301_4314, 15)
        b = step(b, c, d ^ (c | ~a), x13 &+ 0x4E08_11A1, 21)
        a = step(a, b, c ^ (b | ~d), x4 &+ 0xF753_7E82, 6)
        d = step(d, a, b ^ (a | ~c), x11 &+ 0xBD3A_F235, 10)
        c = step(c, d, a ^ (d | ~b), x2 &+ 0x2AD7_D2BB, 15)
        b = step(b, c, d ^ (c | ~a), x9 &+ 0xEB86_D391, 21)
        state.0 &+= a
        state.1 &+= b
        state.2 &+= c
        state.3 &+= d
    }
}

extension MD5.Digest {
    /// The digest a snapshot holds at `offset` of `raw` — in a page's record or a directory's
    /// fence — as two little-endian words, the high one first.
    init(storedAt offset: Int, in raw: UnsafeRawBufferPointer) {
        self.init(
            high: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
            low: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
        )
    }

    /// Whether this digest sorts after `other`: the order of a snapshot's pages.
    func isAbove(_ other: MD5.Digest) -> Bool {
        high != other.high ? high > other.high : low > other.low
    }
}
