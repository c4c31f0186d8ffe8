/// The parsed header of a native archive, version 1, 2 or 3. See `docs/ArchiveFormat.md`.
///
/// Version 2 (what the encoder writes) stores the lengths as varints after a 10-byte fixed
/// part, so a one-record archive carries 12 to 13 header bytes instead of version 1's 28;
/// version 1 archives (caches written before) are still read.
struct ArchiveHeader {
    /// 1, 2 or 3 (version 2's layout, with `Decimal` values).
    let version: UInt16
    /// Where the root value starts: the end of the header.
    let bodyStart: Int
    /// Where the tables start, which is where the body ends.
    let tablesOffset: Int
    /// Where the checksummed bytes start (they run to the end of the archive).
    let checksumStart: Int
    /// The CRC32C the header stores.
    let storedChecksum: UInt32

    /// Checks the magic, version, lengths and offsets against `bytes` (everything but the
    /// checksum, which ``checksumMatches(_:)`` verifies).
    ///
    /// - Throws: ``ArchiveError`` with code `badMagic`, `unsupportedVersion`, `truncated`
    ///   (the archive claims more bytes than `bytes` holds) or `corrupt`.
    init(parsing bytes: UnsafeRawBufferPointer) throws {
        let count = bytes.count
        guard let base = bytes.baseAddress, count >= 6 else {
            if count >= 4, let base = bytes.baseAddress, !Self.hasMagic(base) {
                throw ArchiveError(.badMagic, "not a native archive (magic bytes differ)", offset: 0)
            }
            throw ArchiveError(.truncated, "\(count) bytes is shorter than the archive header", offset: count)
        }
        guard Self.hasMagic(base) else {
            throw ArchiveError(.badMagic, "not a native archive (magic bytes differ)", offset: 0)
        }
        var reader = ByteReader(base: base, start: 4, end: count)
        version = try reader.fixed(UInt16.self)
        let total: UInt64
        let tables: UInt64
        switch version {
        case 1:
            guard count >= ArchiveFormat.version1HeaderSize else {
                throw ArchiveError(.truncated, "\(count) bytes is shorter than the archive header", offset: count)
            }
            let flags = try reader.fixed(UInt16.self)
            guard flags == 0 else {
                throw ArchiveError(.unsupportedVersion, "format version 1 with flags \(flags)", offset: 6)
            }
            total = try reader.fixed(UInt64.self)
            tables = try reader.fixed(UInt64.self)
            storedChecksum = try reader.fixed(UInt32.self)
            checksumStart = ArchiveFormat.version1HeaderSize
        case ArchiveFormat.version, ArchiveFormat.decimalVersion:  // one layout
            storedChecksum = try reader.fixed(UInt32.self)
            checksumStart = reader.pos
            total = try reader.varint()
            let bodyLength = try reader.varint()
            // Saturating: a huge length is caught as outside the archive below.
            let (sum, overflow) = bodyLength.addingReportingOverflow(UInt64(reader.pos))
            tables = overflow ? .max : sum
        default:
            throw ArchiveError(
                .unsupportedVersion,
                "format version \(version); this reader knows versions 1 to 3",
                offset: 4
            )
        }
        bodyStart = reader.pos
        guard total <= UInt64(count) else {
            throw ArchiveError(.truncated, "archive claims \(total) bytes, \(count) present", offset: count)
        }
        guard total == UInt64(count) else {
            throw ArchiveError(.corrupt, "\(UInt64(count) - total) bytes after the archive's end", offset: Int(total))
        }
        guard tables >= UInt64(bodyStart), tables <= total else {
            throw ArchiveError(.corrupt, "tables offset \(tables) outside the archive", offset: bodyStart)
        }
        tablesOffset = Int(tables)
    }

    /// The CRC32C of the checksummed bytes of `bytes` (the archive this header was parsed from).
    func checksum(of bytes: UnsafeRawBufferPointer) -> UInt32 {
        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[checksumStart...]))
    }

    /// The CRC32C of the whole archive, derived from the stored checksum: O(log n) instead of
    /// a pass over the bytes. Only as trustworthy as the stored checksum.
    func wholeArchiveChecksum(of bytes: UnsafeRawBufferPointer) -> UInt32 {
        let prefix = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<checksumStart]))
        return CRC32C.combine(prefix, storedChecksum, length: bytes.count - checksumStart)
    }

    private static func hasMagic(_ base: UnsafeRawPointer) -> Bool {
        base.load(fromByteOffset: 0, as: UInt8.self) == ArchiveFormat.magic.0
            && base.load(fromByteOffset: 1, as: UInt8.self) == ArchiveFormat.magic.1
            && base.load(fromByteOffset: 2, as: UInt8.self) == ArchiveFormat.magic.2
            && base.load(fromByteOffset: 3, as: UInt8.self) == ArchiveFormat.magic.3
    }
}
