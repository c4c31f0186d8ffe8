import Foundation

/// A `Data` value as the root of an archive, without copying its bytes: the cache writes the
/// archive ``Archive/encode(_:options:)`` would return as the bytes around the caller's value
/// plus the value itself (one `writev`), and reads the value back as a `Data` that shares the
/// buffer the entry file was read into.
///
/// The layout (see `docs/ArchiveFormat.md`) is fixed for a root `Data` of n bytes: the version
/// 2 header, the body `0x08 varint(n) bytes`, and empty tables `0x00 0x00 0x00`.
extension Archive {
    /// The archive of a root `Data` value, in three pieces: ``prefix``, the value's bytes,
    /// ``suffix``. Their concatenation is byte for byte what ``Archive/encode(_:options:)``
    /// returns for the value.
    package struct DataPieces: Sendable {
        /// The header, the `Data` tag and the byte count: at most 41 bytes.
        package var prefix: [UInt8]
        /// The tables of an archive without types, keys or objects.
        package static let suffix: [UInt8] = [0, 0, 0]
        /// The archive's length in bytes, all three pieces.
        package var count: Int
        /// The CRC32C of the whole archive, as ``Archive/checksumOfEncoded(_:)`` derives it.
        package var checksum: UInt32
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
        let bodyLength = 1 + ByteBuffer.varintSize(UInt64(n)) + n
        let payload = bodyLength + DataPieces.suffix.count
        // The encoder counts its reserved header room against the limit while writing.
        guard limits.maxDepth >= ArchiveLimits.levelWeight,
              payload <= limits.maxTotalBytes - ArchiveFormat.reservedHeaderSize
        else { return nil }
        let headerSize = ArchiveFormat.headerSize(bodyLength: bodyLength, payload: payload)
        let total = headerSize + payload
        let prefixCount = headerSize + 1 + ByteBuffer.varintSize(UInt64(n))
        var archiveSum: UInt32 = 0
        let prefix = [UInt8](unsafeUninitializedCapacity: prefixCount) { buffer, initialized in
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            var offset = ArchiveFormat.storeHeader(at: base, total: total, bodyLength: bodyLength)
            base.storeBytes(of: ArchiveTag.data, toByteOffset: offset, as: UInt8.self)
            offset += 1
            ByteBuffer.storeVarint(UInt64(n), at: base, offset: &offset)
            // The archive's checksum covers everything after the fixed part: the rest of the
            // prefix, the value, the tables — continued piece by piece, one pass over each.
            var sum = CRC32C.checksum(UnsafeRawBufferPointer(
                start: base + ArchiveFormat.fixedHeaderSize, count: offset - ArchiveFormat.fixedHeaderSize))
            sum = CRC32C.checksum(bytes, seed: sum)
            sum = DataPieces.suffix.withUnsafeBytes { CRC32C.checksum($0, seed: sum) }
            base.storeBytes(of: sum.littleEndian, toByteOffset: 6, as: UInt32.self)
            archiveSum = sum
            initialized = offset
        }
        // The whole archive's CRC32C, for the entry header: the fixed part's, extended by the
        // checksummed rest's (as `ArchiveHeader.wholeArchiveChecksum`).
        let head = prefix.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<ArchiveFormat.fixedHeaderSize])) }
        let whole = CRC32C.combine(head, archiveSum, length: total - ArchiveFormat.fixedHeaderSize)
        return DataPieces(prefix: prefix, count: total, checksum: whole)
    }

    /// The root `Data` of the archive `archive`; `nil` when `archive` is not the minimal
    /// version 2 archive of a root `Data` (``dataPieces(of:options:)``'s layout), or `options`
    /// ask for checks this path does not make (then decode as usual: it reports what is wrong).
    ///
    /// With `sharing`, a value of at least ``minimumSharedCount`` bytes shares `archive`'s
    /// buffer instead of being copied out: it keeps that whole buffer alive and, when it is its
    /// only owner, may write into it in place if mutated — so share only a buffer nobody else
    /// reads afterwards and that the value fills most of (an entry file just read). The
    /// archive's checksum is verified only when `options.verifiesChecksum` is set.
    ///
    /// - Complexity: O(1) when shared, plus O(n) for a copy or a verified checksum.
    package static func rootData(of archive: Data, sharing: Bool, options: ArchiveOptions) -> Data? {
        guard archive.count <= options.limits.maxTotalBytes, options.limits.maxDepth >= ArchiveLimits.levelWeight
        else { return nil }
        return archive.withUnsafeBytes { raw -> Data? in
            guard let header = try? ArchiveHeader(parsing: raw), header.version == ArchiveFormat.version,
                  header.bodyStart < header.tablesOffset,
                  raw[header.bodyStart] == ArchiveTag.data
            else { return nil }
            var reader = ByteReader(base: raw.baseAddress!, start: header.bodyStart + 1, end: header.tablesOffset)
            guard let n = try? reader.varint(), n == UInt64(header.tablesOffset - reader.pos),
                  raw.count - header.tablesOffset == DataPieces.suffix.count,
                  raw[header.tablesOffset...].allSatisfy({ $0 == 0 })
            else { return nil }
            if options.verifiesChecksum, header.checksum(of: raw) != header.storedChecksum { return nil }
            let start = raw.baseAddress! + reader.pos
            let count = Int(n)
            guard sharing, count >= minimumSharedCount else { return Data(bytes: start, count: count) }
            // A `Data` this large keeps its bytes on the heap, where they stay while `owner`
            // lives; the deallocator holds it.
            let owner = archive
            return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: start), count: count,
                        deallocator: .custom { _, _ in withExtendedLifetime(owner) {} })
        }
    }

    /// The smallest root `Data` ``rootData(of:sharing:options:)`` shares rather than copies: a
    /// copy of less costs about what the shared `Data`'s deallocator does.
    package static let minimumSharedCount = 4096
}
