import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Entry files under one root folder: atomic writes, checked reads, an O(1) size index and
/// O(1) clearing through a trash folder.
///
/// Every entry is a file `<root>/<folder>/<name>` holding an ``EntryHeader`` and a payload.
/// The store holds two parts that own their state:
/// - its ``PersistentIndex``: every entry's logical and allocated size and last access, so the
///   size of any folder is answered without touching the disk, kept exact across processes
///   (a shared journal appended under a short cross-process ``FileLock`` hold, folded by each
///   process when the shared change counter moves) and across crashes (the intent word in
///   ``SharedCounters``). Every file change of the store runs inside the index's
///   ``PersistentIndex/mutate(origin:target:_:change:)``, which takes that hold;
/// - its ``Trash``: where a clear renames folders, emptied in the background.
///
/// One store exists per root folder in a process (``open(at:fileSystem:backgroundRescanAbove:)`` shares it, by the
/// folder's device and inode, whatever path names it).
///
/// Concurrency: writing an entry's bytes holds only that key's lock; its rename (or unlink)
/// and journal record hold the cross-process lock for a few system calls; the index sits
/// behind a lock held for dictionary updates only. Clearing takes a shared/exclusive gate
/// exclusively for the moment of its renames, so no write of this process lands half inside a
/// folder being moved to the trash; a write of another process whose folder was moved away
/// writes its entry again (`DiskStore+EntryWrite.swift`).
///
/// ```swift
/// let store = try DiskStore.open(at: root)
/// let key = try EntryKey(folder: FolderPath(["shared-caches", MD5.hexDigest(of: "hots")]),
///                        typeName: "hots", parameter: nil)
/// try store.write(payload, to: key, expiry: nil, durability: .none)
/// let length = try store.read(key) { entry in entry.payloadBytes.count }   // nil: no entry
/// ```
package final class DiskStore: Sendable {
    /// The root folder's path, without a trailing slash.
    package let rootPath: String
    let fileSystem: FileSystem
    /// The root folder, open for the store's lifetime: every change below it goes through it
    /// (a write's temporary, rename and folders, a remove, a clear's rename into the trash,
    /// spare folders, the trash's walk, a scan) and a read opens the entry file relative to it
    /// (``AtomicFile/Root``), so a root renamed away while open is still the folder the store
    /// works in; a removed one is not (see `DiskStore+RootRelative.swift`). `nil` for a file
    /// system whose path calls a test replaced (``FileSystem/allowsRootRelativeCalls``), or
    /// when the folder cannot be opened (a root the process may not read).
    let root: AtomicFile.Root?
    /// The owner of ``root``'s descriptor, which closes it once neither the store, its index,
    /// its trash nor work they queued holds it.
    let openRoot: OpenRoot?
    /// The size index, its files and the cross-process lock every file change holds
    /// (``PersistentIndex``). The store changes the disk only inside its
    /// ``PersistentIndex/mutate(origin:target:_:change:)``.
    let index: PersistentIndex
    /// Where clears move folders, emptied in the background (``Trash``).
    let trash: Trash
    /// Set when the root refuses writes: it was opened for reading, and every write, removal
    /// or clear throws this (see `DiskStore+ReadOnly.swift`).
    var writeRefusal: StorageError? { index.writeRefusal }
    /// Each key's lock in this process: a write, read or removal of an entry holds its own.
    let keyLocks = KeyLocks()
    /// Held shared by every write and removal, exclusively by a clear for the moment of its
    /// renames (``clear(_:origin:completion:)``).
    let clearGate = SharedExclusiveLock()
    /// A payload in up to three pieces, written one after the other (a `Data` value's archive:
    /// the bytes before the value, the value, the bytes after it); a tuple, so that the callers
    /// build no array (the write gathers them with the entry header into one four-element array
    /// for `writev`).
    package typealias PayloadPieces = (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer)
    /// An entry read back: its checked header and its payload, in the buffer the file was
    /// read into.
    package struct Entry: Sendable {
        /// The entry's header.
        package var header: EntryHeader
        /// The whole file's bytes: the header, then the payload.
        package let file: FileBuffer
        /// Where the payload starts in ``file``.
        package let payloadStart: Int

        /// The payload bytes, valid as long as ``file`` lives (this entry, at least).
        package var payloadBytes: UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: file.bytes[payloadStart...])
        }
        /// The entry file's size, header included.
        package var fileSize: Int { file.bytes.count }
    }

    var internalPath: String { rootPath + "/.archivist" }
    /// The folder entry files are written in before they are renamed into place (see
    /// `DiskStore+EntryWrite.swift`): beside `.archivist` rather than in it, so that entries
    /// take the Data Protection class of the root, not the one `.archivist` is given.
    package let temporariesPath: String
    /// The name of ``temporariesPath`` in the root.
    package static let temporariesFolderName = ".archivist-temporaries"

    /// The stores of this process, keyed by their root folder's device and inode numbers: on a
    /// case- and normalization-insensitive volume (APFS and HFS+ as Apple platforms format
    /// them) `Shop`, `shop` and two spellings of "é" are one folder, as a symbolic link to it
    /// is, and two stores of one root in one process would keep two memory tiers and deadlock
    /// a thread that nests them on the root's `flock`. By the path's bytes only when the root
    /// cannot be looked up, or for a path kept apart (``keepApart(_:)``).
    private static let registry = Locked<[RegistryKey: WeakStore]>([:])

    /// What ``registry`` knows a root by.
    private enum RegistryKey: Hashable {
        case folder(FileIdentity.Key)
        case path(BytewiseString)

        /// The key of the root at `path`, as it is now.
        init(rootPath path: String) {
            if let identity = FileIdentity.statting(path), !DiskStore.pathsKeptApart.withLock({ $0.contains(path) }) {
                self = .folder(identity.key)
            } else {
                self = .path(BytewiseString(path))
            }
        }
    }

    /// Root paths whose stores are kept apart from this process's other stores of the same
    /// folder (``keepApart(_:)``).
    private static let pathsKeptApart = Locked<Set<String>>([])

    /// Makes a store opened at exactly `root`'s path, from now on, one of its own rather than
    /// the process's shared store of that folder: its own descriptors, lock, journal position
    /// and memory tiers, as another process's would be. Tests that act out several processes
    /// in one open the same root this way, each through its own symbolic link.
    package static func keepApart(_ root: URL) {
        _ = pathsKeptApart.withLock { $0.insert(normalizedRootPath(root)) }
    }

    /// `root`'s path as the store spells it: standardized, without a trailing slash, native
    /// UTF-8 (on iOS 16 and 17 `URL.path` is a bridged `NSString`, which every entry path
    /// built from it would convert again).
    private static func normalizedRootPath(_ root: URL) -> String {
        var path = root.standardizedFileURL.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        path.makeContiguousUTF8()
        return path
    }

    /// The store for `root`, opened (and its index loaded or rebuilt) on first use in this
    /// process and shared after that — by every path that names the same folder (see
    /// ``registry``). `fileSystem` applies only when the store is first opened.
    /// A store whose folder is no longer the one at `root` (renamed away, or removed and
    /// perhaps made again) is not handed out again: a new store opens the folder now there,
    /// as another process would, while the old one keeps serving its holders.
    ///
    /// With `backgroundRescanAbove`, a rescan the open finds due (a process died mid-change,
    /// the snapshot is missing or damaged) of a root whose last snapshot counted at least that
    /// many entries runs on a background queue instead of before this returns: reads are
    /// served meanwhile, and whatever needs the index — sizes, writes, removals, `flush()` —
    /// waits for the rescan (``rebuild`` reports its progress). A smaller root's rescan, or one
    /// whose size no snapshot tells, runs before the open returns, as without it.
    ///
    /// - Throws: ``StorageError`` when the root cannot be created or scanned.
    /// - Complexity: Blocking file I/O on first open: reads the index, or scans every entry
    ///   when the last run did not shut down cleanly; after that, an `fstat` and a `stat`.
    package static func open(
        at root: URL,
        fileSystem: FileSystem = .posix,
        backgroundRescanAbove: Int? = nil
    ) throws -> DiskStore {
        let path = normalizedRootPath(root)
        return try registry.withLock { stores in
            if let store = stores[RegistryKey(rootPath: path)]?.store, store.isAtItsPath { return store }
            let store = try DiskStore(
                rootPath: path,
                fileSystem: fileSystem,
                backgroundRescanAbove: backgroundRescanAbove
            )
            stores = stores.filter { $0.value.store != nil }
            // Looked up again: the open may have made the root.
            stores[RegistryKey(rootPath: path)] = WeakStore(store: store)
            return store
        }
    }

    private init(rootPath: String, fileSystem: FileSystem, backgroundRescanAbove: Int?) throws {
        self.rootPath = rootPath
        self.temporariesPath = rootPath + "/" + Self.temporariesFolderName
        self.fileSystem = fileSystem
        let folder = rootPath + "/.archivist"
        let refusal = try Self.makeInternalFolder(rootPath: rootPath, fileSystem: fileSystem)
        // The root's descriptor before any file in it, each then opened below it: a root
        // renamed away, or replaced by another folder, while this opens cannot give the store
        // one folder's journal and another's lock. A read-only root too: reading a folder's
        // descriptor needs no write permission, and its writes are refused all the same (the
        // `openat` fails as the path's `open` did).
        let rootFD =
            fileSystem.allowsRootRelativeCalls
            ? fileSystem.open(rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) : -1
        let openRoot =
            rootFD >= 0
            ? OpenRoot(AtomicFile.Root(descriptor: rootFD, path: rootPath), fileSystem: fileSystem) : nil
        let root = openRoot?.root
        let (marker, writeRefusal) = try Self.openMarker(
            rootPath: rootPath,
            refusal: refusal,
            fileSystem: fileSystem,
            below: root
        )
        // The index closes the marker, also when it throws; the root's descriptor closes with
        // `openRoot`.
        self.index = try PersistentIndex(
            rootPath: rootPath,
            fileSystem: fileSystem,
            openRoot: openRoot,
            markerFD: marker,
            writeRefusal: writeRefusal,
            sweepTemporaries: { below in
                DiskStore.sweepInternalTemporaries(rootPath: rootPath, fileSystem: fileSystem, below: below)
            }
        )
        self.trash = Trash(
            internalPath: folder,
            fileSystem: fileSystem,
            openRoot: openRoot,
            writable: writeRefusal == nil
        )
        self.openRoot = openRoot
        self.root = root
        Self.sweepInternalTemporaries(rootPath: rootPath, fileSystem: fileSystem, below: root)
        // Without the lock, reading the snapshot or scanning (they grow with the entries).
        if try index.load(backgroundRescanAbove: backgroundRescanAbove, keepingAlive: self) {
            sweepEntryTemporaries()
        }
        if writeRefusal == nil { trash.empty(completion: nil) }
    }

    /// The absolute path of `key`'s file.
    ///
    /// Built in one buffer, the digest's hex written in place: every read and write makes one,
    /// and appending the pieces (with the digest's own string) costs each of them several
    /// allocations and copies (the `cache-manager` suite's 1 KB set and get guard it).
    package func path(of key: DiskKey) -> String {
        var root = rootPath
        var folder = key.folder.relativePath
        return root.withUTF8 { root in
            folder.withUTF8 { folder in
                let count = root.count + folder.count + 2 + 32
                return String(unsafeUninitializedCapacity: count) { out in
                    var at = 0
                    out.put(root, at: &at)
                    out[at] = UInt8(ascii: "/")
                    at += 1
                    out.put(folder, at: &at)
                    out[at] = UInt8(ascii: "/")
                    at += 1
                    at += key.name.writeFileName(into: UnsafeMutableBufferPointer(rebasing: out[at...]))
                    return at
                }
            }
        }
    }

    /// Atomically writes an entry, then evicts least recently accessed entries of the same
    /// folder while the folder holds more than `byteLimit` bytes.
    ///
    /// `onCommit` runs after a successful write while the key's lock is still held, so a
    /// memory tier updated there stays in step with the disk; it gets the shared change counter
    /// as of the write (see ``changeCounter``): if the counter has moved on since, another
    /// write may have followed.
    ///
    /// - Returns: The keys evicted to make room.
    /// - Throws: ``StorageError`` (`keyTooLong`, `permissionDenied`, `readOnlyFileSystem`,
    ///   `diskFull`, `fileSystem`); the previous entry, if any, is untouched — except when only the folder
    ///   sync of `.fileAndFolder` failed: the new entry is then in place (and counted, and
    ///   `onCommit` has run), and the error's message says so.
    /// - Complexity: Blocking file I/O on this key only, O(payload); eviction adds
    ///   O(n log n) in the folder's entries when the limit is exceeded.
    @discardableResult
    package func write(
        _ payload: Data,
        to entry: EntryKey,
        writeDate: Date = Date(),
        expiry: Date?,
        durability: Durability,
        byteLimit: Int64? = nil,
        payloadChecksum: UInt32? = nil,
        origin: UInt = 0,
        onCommit: (_ change: UInt64) -> Void = { _ in }
    ) throws -> [DiskKey] {
        try payload.withUnsafeBytes { raw in
            let none = UnsafeRawBufferPointer(start: nil, count: 0)
            return try write(
                pieces: (raw, none, none),
                to: entry,
                writeDate: writeDate,
                expiry: expiry,
                durability: durability,
                byteLimit: byteLimit,
                payloadChecksum: payloadChecksum ?? CRC32C.checksum(raw),
                origin: origin,
                onCommit: onCommit
            )
        }
    }

    /// ``write(_:to:writeDate:expiry:durability:byteLimit:payloadChecksum:origin:onCommit:)``
    /// for a payload that is the concatenation of `pieces` (written with the entry header in
    /// one `writev`, never copied together; empty pieces are skipped), whose CRC32C the caller
    /// passes as `payloadChecksum`.
    ///
    /// - Returns: The keys evicted to make room.
    /// - Throws: as the `Data` form.
    /// - Complexity: Blocking file I/O on this key only, O(payload).
    @discardableResult
    package func write(
        pieces: PayloadPieces,
        to entry: EntryKey,
        writeDate: Date = Date(),
        expiry: Date?,
        durability: Durability,
        byteLimit: Int64? = nil,
        payloadChecksum: UInt32,
        origin: UInt = 0,
        onCommit: (_ change: UInt64) -> Void = { _ in }
    ) throws -> [DiskKey] {
        let key = entry.disk
        let payloadLength = pieces.0.count + pieces.1.count + pieces.2.count
        return try clearGate.withShared {
            let path = path(of: key)
            try keyLocks.withLock(path) {
                let header = EntryHeader(
                    typeName: entry.typeName,
                    parameter: entry.parameter,
                    writeDate: writeDate,
                    expiry: expiry,
                    payloadLength: payloadLength,
                    payloadChecksum: payloadChecksum
                ).encoded()
                try header.withUnsafeBytes { head in
                    try writeEntry(
                        [head, pieces.0, pieces.1, pieces.2],
                        to: key,
                        path: path,
                        writeDate: writeDate,
                        durability: durability,
                        origin: origin,
                        onCommit: onCommit
                    )
                }
            }
            guard let byteLimit else { return [] }
            return evict(in: key.folder, downTo: byteLimit, sparing: key)
        }
    }

    /// Reads and checks the entry at `key`, then passes it to `body` while the key's lock is
    /// still held (errors `body` throws leave the entry in place). With `recordingAccess`, the
    /// read counts as an access for least-recently-accessed eviction.
    ///
    /// - Returns: `body`'s result, or `nil` when there is no entry.
    /// - Throws: ``StorageError`` `corruptEntry` or `entryMismatch` after removing the bad file
    ///   (so the next read is a miss); `permissionDenied` or `fileSystem` when it cannot be read.
    /// - Complexity: Blocking file I/O on this key only, O(entry size).
    ///
    /// `locking: false` skips this process's lock of the key, for a caller with nothing to keep
    /// in step with writes of it (a manager without a memory tier): a rename replaces the file
    /// whole, so the read sees the old entry or the new one either way, and a bad file is
    /// removed only if it is still the very one read (checked under the store's lock).
    package func read<R>(
        _ entry: EntryKey,
        recordingAccess: Bool = true,
        locking: Bool = true,
        _ body: (Entry) throws -> R
    ) throws -> R? {
        let path = path(of: entry.disk)
        guard locking else { return try readUnlocked(entry, path: path, recordingAccess: recordingAccess, body) }
        return try keyLocks.withLock(path) {
            try readUnlocked(entry, path: path, recordingAccess: recordingAccess, body)
        }
    }

    /// The body of ``read(_:recordingAccess:locking:_:)``, run with or without the key's lock.
    private func readUnlocked<R>(
        _ entry: EntryKey,
        path: String,
        recordingAccess: Bool,
        usingIndexedSize: Bool = true,
        _ body: (Entry) throws -> R
    ) throws -> R? {
        let key = entry.disk
        var identity: FileIdentity?  // of the file read: only that one may be discarded
        defer { identity?.unpin(fileSystem) }  // after `discard`, which judges by it
        // The size the index holds, as this process last caught up with the others: a read
        // that finds it so needs no `fstat` (`AtomicFile.readBuffer`), one that does not
        // (another process replaced the entry since) makes the `fstat` after all. No catch-up
        // for it: the hint only spares a system call (the `cache-shapes` suite's 100 KB gets
        // and the `cache-manager` suite's 1 KB gets guard it).
        let sizeHint =
            usingIndexedSize ? index.lastKnownRecord(key).flatMap { Int(exactly: $0.logical) } : nil
        var assumed = false
        do {
            // Inside the `do`: a folder, FIFO or link at the path is a corrupt entry too.
            guard
                let file = try AtomicFile.readBuffer(
                    path: path,
                    fileSystem: fileSystem,
                    below: root,
                    identity: &identity,
                    sizeHint: sizeHint
                )
            else { return nil }
            assumed = file.sizeWasAssumed
            let (header, length) = try EntryHeader.decode(
                file.bytes,
                payloadIncluded: true,
                path: path,
                expected: (entry.typeName, entry.parameter),
                fileChecksum: file.checksum
            )
            let entry = Entry(header: header, file: file, payloadStart: length)
            if recordingAccess { touch(key) }
            return try body(entry)
        } catch var error as StorageError where error.code == .corruptEntry || error.code == .entryMismatch {
            if assumed, let status = identity?.examine(fileSystem) {
                // Read without an `fstat`: judged on what the file is, as a read with one would.
                if status.mode & S_IFMT != S_IFREG {
                    error = StorageError(.corruptEntry, "not a regular file", fileURL: URL(fileURLWithPath: path))
                } else if Int(clamping: status.sizes.logical) != sizeHint {
                    // Not the size read (a short read): read it again, whole.
                    identity?.unpin(fileSystem)
                    return try readUnlocked(
                        entry,
                        path: path,
                        recordingAccess: recordingAccess,
                        usingIndexedSize: false,
                        body
                    )
                }
            }
            discard(key, path: path, identity: identity)
            throw error
        }
    }

    /// Removes the entry at `key`.
    ///
    /// `onCommit` runs after the removal while the key's lock is still held.
    ///
    /// - Returns: Whether there was an entry.
    /// - Throws: ``StorageError`` when the file exists but cannot be removed.
    /// - Complexity: Blocking file I/O on this key only.
    @discardableResult
    package func remove(_ key: DiskKey, origin: UInt = 0, onCommit: () -> Void = {}) throws -> Bool {
        try clearGate.withShared {
            let path = path(of: key)
            return try keyLocks.withLock(path) {
                let (removed, _, _) = try index.mutate(origin: origin, target: key) {
                    try removeItem(at: path)
                } change: { removed -> [Change] in
                    removalChanges(key, removed)
                }
                onCommit()
                return removed != .nothing
            }
        }
    }

    /// Records an access to `key` — a read, or a memory-tier hit that did not touch the disk —
    /// for least-recently-accessed eviction (``PersistentIndex/touch(_:)``).
    ///
    /// - Complexity: O(1); for an entry only the snapshot file holds, a read of its page the
    ///   first time.
    package func touch(_ key: DiskKey) {
        index.touch(key)
    }

    /// Whether the index holds an entry at `key` (fresh or expired).
    ///
    /// - Complexity: O(1); no file I/O.
    package func contains(_ key: DiskKey) -> Bool {
        index.readIndex { $0.record(key) != nil }
    }

    /// The logical and allocated size the index holds for `key`.
    ///
    /// - Complexity: O(1); no file I/O.
    package func sizes(of key: DiskKey) -> AtomicFile.Sizes? {
        index.readIndex { $0.record(key).map { AtomicFile.Sizes(logical: $0.logical, allocated: $0.allocated) } }
    }

    /// The usage of `folder` and everything inside it.
    ///
    /// - Complexity: O(1) (a walk of the folder's few components); no file I/O.
    package func usage(of folder: FolderPath) -> DiskUsage {
        index.readIndex { $0.usage(of: folder) }
    }

    /// Removes a bad entry file (or whatever else is at its path, a folder into the trash) and
    /// forgets it; failures are ignored since the caller is already reporting the entry as bad.
    ///
    /// Only the very file judged bad, `identity`, is removed: the key lock covers this process
    /// only, so another process may have discarded it too and committed a fresh entry since —
    /// that one stays (checked under the store's lock, which every rename over the path holds).
    func discard(_ key: DiskKey, path: String, identity: FileIdentity?) {
        _ = try? index.mutate(origin: 0, target: key) { () -> RemovedItem? in
            guard let there = FileIdentity.lstatting(path, below: workingRoot) else { return .nothing }  // gone already
            guard let identity, there.isSame(as: identity) else { return nil }  // replaced since
            // A file that could not be removed (EACCES, say) is still on disk: the index keeps
            // counting it rather than forgetting an entry a walk of the files would find.
            return try? removeItem(at: path)
        } change: { removed -> [Change] in
            guard let removed else { return [] }
            // Gone already: forgotten all the same.
            return removed == .nothing ? [.remove(key)] : removalChanges(key, removed)
        }
    }

    /// Evicts least recently accessed entries of `folder`, skipping any whose lock is busy.
    private func evict(in folder: FolderPath, downTo limit: Int64, sparing spared: DiskKey) -> [DiskKey] {
        let candidates = index.readIndex { index -> [(EntryName, PersistentIndex.Record)] in
            index.usage(of: folder).logicalBytes > limit ? index.leastRecentlyAccessed(in: folder) : []
        }
        var evicted = [DiskKey]()
        for (name, listed) in candidates where name != spared.name {
            if usage(of: folder).logicalBytes <= limit { break }
            let key = DiskKey(folder: folder, name: name)
            let path = path(of: key)
            let removed = keyLocks.withLockIfAvailable(path) { () -> Bool in
                return
                    (try? index.mutate(origin: 0, target: key) {
                        // The list predates the lock: an entry written (or read) since, by any
                        // thread or process, is no longer the least recently accessed — keep it.
                        guard self.index.lastKnownRecord(key) == listed else { return false }
                        return unlinkEntryFile(path)
                    } change: { gone -> [Change] in
                        gone ? [.remove(key)] : []
                    })?.0 ?? false
            }
            if removed == true { evicted.append(key) }
        }
        return evicted
    }
}

/// What the cache layer and the tool ask of the index, through the store.
extension DiskStore {
    /// A change to the index, as the journal records it.
    typealias Change = PersistentIndex.Change
    /// One entry's sizes and last access, as the index holds them.
    typealias Record = PersistentIndex.Record
    /// A committed change, for memory tiers and change streams.
    package typealias StoreChange = PersistentIndex.StoreChange
    /// How far a rescan of the root has walked.
    package typealias IndexRebuild = PersistentIndex.IndexRebuild

    /// Brings the index up to date with other processes' changes (``PersistentIndex/refresh()``).
    package func refresh() { index.refresh() }

    /// ``refresh()`` for an observer woken by the root's ``ChangeSignal``
    /// (``PersistentIndex/refreshAfterSignal()``).
    package func refreshAfterSignal() { index.refreshAfterSignal() }

    /// Makes the saved index current (``PersistentIndex/flush()``).
    ///
    /// - Throws: ``StorageError`` when the snapshot cannot be written.
    package func flush() throws { try index.flush() }

    /// The changes committed since `sequence` (``PersistentIndex/changes(since:)``).
    package func changes(since sequence: UInt64) -> (changes: [StoreChange], next: UInt64, complete: Bool) {
        index.changes(since: sequence)
    }

    /// The number the next change will get: what a new observer starts from.
    package var changeSequence: UInt64 { index.changeSequence }

    /// Where the shared change counter lives, for a memory tier's one-load coherence check.
    package var changeCounter: UnsafePointer<UInt64> { index.changeCounter }

    /// Posted after every commit, for other processes' change streams.
    package var changeSignal: ChangeSignal { index.changeSignal }

    /// The rescan under way in this process, `nil` when none is (``PersistentIndex/rebuild``).
    package var rebuild: IndexRebuild? { index.rebuild }

    /// The per-type statistics table in the shared file, `nil` when the file has none.
    var sharedStatistics: SharedStatistics? { index.sharedStatistics }

    /// The longest time this process has held the root's cross-process lock.
    package var longestLockHold: Duration { index.longestLockHold }

    /// Every hold of the root's cross-process lock by this process so far, by duration.
    package var lockHolds: LockHoldHistogram { index.lockHolds }
}

/// A registry slot that does not keep its store alive.
private struct WeakStore {
    weak var store: DiskStore?
}
