import Foundation

/// A `Data` value as the root of an archive, without copying its bytes: the cache writes the
/// archive ``Archive/encode(_:options:)`` would return as the bytes around the caller's value
/// plus the value itself (one `writev`), and reads the value back as a `Data` that shares the
/// buffer the entry file was read into.
///
/// The layout (see `docs/ArchiveFormat.md`) is fixed for a root `Data` of n bytes: the version
/// 2 header, the body `0x08 varint(n) bytes`, and empty tables `0x00 0x00 0x00`.
extension Archive {
    /// The archive of a root `Data` value, in three pieces: the prefix (``withPrefix(_:)``),
    /// the value's bytes, ``suffix``. From ``dataPieces(of:options:)`` their concatenation is byte for byte what
    /// ``Archive/encode(_:options:)`` returns for the value. Readers also read a prefix whose
    /// varints are longer than needed, which the format allows (docs/ArchiveFormat.md).
    package struct DataPieces: Sendable {
        /// The prefix's bytes, held inline: an array of them cost a heap allocation and, built
        /// outside a specialization of `Array`, a run-time metadata lookup — about 800
        /// instructions a set.
        private var prefixBytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
        private var prefixCount: Int
        /// The tables of an archive without types, keys or objects.
        package static let suffix: [UInt8] = [0, 0, 0]
        /// The archive's length in bytes, all three pieces.
        package var count: Int
        /// The CRC32C of the whole archive, as ``Archive/checksumOfEncoded(_:)`` derives it.
        package var checksum: UInt32

        /// The room for the prefix, in bytes.
        static let prefixCapacity = 48

        /// Pieces whose prefix of `prefixCount` bytes (at most ``prefixCapacity``) `write`
        /// stores at the pointer it gets.
        init(count: Int, checksum: UInt32, prefixCount: Int, prefix write: (UnsafeMutableRawPointer) -> Void) {
            precondition(prefixCount <= Self.prefixCapacity, "a root Data's archive prefix is at most 41 bytes")
            self.count = count
            self.checksum = checksum
            self.prefixCount = prefixCount
            withUnsafeMutableBytes(of: &prefixBytes) { write($0.baseAddress!) }
        }

        /// Calls `body` with the prefix's bytes (the header, the `Data` tag and the byte count:
        /// at most 41), without making an array of them.
        package func withPrefix<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            var bytes = prefixBytes
            let count = prefixCount
            return try withUnsafeBytes(of: &bytes) { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
    }

    /// The lengths of the varints in a root `Data`'s archive: the byte count's, the body
    /// length's and the total length's. The cache writes the minimal layout; the tests build
    /// lengthened ones, which the format allows, to check that they read.
    struct DataLayout {
        var countSize: Int
        var bodyLength: Int
        var bodyLengthSize: Int
        var total: Int
        var totalSize: Int
        /// The bytes before the value: header, tag and byte count.
        var prefixCount: Int { ArchiveFormat.fixedHeaderSize + totalSize + bodyLengthSize + 1 + countSize }

        /// The minimal layout for `n` bytes (``Archive/encode(_:options:)``'s).
        init(count n: Int) {
            countSize = ByteBuffer.varintSize(UInt64(n))
            bodyLength = 1 + countSize + n
            bodyLengthSize = ByteBuffer.varintSize(UInt64(bodyLength))
            let payload = bodyLength + DataPieces.suffix.count
            let headerSize = ArchiveFormat.headerSize(bodyLength: bodyLength, payload: payload)
            total = headerSize + payload
            totalSize = headerSize - ArchiveFormat.fixedHeaderSize - bodyLengthSize
        }

        /// A layout of the given varint lengths, for a caller that lengthens them.
        init(countSize: Int, bodyLength: Int, bodyLengthSize: Int, total: Int, totalSize: Int) {
            self.countSize = countSize
            self.bodyLength = bodyLength
            self.bodyLengthSize = bodyLengthSize
            self.total = total
            self.totalSize = totalSize
        }
    }

    /// The pieces of the archive of `bytes` as a root `Data`, with one CRC32C pass over
    /// `bytes` and no copy of them; `nil` when the encoder's own checks should decide
    /// (`options` allow too little depth, or the archive would come near
    /// ``ArchiveLimits/maxTotalBytes``): encode the value as usual then.
    ///
    /// - Complexity: O(n) for the checksum.
    package static func dataPieces(of bytes: UnsafeRawBufferPointer, options: ArchiveOptions) -> DataPieces? {
        let limits = options.limits
        let n = bytes.count
        let minimal = DataLayout(count: n)
        // The encoder counts its reserved header room against the limit while writing.
        guard limits.maxDepth >= ArchiveLimits.levelWeight,
            minimal.bodyLength + DataPieces.suffix.count <= limits.maxTotalBytes - ArchiveFormat.reservedHeaderSize
        else { return nil }
        return dataPieces(of: bytes, layout: minimal)
    }

    /// The pieces of the archive of `bytes` as a root `Data` in `layout`, whose varint
    /// lengths the caller chose (and checked against its limits).
    static func dataPieces(of bytes: UnsafeRawBufferPointer, layout: DataLayout) -> DataPieces {
        let n = bytes.count
        let total = layout.total
        let prefixCount = layout.prefixCount
        var archiveSum: UInt32 = 0
        var head: UInt32 = 0
        var pieces = DataPieces(count: total, checksum: 0, prefixCount: prefixCount) { base in
            var offset = ArchiveFormat.storeHeader(
                at: base,
                total: total,
                totalSize: layout.totalSize,
                bodyLength: layout.bodyLength,
                bodyLengthSize: layout.bodyLengthSize
            )
            base.storeBytes(of: ArchiveTag.data, toByteOffset: offset, as: UInt8.self)
            offset += 1
            ByteBuffer.storeVarint(UInt64(n), size: layout.countSize, at: base, offset: &offset)
            // The archive's checksum covers everything after the fixed part: the rest of the
            // prefix, the value, the tables — continued piece by piece, one pass over each.
            var sum = CRC32C.checksum(
                UnsafeRawBufferPointer(
                    start: base + ArchiveFormat.fixedHeaderSize,
                    count: offset - ArchiveFormat.fixedHeaderSize
                )
            )
            sum = CRC32C.checksum(bytes, seed: sum)
            sum = DataPieces.suffix.withUnsafeBytes { CRC32C.checksum($0, seed: sum) }
            base.storeBytes(of: sum.littleEndian, toByteOffset: 6, as: UInt32.self)
            archiveSum = sum
            head = CRC32C.checksum(UnsafeRawBufferPointer(start: base, count: ArchiveFormat.fixedHeaderSize))
            assert(offset == prefixCount, "a root Data's archive prefix was sized wrong")
        }
        // The whole archive's CRC32C, for the entry header: the fixed part's, extended by the
        // checksummed rest's (as `ArchiveHeader.wholeArchiveChecksum`).
        pieces.checksum = CRC32C.combine(head, archiveSum, length: total - ArchiveFormat.fixedHeaderSize)
        return pieces
    }

    /// Where the bytes of the root `Data` of the archive `raw` lie in it, for a caller that
    /// owns the memory and copies or shares them itself (an entry file's buffer); `nil` when
    /// `raw` is not a version 2 archive of a root `Data` (``dataPieces(of:options:)``'s
    /// layout, its varints minimal or not) without types, keys or objects, or `options` ask for
    /// checks this path does not make (then decode as usual: it reports what is wrong). The
    /// archive's checksum is verified only when `options.verifiesChecksum` is set.
    ///
    /// - Complexity: O(1), plus O(n) for a verified checksum.
    package static func rootDataRange(in raw: UnsafeRawBufferPointer, options: ArchiveOptions) -> Range<Int>? {
        guard raw.count <= options.limits.maxTotalBytes, options.limits.maxDepth >= ArchiveLimits.levelWeight,
            let header = try? ArchiveHeader(parsing: raw), header.version == ArchiveFormat.version,
            header.bodyStart < header.tablesOffset,
            raw[header.bodyStart] == ArchiveTag.data
        else { return nil }
        var reader = ByteReader(base: raw.baseAddress!, start: header.bodyStart + 1, end: header.tablesOffset)
        guard let n = try? reader.varint(), n == UInt64(header.tablesOffset - reader.pos),
            raw.count - header.tablesOffset == DataPieces.suffix.count,
            raw[header.tablesOffset...].allSatisfy({ $0 == 0 })
        else { return nil }
        if options.verifiesChecksum, header.checksum(of: raw) != header.storedChecksum { return nil }
        return reader.pos..<(reader.pos + Int(n))
    }

    /// The smallest root `Data` a cache read shares with the entry file's buffer rather than
    /// copies: a copy of less costs about what the shared `Data`'s deallocator does.
    package static let minimumSharedCount = 4096
}
