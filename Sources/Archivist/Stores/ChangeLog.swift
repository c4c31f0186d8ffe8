import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The append-only change log of a ``RecordStore``, plus its snapshot file.
///
/// `records.log` (format version 2) is a 24-byte header — `"ARVL"`, version u16 = 2, flags
/// u16 = 0, generation u64, the CRC32C of those 16 bytes u32, zero u32; little-endian —
/// followed by entries, each a u32 little-endian length and a native archive (which carries
/// its own CRC32C). Version 1 logs (a 16-byte header without the checksum) are still read
/// and appended to until their next reset, which writes version 2. See
/// `docs/ArchiveFormat.md`.
///
/// The header's generation says which snapshot the entries apply to. A log is discarded
/// only with proof that it is folded in (a checksummed generation older than the snapshot's,
/// or no entries at all); anything else that does not fit — a header whose checksum fails, a
/// generation newer than the snapshot's, an old unchecksummed log with entries — is moved to
/// a quarantine file and reported.
final class ChangeLog {
    static let magic: [UInt8] = Array("ARVL".utf8)
    /// The header of version 2 logs, which this code writes.
    static let headerSize = 24
    /// The header of version 1 logs (no checksum).
    static let legacyHeaderSize = 16
    /// The largest entry a frame can hold: its length is a u32.
    static let maxEntryBytes = Int(clamping: UInt32.max)

    let logPath: String
    let snapshotPath: String
    let directory: String
    let durability: Durability
    let fileSystem: FileSystem
    /// The largest entry ``append(_:)`` accepts: ``maxEntryBytes``, lower in tests.
    let entryLimit: Int
    private var fd: Int32 = -1
    /// The header size of the open log (16 for a version 1 log, else 24).
    private(set) var headerSize = ChangeLog.headerSize
    /// The generation in the open log's header.
    private(set) var generation: UInt64 = 0
    /// The file offset just past the last entry read or appended.
    private(set) var end = ChangeLog.headerSize
    /// A generation the log must be reset to before anything is appended: set once a newer
    /// snapshot is in place, cleared when a reset completes. Appending to the old log would
    /// write entries the next open discards as already folded in.
    private var resetPending: UInt64?
    /// Whether a failed append may have left bytes past `end` that could not be cut off.
    private var tailDamaged = false
    /// Whether a load failed midway, so that what was read may not have reached the
    /// records in memory: the next catch-up must load again.
    private var loadIncomplete = false
    /// Descriptors of logs replaced since ``closeReplacedLogs()`` last ran: closing the last
    /// descriptor of an unlinked log frees its blocks, O(its size) in the kernel, which the
    /// store does once the cross-process lock is released rather than in the hold.
    private var replacedDescriptors: [Int32] = []

    /// Bytes of entries after the header.
    var size: Int { end - headerSize }

    /// A log in `url` (the folder is created 0700); nothing is read until
    /// ``load(snapshotGeneration:as:options:apply:)``. Temporaries of dead writers are swept.
    init(
        directory url: URL,
        durability: Durability,
        fileSystem: FileSystem = .posix,
        entryLimit: Int = ChangeLog.maxEntryBytes
    ) throws {
        precondition(entryLimit <= Self.maxEntryBytes, "a frame's length is a u32")
        self.entryLimit = entryLimit
        var directory = url.standardizedFileURL.path
        directory.makeContiguousUTF8()  // a bridged `NSString` on iOS 16 and 17
        self.directory = directory
        logPath = directory + "/records.log"
        snapshotPath = directory + "/records.snapshot"
        self.durability = durability
        self.fileSystem = fileSystem
        try fileSystem.makeDirectories(directory)
        TemporaryName.sweepAbandoned(inFolder: directory, fileSystem: fileSystem)
    }

    deinit {
        if fd >= 0 { _ = fileSystem.close(fd) }
        closeReplacedLogs()
    }

    /// Closes the descriptors of the logs replaced since the last call (see
    /// ``replacedDescriptors``). Call outside the cross-process lock.
    ///
    /// - Complexity: One `close` per replaced log, each O(its size) in the kernel.
    func closeReplacedLogs() {
        for descriptor in replacedDescriptors { _ = fileSystem.close(descriptor) }
        replacedDescriptors.removeAll()
    }

    /// The snapshot's bytes, or `nil` when there is none.
    func readSnapshot() throws -> Data? {
        try AtomicFile.read(path: snapshotPath, fileSystem: fileSystem).map { Data($0) }
    }

    /// The snapshot's bytes with the descriptor they were read from, left open (the caller
    /// closes it through ``fileSystem``) so that its inode stays the snapshot's: a later
    /// ``isSnapshot(pinnedBy:)`` tells whether the file at ``snapshotPath`` is still that one.
    /// `nil` when there is no snapshot.
    ///
    /// - Complexity: O(n) blocking file I/O.
    func readSnapshotPinned() throws -> (bytes: Data, pin: Int32)? {
        let fd = fileSystem.open(snapshotPath, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0)
        if fd < 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw StorageError.posix("open", path: snapshotPath, errno: code)
        }
        do {
            var status = stat()
            guard fileSystem.fstat(fd, &status) == 0 else {
                throw StorageError.posix("fstat", path: snapshotPath, errno: errno)
            }
            guard status.st_mode & S_IFMT == S_IFREG else {
                throw StorageError(.corruptEntry, "not a regular file", fileURL: URL(fileURLWithPath: snapshotPath))
            }
            var bytes = Data(count: Int(clamping: Int64(status.st_size)))
            let read = try bytes.withUnsafeMutableBytes { try fileSystem.readFully(fd, into: $0, path: snapshotPath) }
            bytes.count = read
            return (bytes, fd)
        } catch {
            _ = fileSystem.close(fd)
            throw error
        }
    }

    /// Whether the file at ``snapshotPath`` is the one open as `pin` (`-1`: whether there is
    /// none). A snapshot is only ever replaced by a rename, so the same file has the same
    /// bytes; the open descriptor keeps its inode number from going to another file.
    ///
    /// - Complexity: A `stat` and an `fstat`.
    func isSnapshot(pinnedBy pin: Int32) -> Bool {
        var there = stat()
        let found = stat(snapshotPath, &there) == 0
        guard pin >= 0 else { return !found && (errno == ENOENT || errno == ENOTDIR) }
        var pinned = stat()
        return found && fileSystem.fstat(pin, &pinned) == 0 && pinned.st_dev == there.st_dev
            && pinned.st_ino == there.st_ino
    }

    /// A version 2 header of `generation`.
    static func makeHeader(generation: UInt64) -> [UInt8] {
        var bytes = magic + [2, 0, 0, 0]
        withUnsafeBytes(of: generation.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: CRC32C.checksum(bytes).littleEndian) { bytes += $0 }
        return bytes + [0, 0, 0, 0]
    }

    /// What a log's first bytes say.
    enum Header: Equatable {
        /// No log, or fewer bytes than a header: no entries.
        case absent
        /// A readable header.
        case valid(version: Int, generation: UInt64)
        /// A version 2 header whose checksum fails.
        case damaged
    }

    /// Reads a header from the start of `bytes`.
    ///
    /// - Throws: ``StoreError`` `corrupt` when the bytes are not a change log or of an unknown version.
    func parseHeader(_ bytes: [UInt8]) throws -> Header {
        guard bytes.count >= Self.legacyHeaderSize else { return .absent }
        guard Array(bytes[0..<4]) == Self.magic, bytes[5] == 0, bytes[6] == 0, bytes[7] == 0,
            bytes[4] == 1 || bytes[4] == 2
        else {
            throw StoreError(.corrupt, "records.log has an unknown header", fileURL: URL(fileURLWithPath: logPath))
        }
        let generation = Self.uint64(bytes, at: 8)
        guard bytes[4] == 2 else { return .valid(version: 1, generation: generation) }
        guard bytes.count >= Self.headerSize,
            Self.uint32(bytes, at: 16) == CRC32C.checksum(bytes[0..<16]), Self.uint32(bytes, at: 20) == 0
        else { return .damaged }
        return .valid(version: 2, generation: generation)
    }

    /// Opens the log afresh and replays it onto a snapshot of `snapshotGeneration`: every
    /// complete entry goes to `apply`. Whatever cannot be trusted is quarantined and its size
    /// and file returned: a torn or corrupt tail; or the whole log when its header is damaged,
    /// its generation is newer than the snapshot's, or it is an unchecksummed version 1 log
    /// whose entries the generation alone would discard.
    /// An intact entry that does not decode with `options` throws ``StoreError`` `corrupt` and
    /// changes nothing.
    func load<Entry: Archivable>(
        snapshotGeneration: UInt64,
        as type: Entry.Type,
        options: ArchiveOptions,
        apply: (Entry) -> Void
    ) throws -> (bytes: Int, url: URL)? {
        resetPending = nil
        tailDamaged = false
        loadIncomplete = true
        try reopen()
        let bytes = try readFromFD(offset: 0)
        let damage = try trust(bytes, snapshotGeneration: snapshotGeneration, as: type, options: options, apply: apply)
        loadIncomplete = false
        return damage
    }

    /// The body of ``load(snapshotGeneration:as:options:apply:)``: judges the log's `bytes`.
    private func trust<Entry: Archivable>(
        _ bytes: [UInt8],
        snapshotGeneration: UInt64,
        as type: Entry.Type,
        options: ArchiveOptions,
        apply: (Entry) -> Void
    ) throws -> (bytes: Int, url: URL)? {
        switch try parseHeader(bytes) {
        case .absent:
            try reset(generation: snapshotGeneration)
            return nil
        case .damaged:
            return try quarantineAll(bytes, from: 0, generation: snapshotGeneration)
        case .valid(let version, let logGeneration):
            headerSize = version == 1 ? Self.legacyHeaderSize : Self.headerSize
            generation = logGeneration
            end = headerSize
            if logGeneration > snapshotGeneration {
                return try quarantineAll(bytes, from: 0, generation: snapshotGeneration)
            }
            if logGeneration < snapshotGeneration {
                // Version 2: a checksummed older generation proves a compaction folded it in.
                // Version 1: only an empty log is proof that nothing is lost.
                if version == 1 && bytes.count > headerSize {
                    return try quarantineAll(bytes, from: headerSize, generation: snapshotGeneration)
                }
                try reset(generation: snapshotGeneration)
                return nil
            }
            return try replay(bytes, from: headerSize, as: type, options: options, apply: apply)
        }
    }

    /// Reads and applies the entries appended after ``end`` (by another process); a torn or
    /// corrupt tail — possible only when its writer died, since every append holds the
    /// store's file lock — is quarantined and cut off.
    ///
    /// With `settingAside` false (a caller holding the lock shared, which must not change the
    /// file) the entries before such a tail are applied, the tail is left as it is, and
    /// ``NeedsExclusiveLock`` is thrown: a holder of the exclusive lock sets it aside.
    ///
    /// - Returns: The quarantined tail, if any.
    func readNewEntries<Entry: Archivable>(
        as type: Entry.Type,
        options: ArchiveOptions,
        settingAside: Bool = true,
        apply: (Entry) -> Void
    ) throws -> (bytes: Int, url: URL)? {
        let bytes = try readFromFD(offset: end)
        guard !bytes.isEmpty else { return nil }
        return try replay(
            bytes,
            from: 0,
            fileOffset: end,
            as: type,
            options: options,
            settingAside: settingAside,
            apply: apply
        )
    }

    /// Thrown to a holder of the shared lock when what it found needs a change to the files,
    /// which only a holder of the exclusive lock may make: a damaged tail to set aside
    /// (``readNewEntries(as:options:settingAside:apply:)``), a log replaced by a compaction.
    struct NeedsExclusiveLock: Error {}

    /// How the log file at ``logPath`` compares with what this log has read.
    enum FileState {
        /// The same file, of the expected generation, with nothing past ``end``.
        case current
        /// The same file with entries past ``end`` (another process appended).
        case grown
        /// Another file or generation, or a pending repair: reload from disk.
        case replaced
    }

    /// Compares the file at ``logPath`` with the open one and what was read of it.
    ///
    /// Every replacement of the log (a compaction's reset, a quarantine) renames a new file
    /// over ``logPath``, which unlinks the open one: a link count of 0 on the open descriptor
    /// says the log was replaced, so one `fstat` answers both questions.
    ///
    /// - Complexity: One `fstat`.
    func state(expectedGeneration expected: UInt64) -> FileState {
        guard fd >= 0, resetPending == nil, !tailDamaged, !loadIncomplete, generation == expected else {
            return .replaced
        }
        var open = stat()
        guard fileSystem.fstat(fd, &open) == 0, open.st_nlink > 0 else { return .replaced }
        if Int64(open.st_size) == Int64(end) { return .current }
        return Int64(open.st_size) > Int64(end) ? .grown : .replaced
    }

    /// Appends one entry; on failure the log is cut back so no partial entry stays.
    ///
    /// A reset or a cut that failed earlier is finished first; if it fails again, nothing is
    /// appended.
    ///
    /// - Throws: ``StoreError`` `notRepresentable` when the entry is larger than a frame's u32
    ///   length can say (``entryLimit``), before anything is written; else what the file
    ///   system reports.
    func append(_ entry: Data) throws {
        try checkEntrySize(entry.count)
        try repair()
        var frame = [UInt8]()
        frame.reserveCapacity(entry.count + 4)
        withUnsafeBytes(of: UInt32(entry.count).littleEndian) { frame += $0 }
        frame += entry
        let before = end
        do {
            try frame.withUnsafeBytes { raw in
                try AtomicFile.writeAll(raw, to: fd, path: logPath, fileSystem: fileSystem)
            }
            if durability != .none && fileSystem.fsync(fd) != 0 {
                throw StorageError.posix("fsync change log", path: logPath, errno: errno)
            }
            end += frame.count
        } catch {
            do {
                try truncate(to: before)
            } catch {
                tailDamaged = true
            }
            throw error
        }
    }

    /// Refuses an entry of `count` bytes that a frame cannot hold: its length would not fit
    /// in the u32 before it (a batch of more than 4 GiB, reachable only with
    /// `ArchiveLimits.maxTotalBytes` raised above that).
    func checkEntrySize(_ count: Int) throws {
        guard count > entryLimit else { return }
        throw StoreError(
            .notRepresentable,
            "the batch archives to \(count) bytes, more than the \(entryLimit) one change-log entry holds; "
                + "save it as several smaller batches",
            fileURL: URL(fileURLWithPath: logPath),
            underlyingError: ArchiveError(.limitExceeded(.totalBytes), "\(count) bytes, limit \(entryLimit)")
        )
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
            try truncate(to: end)
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
    /// - Throws: ``StorageError``; when only the folder sync failed, the reset is complete.
    func reset(generation: UInt64) throws {
        resetPending = generation
        let header = Self.makeHeader(generation: generation)
        let (_, folderSyncFailure) = try header.withUnsafeBytes { raw in
            try AtomicFile.replace([raw], toPath: logPath, durability: durability, fileSystem: fileSystem)
        }
        try reopen()
        headerSize = Self.headerSize
        end = headerSize
        self.generation = generation
        resetPending = nil
        tailDamaged = false
        if let folderSyncFailure { throw folderSyncFailure }
    }

    // MARK: - Reading and quarantining

    /// Opens the file at ``logPath`` (creating it empty if missing) in place of the open one.
    private func reopen() throws {
        let newFD = fileSystem.open(logPath, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard newFD >= 0 else { throw StorageError.posix("open", path: logPath, errno: errno) }
        var status = stat()
        if fileSystem.fstat(newFD, &status) == 0, status.st_mode & 0o777 != 0o600 {
            _ = fileSystem.fchmod(newFD, 0o600)  // the umask may have stripped bits
        }
        if fd >= 0 { replacedDescriptors.append(fd) }  // closed once the lock is released
        fd = newFD
    }

    /// The open log's bytes from `offset` to its end.
    private func readFromFD(offset: Int) throws -> [UInt8] {
        var status = stat()
        guard fileSystem.fstat(fd, &status) == 0 else { throw StorageError.posix("fstat", path: logPath, errno: errno) }
        let capacity = max(0, Int(clamping: Int64(status.st_size)) - offset)
        guard capacity > 0 else { return [] }
        guard lseek(fd, off_t(offset), SEEK_SET) >= 0 else {
            throw StorageError.posix("lseek", path: logPath, errno: errno)
        }
        return try [UInt8].uninitialized(capacity: capacity) { buffer in
            try fileSystem.readFully(fd, into: UnsafeMutableRawBufferPointer(buffer), path: logPath)
        }
    }

    /// Decodes the entries in `bytes` from `start` (`bytes[0]` is at file offset
    /// `fileOffset`), applying each and advancing ``end``; quarantines a bad tail.
    private func replay<Entry: Archivable>(
        _ bytes: [UInt8],
        from start: Int,
        fileOffset: Int = 0,
        as type: Entry.Type,
        options: ArchiveOptions,
        settingAside: Bool = true,
        apply: (Entry) -> Void
    ) throws -> (bytes: Int, url: URL)? {
        var offset = start
        var damagedAt: Int?
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else {
                damagedAt = offset
                break
            }
            let length = Int(clamping: Self.uint32(bytes, at: offset))
            guard length <= bytes.count - offset - 4 else {
                damagedAt = offset
                break
            }
            let entryStart = offset + 4
            let entryBytes = Data(bytes[entryStart..<(entryStart + length)])
            do {
                apply(try Archive.decode(Entry.self, from: entryBytes, options: options))
            } catch {
                // An entry whose bytes are as written but that this store cannot read (a type
                // its allowlist refuses, a rename or limit it lacks, a newer format) is not
                // damage: quarantining it would take every later committed entry with it.
                // It stays, and so does everything after it, until the configuration reads it.
                guard !Archive.isIntact(entryBytes) else {
                    throw StoreError(
                        .corrupt,
                        "the change-log entry at byte \(fileOffset + offset) is intact but this store cannot decode it, "
                            + "so the log is left as it is; open the store with options that read it "
                            + "(allowedTypes, renamedTypes, limits) or a record type that does",
                        fileURL: URL(fileURLWithPath: logPath),
                        underlyingError: error as? ArchiveError
                    )
                }
                damagedAt = offset
                break
            }
            offset = entryStart + length
            end = fileOffset + offset
        }
        guard let damagedAt else { return nil }
        guard settingAside else { throw NeedsExclusiveLock() }
        let url = try quarantine(bytes[damagedAt...])
        try truncate(to: fileOffset + damagedAt)
        return (bytes.count - damagedAt, url)
    }

    /// Copies `bytes[start...]` to a quarantine file and starts an empty log of `generation`.
    private func quarantineAll(_ bytes: [UInt8], from start: Int, generation: UInt64) throws -> (bytes: Int, url: URL) {
        let url = try quarantine(bytes[start...])
        try reset(generation: generation)
        return (bytes.count - start, url)
    }

    /// Writes `bytes` to a new `records.log.quarantine-<milliseconds>-<pid>-<n>` file.
    private func quarantine(_ bytes: ArraySlice<UInt8>) throws -> URL {
        let serial = Self.quarantineCounter.withLock { value -> Int in
            value += 1
            return value
        }
        let name = "records.log.quarantine-\(UInt64(Date().timeIntervalSince1970 * 1_000))-\(getpid())-\(serial)"
        let url = URL(fileURLWithPath: directory + "/" + name)
        _ = try bytes.withUnsafeBytes { raw in
            try AtomicFile.replace([raw], toPath: url.path, durability: durability, fileSystem: fileSystem)
        }
        return url
    }

    private static let quarantineCounter = Locked(0)

    private func truncate(to length: Int) throws {
        guard fileSystem.ftruncate(fd, off_t(length)) == 0 else {
            throw StorageError.posix("truncate change log", path: logPath, errno: errno)
        }
        if durability != .none { _ = fileSystem.fsync(fd) }
        end = length
    }

    private static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }

    private static func uint64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }
}

// Safety: every `var` changes only inside `RecordStore.writeLock` (and in `load` before the
// store is shared).
extension ChangeLog: @unchecked Sendable {}
