import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The append-only change log of a ``RecordStore``, plus its snapshot file.
///
/// `records.log` is a 16-byte header (`"ARVL"`, version u16 = 1, flags u16 = 0, generation
/// u64, little-endian) followed by entries, each a u32 little-endian length and a native
/// archive (which carries its own CRC32C). An entry is committed once its bytes are written
/// (and synced, per the durability); replay stops at the first incomplete or corrupt entry.
final class ChangeLog {
    static let magic: [UInt8] = Array("ARVL".utf8)
    static let headerSize = 16

    let logPath: String
    let snapshotPath: String
    let directory: String
    let durability: Durability
    let fileSystem: FileSystem
    private var fd: Int32
    /// Bytes of entries after the header.
    private(set) var size: Int
    private(set) var generation: UInt64
    /// A generation the log must be reset to before anything is appended: set once a newer
    /// snapshot is in place, cleared when a reset completes. Appending to the old log would
    /// write entries the next open discards as already folded in.
    private var resetPending: UInt64?
    /// Whether a failed append may have left bytes past `size` that could not be cut off.
    private var tailDamaged = false

    private init(directory: String, durability: Durability, fileSystem: FileSystem, fd: Int32, size: Int, generation: UInt64) {
        self.directory = directory
        logPath = directory + "/records.log"
        snapshotPath = directory + "/records.snapshot"
        self.durability = durability
        self.fileSystem = fileSystem
        self.fd = fd
        self.size = size
        self.generation = generation
    }

    deinit { _ = fileSystem.close(fd) }

    /// Opens the log in `directory` (creating folder and log), sweeps leftover temporaries,
    /// and reads the snapshot's bytes if there is one.
    static func open(
        directory url: URL, durability: Durability, fileSystem: FileSystem = .posix
    ) throws -> (log: ChangeLog, snapshot: Data?) {
        let directory = url.standardizedFileURL.path
        try fileSystem.makeDirectories(directory)
        TemporaryName.sweepAbandoned(inFolder: directory, fileSystem: fileSystem)
        let snapshot = try AtomicFile.read(path: directory + "/records.snapshot", fileSystem: fileSystem).map { Data($0) }
        let logPath = directory + "/records.log"
        var header = try AtomicFile.read(path: logPath, limit: headerSize, fileSystem: fileSystem)
        if header == nil || header!.count < headerSize {
            // Missing, or torn while being created: start an empty log of generation 0. (A
            // snapshot of a later generation makes the caller reset it again.)
            let fresh = makeHeader(generation: 0)
            try fresh.withUnsafeBytes { raw in
                _ = try AtomicFile.write([raw], toPath: logPath, durability: durability, fileSystem: fileSystem)
            }
            header = fresh
        }
        guard let header, Array(header[0..<4]) == magic, header[4] == 1, header[5] == 0, header[6] == 0, header[7] == 0 else {
            throw StoreError(.corrupt, "records.log has an unknown header", fileURL: URL(fileURLWithPath: logPath))
        }
        let generation = header[8..<16].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        let fd = fileSystem.open(logPath, O_RDWR | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CacheError.posix("open", path: logPath, errno: errno) }
        var status = stat()
        guard fileSystem.fstat(fd, &status) == 0 else {
            _ = fileSystem.close(fd)
            throw CacheError.posix("fstat", path: logPath, errno: errno)
        }
        let log = ChangeLog(
            directory: directory, durability: durability, fileSystem: fileSystem, fd: fd,
            size: Int(status.st_size) - headerSize, generation: generation)
        return (log, snapshot)
    }

    static func makeHeader(generation: UInt64) -> [UInt8] {
        var bytes = magic + [1, 0, 0, 0]
        withUnsafeBytes(of: generation.littleEndian) { bytes += $0 }
        return bytes
    }

    /// Decodes every complete entry in order and hands it to `apply`. A torn or corrupt tail is
    /// copied to a quarantine file and cut off the log.
    func replay<Entry: Archivable>(
        as type: Entry.Type, options: ArchiveOptions, apply: (Entry) -> Void
    ) throws -> (bytes: Int, url: URL)? {
        guard let bytes = try AtomicFile.read(path: logPath, fileSystem: fileSystem) else { return nil }
        var offset = Self.headerSize
        var damagedAt: Int?
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { damagedAt = offset; break }
            let length = bytes[offset..<(offset + 4)].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            guard length <= bytes.count - offset - 4 else { damagedAt = offset; break }
            let start = offset + 4
            do {
                let entry = try Archive.decode(Entry.self, from: Data(bytes[start..<(start + length)]), options: options)
                apply(entry)
            } catch {
                damagedAt = offset
                break
            }
            offset = start + length
        }
        guard let damagedAt else { return nil }
        let quarantine = URL(fileURLWithPath: directory + "/records.log.quarantine-\(UInt64(Date().timeIntervalSince1970 * 1_000))")
        try Data(bytes[damagedAt...]).withUnsafeBytes { raw in
            _ = try AtomicFile.write([raw], toPath: quarantine.path, durability: durability, fileSystem: fileSystem)
        }
        try truncate(to: damagedAt)
        return (bytes.count - damagedAt, quarantine)
    }

    /// Appends one entry; on failure the log is cut back so no partial entry stays.
    ///
    /// A reset or a cut that failed earlier is finished first; if it fails again, nothing is
    /// appended.
    func append(_ entry: Data) throws {
        try repair()
        var frame = [UInt8]()
        frame.reserveCapacity(entry.count + 4)
        withUnsafeBytes(of: UInt32(entry.count).littleEndian) { frame += $0 }
        frame += entry
        let before = size
        do {
            try frame.withUnsafeBytes { raw in
                try AtomicFile.writeAll(raw, to: fd, path: logPath, fileSystem: fileSystem)
            }
            if durability != .none && fileSystem.fsync(fd) != 0 {
                throw CacheError.posix("fsync change log", path: logPath, errno: errno)
            }
            size += frame.count
        } catch {
            do {
                try truncate(to: Self.headerSize + before)
            } catch {
                tailDamaged = true
            }
            throw error
        }
    }

    /// Finishes a reset or a cut that failed earlier.
    private func repair() throws {
        if let target = resetPending {
            do {
                try reset(generation: target)
            } catch {
                // A reset that completed but could not sync its folder has done its job here.
                if resetPending != nil { throw error }
            }
        }
        if tailDamaged {
            try truncate(to: Self.headerSize + size)
            tailDamaged = false
        }
    }

    /// Records that a snapshot of `generation` is in place, so the log must be reset to it
    /// before the next append.
    func requireReset(generation: UInt64) {
        resetPending = generation
    }

    /// Replaces the log with an empty one of `generation` (after a compaction).
    ///
    /// Until it completes, ``append(_:)`` retries it first rather than write to the old log.
    /// - Throws: ``CacheError``; when only the folder sync failed, the reset is complete.
    func reset(generation: UInt64) throws {
        resetPending = generation
        let header = Self.makeHeader(generation: generation)
        let (_, folderSyncFailure) = try header.withUnsafeBytes { raw in
            try AtomicFile.replace([raw], toPath: logPath, durability: durability, fileSystem: fileSystem)
        }
        let newFD = fileSystem.open(logPath, O_RDWR | O_APPEND | O_CLOEXEC, 0o600)
        guard newFD >= 0 else { throw CacheError.posix("open", path: logPath, errno: errno) }
        _ = fileSystem.close(fd)
        fd = newFD
        size = 0
        self.generation = generation
        resetPending = nil
        tailDamaged = false
        if let folderSyncFailure { throw folderSyncFailure }
    }

    private func truncate(to length: Int) throws {
        guard fileSystem.ftruncate(fd, off_t(length)) == 0 else {
            throw CacheError.posix("truncate change log", path: logPath, errno: errno)
        }
        if durability != .none { _ = fileSystem.fsync(fd) }
        size = length - Self.headerSize
    }
}

// Safety: `fd`, `size`, `generation`, `resetPending` and `tailDamaged` change only inside `RecordStore.writeLock` (and in
// `open`/`replay` before the store is shared).
extension ChangeLog: @unchecked Sendable {}
