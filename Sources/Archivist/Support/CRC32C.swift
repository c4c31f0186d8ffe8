import CArchivistSupport

/// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78), the checksum of the
/// native archive and of cache entry headers.
///
/// Computed with the CPU's CRC-32C instructions where it has them (SSE 4.2 on x86_64, the
/// ARMv8 CRC32 extension on arm64; asked once per process, in the package's C target).
/// Elsewhere it falls back to software: slicing-by-8 tables, with inputs of a few hundred
/// bytes or more read as three interleaved streams whose checksums are merged with
/// precomputed shift tables. The `crc32c` suite sets the two side by side. Both are checked
/// against the RFC 3720 (iSCSI) test vectors and a bit-at-a-time reference.
///
/// ```swift
/// let sum = CRC32C.checksum(Array("123456789".utf8))   // 0xE3069283
/// ```
package enum CRC32C {
    /// The checksum of `bytes`, starting from `seed` (the result of a previous call, to
    /// checksum data in pieces).
    ///
    /// - Complexity: O(n).
    package static func checksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return seed }
        return usesHardware ? hardwareChecksum(start, bytes.count, seed: seed) : softwareChecksum(bytes, seed: seed)
    }

    /// Whether ``checksum(_:seed:)`` runs on the CPU's CRC-32C instructions.
    package static let usesHardware = archivist_crc32c_hardware_available()

    /// The checksum on the CPU's instructions; only when ``usesHardware``.
    package static func hardwareChecksum(_ start: UnsafeRawPointer, _ count: Int, seed: UInt32) -> UInt32 {
        archivist_crc32c_hardware(seed, start, count)
    }

    /// The checksum in software, on every CPU: the fallback, and the reference the hardware
    /// version is tested and benchmarked against.
    ///
    /// - Complexity: O(n).
    package static func softwareChecksum(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return seed }
        return tables.withUnsafeBufferPointer { t in
            var crc = ~seed
            var p = start
            var n = bytes.count
            // Three streams over consecutive blocks; the second and third start from a zero
            // register, and the register is linear, so the state after all three is
            // shift(shift(first) ^ second) ^ third, each shift a multiplication by x^(8·block).
            while n >= 3 * interleavedBlock {
                var first = crc
                var second: UInt32 = 0
                var third: UInt32 = 0
                var offset = 0
                while offset < interleavedBlock {
                    first = step(t, first, p + offset)
                    second = step(t, second, p + interleavedBlock + offset)
                    third = step(t, third, p + 2 * interleavedBlock + offset)
                    offset &+= 8
                }
                crc = shift(t, first, by: shiftTwoBlocks) ^ shift(t, second, by: shiftOneBlock) ^ third
                p += 3 * interleavedBlock
                n -= 3 * interleavedBlock
            }
            while n >= 8 {
                crc = step(t, crc, p)
                p += 8
                n -= 8
            }
            while n > 0 {
                crc = t[Int((crc ^ UInt32(p.load(as: UInt8.self))) & 0xFF)] ^ (crc >> 8)
                p += 1
                n -= 1
            }
            return ~crc
        }
    }

    /// Bytes per stream in one round of the interleaved loop (a multiple of 8).
    static let interleavedBlock = 256

    /// Offsets into ``tables`` of the two shift tables after the eight slicing tables.
    private static let shiftOneBlock = 8 * 256
    private static let shiftTwoBlocks = 12 * 256

    /// Eight register updates at once: the slicing-by-8 step.
    @inline(__always)
    private static func step(_ t: UnsafeBufferPointer<UInt32>, _ crc: UInt32, _ p: UnsafeRawPointer) -> UInt32 {
        let lo = p.loadUnaligned(as: UInt32.self).littleEndian ^ crc
        let hi = p.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
        return t[7 &* 256 &+ Int(lo & 0xFF)] ^ t[6 &* 256 &+ Int((lo >> 8) & 0xFF)]
            ^ t[5 &* 256 &+ Int((lo >> 16) & 0xFF)] ^ t[4 &* 256 &+ Int(lo >> 24)]
            ^ t[3 &* 256 &+ Int(hi & 0xFF)] ^ t[2 &* 256 &+ Int((hi >> 8) & 0xFF)]
            ^ t[1 &* 256 &+ Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
    }

    /// A register multiplied by a fixed power of x, through the four byte tables at `table`
    /// (multiplication is linear, so each byte's product is looked up and the four XORed).
    @inline(__always)
    private static func shift(_ t: UnsafeBufferPointer<UInt32>, _ crc: UInt32, by table: Int) -> UInt32 {
        t[table &+ Int(crc & 0xFF)] ^ t[table &+ 256 &+ Int((crc >> 8) & 0xFF)]
            ^ t[table &+ 512 &+ Int((crc >> 16) & 0xFF)] ^ t[table &+ 768 &+ Int(crc >> 24)]
    }

    /// Eight 256-entry slicing tables (table k maps a byte to its CRC contribution k bytes
    /// ahead), then two sets of four byte tables that multiply a register by x^(8·block) and
    /// x^(16·block).
    private static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 16 * 256)
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
        for (offset, length) in [(shiftOneBlock, interleavedBlock), (shiftTwoBlocks, 2 * interleavedBlock)] {
            let factor = xToThe8nModP(length)
            for byte in 0..<4 {
                for value in 0..<256 {
                    t[offset + byte * 256 + value] = multiplyModP(factor, UInt32(value) << (8 * UInt32(byte)))
                }
            }
        }
        return t
    }()

    /// The checksum of a byte sequence such as `[UInt8]` or `Data`.
    ///
    /// - Complexity: O(n).
    package static func checksum<Bytes: Sequence<UInt8>>(_ bytes: Bytes, seed: UInt32 = 0) -> UInt32 {
        if let sum = bytes.withContiguousStorageIfAvailable({
            checksum(UnsafeRawBufferPointer($0), seed: seed)
        }) {
            return sum
        }
        let copy = Array(bytes)
        return copy.withUnsafeBytes { checksum($0, seed: seed) }
    }
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
    /// The multiplication runs on the CPU's carry-less multiply where it has one (PCLMULQDQ on
    /// x86_64, PMULL on arm64, next to the CRC-32C instructions; asked once per process): one
    /// multiply and one `crc32` per set bit of `length`, where `softwareCombine(_:_:length:)`
    /// multiplies bit by bit. Every cache set derives its entry's checksum with one, and every
    /// large entry's read checks with one (the `cache-manager` suite's sets and 10 MB get guard
    /// it).
    ///
    /// - Complexity: O(log `length`).
    package static func combine(_ first: UInt32, _ second: UInt32, length: Int) -> UInt32 {
        guard length > 0 else { return first }
        guard usesCarrylessMultiply else { return softwareCombine(first, second, length: length) }
        return archivist_crc32c_shift_carryless(first, UInt64(length)) ^ second
    }

    /// Whether ``combine(_:_:length:)`` runs on the CPU's carry-less multiply.
    package static let usesCarrylessMultiply = archivist_crc32c_carryless_available()

    /// ``combine(_:_:length:)`` in software, on every CPU: the fallback, and the reference the
    /// carry-less version is tested against.
    ///
    /// - Complexity: O(log `length`).
    package static func softwareCombine(_ first: UInt32, _ second: UInt32, length: Int) -> UInt32 {
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

    /// x^(2^k) modulo the polynomial for k in 0..<67, every k an `Int` length in bytes needs
    /// (3 for the bytes' 8 bits, plus 64). Not 32 entries indexed by k mod 32 as in zlib's
    /// CRC-32: modulo CRC-32C's polynomial x^(2^32) is x², not x, so that would be wrong from
    /// 512 MiB on.
    private static let xToThe2k: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 67)
        var p: UInt32 = 1 << 30  // x^1
        table[0] = p
        for k in 1..<67 {
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
            if n & 1 != 0 { p = multiplyModP(xToThe2k[k], p) }
            n >>= 1
            k += 1
        }
        return p
    }
}
