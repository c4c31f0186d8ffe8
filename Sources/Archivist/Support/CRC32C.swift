/// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), the checksum of the
/// native archive and of cache entry headers.
///
/// Computed in software with slicing-by-8 tables so it runs the same on every platform.
/// Checked against the RFC 3720 (iSCSI) test vectors.
///
/// ```swift
/// let sum = CRC32C.checksum(Array("123456789".utf8))   // 0xE3069283
/// ```
public enum CRC32C {
    /// The checksum of `bytes`, starting from `seed` (the result of a previous call, to
    /// checksum data in pieces).
    ///
    /// - Complexity: O(n).
    public static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        guard var p = bytes.baseAddress, !bytes.isEmpty else { return seed }
        var n = bytes.count
        let t = tables
        t.withUnsafeBufferPointer { t in
            while n >= 8 {
                let lo = p.loadUnaligned(as: UInt32.self).littleEndian ^ crc
                let hi = p.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
                crc = t[7 &* 256 &+ Int(lo & 0xFF)] ^ t[6 &* 256 &+ Int((lo >> 8) & 0xFF)]
                    ^ t[5 &* 256 &+ Int((lo >> 16) & 0xFF)] ^ t[4 &* 256 &+ Int(lo >> 24)]
                    ^ t[3 &* 256 &+ Int(hi & 0xFF)] ^ t[2 &* 256 &+ Int((hi >> 8) & 0xFF)]
                    ^ t[1 &* 256 &+ Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
                p += 8
                n -= 8
            }
            while n > 0 {
                crc = t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
                p += 1
                n -= 1
            }
        }
        return ~crc
    }

    /// The checksum of a byte sequence such as `[UInt8]` or `Data`.
    ///
    /// - Complexity: O(n).
    public static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes, seed: UInt32 = 0) -> UInt32 {
        if let sum = bytes.withContiguousStorageIfAvailable({
            checksum(UnsafeRawBufferPointer($0), seed: seed)
        }) {
            return sum
        }
        let copy = Array(bytes)
        return copy.withUnsafeBytes { checksum($0, seed: seed) }
    }

    /// Eight 256-entry tables: table k maps a byte to its CRC contribution k bytes ahead.
    private static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[i] = c
        }
        for k in 1..<8 {
            for i in 0..<256 {
                let prev = t[(k - 1) * 256 + i]
                t[k * 256 + i] = t[Int(prev & 0xFF)] ^ (prev >> 8)
            }
        }
        return t
    }()
}

extension CRC32C {
    /// The checksum of `A` followed by `B`, from `checksum(A)`, `checksum(B)` and B's length,
    /// without reading the bytes again (zlib's `crc32_combine`, for the Castagnoli
    /// polynomial): multiply A's checksum by x^(8·length) modulo the polynomial.
    ///
    /// ```swift
    /// let whole = CRC32C.combine(CRC32C.checksum(a), CRC32C.checksum(b), length: b.count)
    /// ```
    ///
    /// - Complexity: O(log `length`).
    public static func combine(_ first: UInt32, _ second: UInt32, length: Int) -> UInt32 {
        guard length > 0 else { return first }
        return multiplyModP(xToThe8nModP(length), first) ^ second
    }

    private static let reflectedPolynomial: UInt32 = 0x82F6_3B78

    /// a·b modulo the polynomial, both in reflected bit order.
    private static func multiplyModP(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var m: UInt32 = 1 << 31
        var p: UInt32 = 0
        var b = b
        while true {
            if a & m != 0 {
                p ^= b
                if a & (m &- 1) == 0 { break }
            }
            m >>= 1
            b = b & 1 != 0 ? (b >> 1) ^ reflectedPolynomial : b >> 1
        }
        return p
    }

    /// x^(2^k) modulo the polynomial for k in 0..<32.
    private static let xToThe2k: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 32)
        var p: UInt32 = 1 << 30  // x^1
        table[0] = p
        for k in 1..<32 {
            p = multiplyModP(p, p)
            table[k] = p
        }
        return table
    }()

    /// x^(8·n) modulo the polynomial.
    private static func xToThe8nModP(_ n: Int) -> UInt32 {
        var p: UInt32 = 1 << 31  // x^0
        var k = 3
        var n = UInt64(n)
        while n != 0 {
            if n & 1 != 0 { p = multiplyModP(xToThe2k[k & 31], p) }
            n >>= 1
            k += 1
        }
        return p
    }
}
