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
