import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Large payloads checksummed as they are written.
///
/// An entry's header holds its payload's CRC32C (and a `Data` value's archive holds its own in
/// its prefix), so a write that knows the checksum first reads the whole value from memory for
/// it, then again for the kernel's copy into the page cache: for 10 MB, 0.3–0.4 ms of a write
/// that costs about 3 ms. A payload of ``DiskStore/checksumWhileWritingThreshold`` bytes or
/// more is instead written a chunk of ``DiskStore/checksumChunkSize`` at a time past the room
/// left for the bytes that depend on the checksum, each chunk checksummed just before it is
/// written, so the kernel's copy reads it from cache; those bytes (the entry header, the
/// archive's prefix) are written last, at the start of the file, with one `pwritev`. The file
/// is the same byte for byte, and still a private temporary until the rename, synced before it
/// as ``Durability`` asks: a crash at any point leaves the old entry or the new one.
///
/// Measured on ext4 (Linux 6.18, AMD EPYC, 2 MiB L2): 10 MB writes 3–8 % faster by median,
/// 16 MB 9 %; 6 MB and less no faster, 1–2 MB slightly slower (the value still fits the
/// last-level cache after a pass over it), hence the threshold. Chunks end at file offsets that
/// are multiples of their size: unaligned 256 KiB writes left the page cache smaller folios,
/// and made both the write and later reads of the file slower than one `writev` (+30 %).
/// Checksumming each chunk after writing it, or on another thread during one write, measured
/// no better.
extension DiskStore {
    /// How a write learns its payload's CRC32C.
    package enum PayloadChecksum {
        /// Known before the write.
        case known(UInt32)
        /// Computed while the payload, all in its middle piece, is written.
        case ofValue
        /// Computed while the value is written, for a payload that is a root `Data`'s archive
        /// in the pieces of ``Archive/dataPieces(deferringChecksumOfCount:options:)``: its
        /// prefix is `prefix` (pieces.0, memory the caller lets the write change), which the
        /// write completes (``Archive/DataPieces/complete(prefix:valueChecksum:valueCount:)``)
        /// before writing it.
        case ofRootDataArchive(prefix: UnsafeMutableRawBufferPointer)
    }

    /// The smallest payload checksummed while it is written; below it one `writev` writes
    /// the entry (no extra system calls for small values), its checksum computed first.
    package static let checksumWhileWritingThreshold = 8 << 20

    /// The bytes checksummed then written at a time (the first chunk is shorter, so that every
    /// chunk ends at a file offset that is a multiple of this): small enough to stay in the
    /// core's L2 cache between the two passes, large enough for the page cache's large folios
    /// (1 MiB measured best, against 256 KiB and 2 MiB).
    package static let checksumChunkSize = 1 << 20

    /// Writes the entry to a fresh temporary as ``AtomicFile/prepare(_:toPath:durability:createFolders:spares:fileSystem:below:)``
    /// does, checksumming `pieces.1` chunk by chunk as it goes (see the extension's comment),
    /// then the header (`header`, given the payload's checksum) and `pieces.0` at offset 0 —
    /// `archivePrefix`, when given, completed first.
    ///
    /// - Throws: ``CacheError`` as `prepare`; no temporary is left then.
    /// - Complexity: Blocking file I/O, O(payload): one `pwrite` per chunk, one `pwritev`.
    func prepareChecksummingWhileWriting(
        _ pieces: PayloadPieces, header: EntryHeader, archivePrefix: UnsafeMutableRawBufferPointer?,
        toPath path: String, durability: Durability
    ) throws -> AtomicFile.Prepared {
        let fs = fileSystem
        let seed = archivePrefix.map { Archive.DataPieces.checksumSeed(ofPrefix: UnsafeRawBufferPointer($0)) } ?? 0
        let headerCount = EntryHeader.encodedCount(typeName: header.typeName, parameter: header.parameter)
        return try AtomicFile.prepare(toPath: path, durability: durability, spares: spares, fileSystem: fs, below: root) { fd, temporary in
            let value = pieces.1, valueStart = headerCount + pieces.0.count
            var sum = seed, offset = 0
            repeat {
                // Chunks end at file offsets that are multiples of the chunk size: the page
                // cache then gets the large folios one write of the whole file gets.
                let fileEnd = ((valueStart + offset) / Self.checksumChunkSize + 1) * Self.checksumChunkSize
                let end = min(fileEnd - valueStart, value.count)
                let chunk = UnsafeRawBufferPointer(rebasing: value[offset..<end])
                sum = CRC32C.checksum(chunk, seed: sum)   // then the kernel copies it from cache
                let at = off_t(valueStart + offset)
                if end < value.count {
                    try AtomicFile.writeAll(chunk, to: fd, at: at, path: temporary, fileSystem: fs)
                } else {   // the last chunk, with the payload's last piece
                    try AtomicFile.writeAll([chunk, pieces.2], to: fd, at: at, path: temporary, fileSystem: fs)
                }
                offset = end
            } while offset < value.count
            var completed = header
            completed.payloadChecksum = archivePrefix.map {
                Archive.DataPieces.complete(prefix: $0, valueChecksum: sum, valueCount: value.count)
            } ?? sum
            let head = completed.encoded()
            assert(head.count == headerCount, "the entry header was sized wrong")
            try head.withUnsafeBytes { head in
                try AtomicFile.writeAll([head, pieces.0], to: fd, at: 0, path: temporary, fileSystem: fs)
            }
        }
    }
}
