import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The size index of one root, kept exact across every process that opens it and across
/// crashes: the index in memory (``State``), and on disk its snapshot, journal, shared
/// counters and cross-process lock. It owns all of them: every change to the index goes
/// through ``mutate(origin:target:_:change:)`` and every install of a snapshot through its own
/// catch-up, reload, fold, rebase or repair, each under the hold of ``lock`` its discussion
/// names, so the rule that ties the index in memory to its journal position is kept here, not
/// by its callers. ``DiskStore`` holds one and asks it for sizes; it never touches ``state``.
///
/// On disk, under `.archivist`: `index`, the newest layer of a snapshot of the index tagged with
/// a journal epoch, and `index.<epoch>`, the older layers it stacks on (see ``SnapshotFile``);
/// `journal`, every change committed since that snapshot, in commit order (see
/// ``DiskStore/Change``); `shared`, the ``SharedCounters`` every process maps; `lock`, the
/// ``FileLock``. The index is snapshot + journal.
///
/// A mutation runs under the lock held exclusively, briefly: catch up with the journal
/// (nothing to read unless another process wrote), set the intent word, make the one file
/// change (a rename, an unlink, a folder moved to the trash), append its record, bump the
/// change counter, clear the intent word. Writing an entry's bytes happens before, outside
/// the lock. Any process, before answering a size or `contains`, compares the change counter
/// with the one it last applied (one atomic load) and, if it moved, reads the journal's new
/// records under the lock held shared — O(records others appended since).
///
/// Crashes: a process killed between its file change and its record leaves the intent word
/// set; the next process to take the lock sees it (the kernel dropped the dead holder's lock)
/// and repairs the index: when the holder named the one entry it was changing, by looking at
/// that entry's file (``repairIntentTarget(_:)``); otherwise it rescans the root *without* the
/// lock, then saves a snapshot and starts a new journal epoch under a short hold
/// (`PersistentIndex+Repair.swift`). While the word is set no process starts a change, so the scan
/// sees a disk nobody changes. A journal
/// longer than ``compactionThreshold`` is folded into a new snapshot layer in the background by
/// the process whose record crossed it, and ``flush()`` folds whatever the journal holds; other
/// processes then open the new snapshot, which they read in place (O(layers × folders + pages),
/// see ``SnapshotFile``), on their next catch-up. The
/// marker `.archivist/dirty` reading `D` at open also forces a rescan (a store sets it while
/// the disk may be ahead of the saved index).
///
/// The journal and snapshot are not synced, so after a power loss the index may be stale
/// until a damaged checksum or a crash forces a rescan.
package final class PersistentIndex: Sendable {
    /// The root folder's path, without a trailing slash.
    let rootPath: String
    let fileSystem: FileSystem
    /// The root folder open (see `DiskStore+RootRelative.swift`): the index's files are changed
    /// below it, and held here so that work the index queued keeps the descriptor open.
    let openRoot: OpenRoot?
    /// The marker file, open for the index's lifetime: its first byte is `D` while the disk
    /// may be ahead of the saved index and `C` once a save caught up. Flipping a byte in an
    /// open file is cheap; creating and deleting a marker would allocate an inode each time.
    let markerFD: Int32
    /// The shared journal, open for the index's lifetime; `-1` for a read-only root without one.
    let journalFD: Int32
    /// The counters every process opening the root maps.
    let shared: SharedCounters
    /// The cross-process lock around every file change and journal record.
    let lock: FileLock
    /// Posted after every commit, for other processes' change streams (``ChangeSignal``).
    let changeSignal: ChangeSignal
    /// Set when the root refuses writes: every mutation throws it.
    let writeRefusal: StorageError?
    /// The index in memory and the journal position it is up to date with: read through
    /// ``readState(_:)``, changed only through ``changeState(_:_:)``, which asks for proof that
    /// ``lock`` is held (a ``Hold``; a read-only root's needs no lock, ``readOnlyHold()``), or
    /// by an access time (``touch(_:)``), which moves no journal position.
    private let state = Locked(State())
    /// This process's slot in `shared` (`nil` when every slot was taken, or before ``load``).
    private let slot = Locked<Int?>(nil)
    /// Held by a repair or rebuild of the index by scan (`PersistentIndex+Repair.swift`), which
    /// runs without the cross-process lock: one scan at a time in the process; the others wait
    /// for it and then find nothing left to do.
    let repairGate = Lock()
    /// The rescan of the root under way in this process, if any (``scan()``), for ``rebuild``.
    let rebuildProgress = Locked<IndexRebuild?>(nil)
    /// Where a journal grown past ``compactionThreshold`` is folded (``scheduleFold()``).
    let foldQueue = DispatchQueue(label: "Archivist.PersistentIndex.fold", qos: .utility)
    /// Whether a fold is queued and not started.
    let foldScheduled = Locked(false)
    /// Deletes the abandoned temporaries of index saves and entry writes: the store's, run by
    /// every scan (``scan()``).
    let sweepTemporaries: @Sendable (AtomicFile.Root?) -> Void

    var internalPath: String { rootPath + "/.archivist" }
    var indexPath: String { internalPath + "/index" }
    var markerPath: String { internalPath + "/dirty" }

    /// Opens the journal, the shared counters and the lock of the root at `rootPath`, whose
    /// `.archivist` folder exists; the index stays empty until ``load(backgroundRescanAbove:keepingAlive:)``.
    ///
    /// - Parameters:
    ///   - markerFD: The marker, opened by the store (which decides whether the root refuses
    ///     writes); the index closes it.
    ///   - writeRefusal: The error every mutation throws for a root opened for reading.
    /// - Throws: ``StorageError`` when the journal or the shared counters cannot be opened;
    ///   `markerFD` is closed then.
    init(
        rootPath: String,
        fileSystem: FileSystem,
        openRoot: OpenRoot?,
        markerFD: Int32,
        writeRefusal: StorageError?,
        sweepTemporaries: @escaping @Sendable (AtomicFile.Root?) -> Void
    ) throws {
        let folder = rootPath + "/.archivist"
        let root = openRoot?.root
        let journal =
            writeRefusal == nil
            ? fileSystem.openCreatingPrivately(folder + "/journal", O_RDWR | O_CLOEXEC, below: root)
            : fileSystem.open(folder + "/journal", O_RDONLY | O_CLOEXEC, 0, below: root)  // may be missing: -1
        guard journal >= 0 || writeRefusal != nil else {
            let code = errno
            if markerFD >= 0 { _ = fileSystem.close(markerFD) }
            throw StorageError.posix("open journal", path: folder + "/journal", errno: code)
        }
        let shared: SharedCounters
        do {
            shared = try SharedCounters(
                path: folder + "/shared",
                fileSystem: fileSystem,
                readOnly: writeRefusal != nil,
                below: root
            )
        } catch {
            if markerFD >= 0 { _ = fileSystem.close(markerFD) }
            if journal >= 0 { _ = fileSystem.close(journal) }
            throw error
        }
        self.rootPath = rootPath
        self.fileSystem = fileSystem
        self.openRoot = openRoot
        self.markerFD = markerFD
        self.journalFD = journal
        self.shared = shared
        self.writeRefusal = writeRefusal
        self.sweepTemporaries = sweepTemporaries
        self.lock = FileLock(path: folder + "/lock", fileSystem: fileSystem, below: root)
        self.changeSignal = ChangeSignal(folder: folder, fileName: "journal")
    }

    deinit {
        if let taken = slot.withLock({ $0 }) { shared.unregister(taken) }
        if markerFD >= 0 { _ = fileSystem.close(markerFD) }
        if journalFD >= 0 { _ = fileSystem.close(journalFD) }
    }

    /// Loads the index at open: claims a slot in the shared counters under a short exclusive
    /// hold, then reads the snapshot and the journal, or repairs by a scan, without the lock
    /// (`PersistentIndex+Repair.swift`).
    ///
    /// - Parameters:
    ///   - backgroundRescanAbove: See ``DiskStore/open(at:fileSystem:backgroundRescanAbove:)``.
    ///   - owner: Kept alive by a repair left to the background, so that the store holding
    ///     this index is the one handed out again meanwhile.
    /// - Returns: Whether a dead process's slot was freed: its entry temporaries are due for a
    ///   sweep.
    /// - Throws: ``StorageError`` when the lock cannot be taken or the root cannot be scanned.
    func load(backgroundRescanAbove: Int?, keepingAlive owner: (any Sendable & AnyObject)?) throws -> Bool {
        let (taken, load, sweep) = try holding(exclusive: true) { _ in loadIndexAtOpen() }
        slot.withLock { $0 = taken }
        do {
            try loadIndexAfterOpening(load, backgroundRescanAbove: backgroundRescanAbove, keepingAlive: owner)
        } catch {
            if let taken { shared.unregister(taken) }
            slot.withLock { $0 = nil }
            throw error
        }
        return sweep
    }

    /// This process's slot in the shared counters, `nil` when every slot was taken.
    var sharedSlot: Int? { slot.withLock { $0 } }

    /// The per-type statistics table in the shared file (``SharedStatistics``), `nil` when
    /// the file has none; the cache layer counts its hits and misses in it.
    var sharedStatistics: SharedStatistics? {
        SharedStatistics(words: shared.statistics, owner: shared)
    }

    /// The root's folder while it is still the one the index opened; `nil` once it was
    /// removed, and without a root descriptor (see `DiskStore+RootRelative.swift`).
    var workingRoot: AtomicFile.Root? {
        openRoot?.root.working(internalPath: internalPath)
    }

    /// Proof that the caller holds ``lock``: made only by ``holding(exclusive:_:)``, and asked
    /// for by every change to the index in memory (``changeState(_:_:)``). The index and its
    /// journal position must move together with the journal itself, which only a holder of the
    /// lock may append to, truncate or replace; a caller without a hold cannot install a state.
    struct Hold {
        /// Whether the lock is held exclusively: what appends to, truncates or replaces the
        /// journal asserts it (a shared hold only reads the journal).
        let isExclusive: Bool

        fileprivate init(isExclusive: Bool) { self.isExclusive = isExclusive }
    }

    /// Runs `body` holding ``lock`` exclusively, or shared, with the proof of it.
    ///
    /// - Throws: ``StorageError`` when the lock cannot be taken; what `body` throws.
    func holding<R>(exclusive: Bool, _ body: (Hold) throws -> R) throws -> R {
        exclusive
            ? try lock.withExclusive { try body(Hold(isExclusive: true)) }
            : try lock.withShared { try body(Hold(isExclusive: false)) }
    }

    /// `body`'s answer from the state as it is, without a catch-up.
    func readState<R>(_ body: (State) throws -> R) rethrows -> R {
        try state.withLock { try body($0) }
    }

    /// Changes the state, under a hold of ``lock`` (`hold` proves it).
    func changeState<R>(_ hold: Hold, _ body: (inout State) throws -> R) rethrows -> R {
        try state.withLock { try body(&$0) }
    }

    /// The hold of a root that refuses writes, which needs no lock: no process of this user
    /// can change it, so its snapshot and journal do not move while they are installed (and
    /// its lock file may not even be there to open).
    func readOnlyHold() -> Hold {
        precondition(writeRefusal != nil, "only a read-only root is read without the lock")
        return Hold(isExclusive: false)
    }

    /// The record of `key` as this process last caught up with the others: no catch-up, no
    /// lock but the state's. For a hint that only spares a system call, or a check under the
    /// cross-process lock, which a mutation's catch-up has just made current.
    ///
    /// - Complexity: O(1); for an entry only the snapshot file holds, a read of its page.
    func lastKnownRecord(_ key: DiskKey) -> Record? {
        readState { $0.index.record(key) }
    }

    /// Records an access to `key` for least-recently-accessed eviction; folds the index in the
    /// background once reads have brought ``touchFoldThreshold`` records of the snapshot file
    /// into memory.
    ///
    /// - Complexity: O(1); for an entry only the snapshot file holds, a read of its page the
    ///   first time.
    func touch(_ key: DiskKey) {
        let now = Date().timeIntervalSince1970
        // No hold: an access time is not journaled, and no journal position moves.
        let foldDue = state.withLock { state in
            state.index.touch(key, at: now)
            return state.index.touchedSaved > Self.touchFoldThreshold
        }
        if foldDue && writeRefusal == nil { scheduleFold() }
    }

    /// How many records of the snapshot file reads may bring into memory before the index is
    /// folded into a new snapshot (see ``SizeIndex/touchedSaved``).
    static let touchFoldThreshold = 1 << 16

    /// Throws the read-only root's refusal before a mutation touches anything.
    func checkWritable() throws {
        if let writeRefusal { throw writeRefusal }
    }
}

extension PersistentIndex {
    /// The mutable state behind `state`'s lock.
    struct State {
        var index = SizeIndex()
        /// How many journal bytes `index` includes.
        var journalOffset = 0
        /// The journal epoch `index` belongs to.
        var appliedEpoch: UInt64 = 0
        /// The shared change counter `index` is up to date with.
        var appliedChange: UInt64 = 0
        /// Recent changes, for memory tiers and change notifications.
        var changes = ChangeRing()
        /// The folder of the last record replayed, so the next catch-up's first record of it
        /// reuses it too (a catch-up often brings a handful of records). A pure cache of the
        /// bytes' decoding: right whatever happened to the folder since.
        var replayedFolder: PreviousFolder?
    }

    /// The journal length past which a mutation has it folded into a new snapshot, in the
    /// background. Fixed, not a share of the snapshot: an open replays the journal, so its
    /// length bounds what an open costs however many entries the snapshot holds (the `scale`
    /// suite's open guards it).
    static let compactionThreshold = 1 << 20

    /// Whether ``flush()`` folds the journal: whenever it holds a change. A fold writes what
    /// changed since the last snapshot and the folders' directory, not the whole index
    /// (``foldJournal(merging:)``), so the journal an open replays stays short (the `scale`
    /// suite's open and flush after 1,000 changes guard both).
    var flushFolds: Bool {
        readState { $0.journalOffset > 0 }
    }

    /// Folds the journal on the fold queue, once at a time, off the call whose record crossed
    /// ``compactionThreshold`` (or whose fold left the snapshot past ``snapshotLayerCap``
    /// layers): a merge of every layer when the snapshot has more, O(entries).
    func scheduleFold() {
        guard
            foldScheduled.withLock({ scheduled in
                defer { scheduled = true }
                return !scheduled
            })
        else { return }
        foldQueue.async { [weak self] in
            guard let self else { return }
            self.foldScheduled.withLock { $0 = false }
            _ = try? self.foldJournal(merging: self.snapshotLayerCount > Self.snapshotLayerCap)
        }
    }

    /// Runs one file mutation under the store's exclusive cross-process lock: catches up with
    /// other processes' changes, runs `io`, and journals and applies the changes `change`
    /// derives from its result (none: nothing changed). A repair the catch-up calls for runs
    /// first, without the lock (``withCaughtUpIndex(exclusive:_:)``).
    ///
    /// - Parameter target: The one entry `io` changes — its file, and a folder at its path —
    ///   when it changes nothing else: should the process die before the change's record, the
    ///   next holder looks at that entry rather than rescanning the root
    ///   (``repairIntentTarget(_:)``). `nil` when `io` may change more.
    /// - Returns: `io`'s result, the usage the change removed (an old record's, or a cleared
    ///   folder's) and the change counter right after it (unchanged when nothing changed).
    func mutate<R>(
        origin: UInt,
        target: DiskKey? = nil,
        _ io: () throws -> R,
        change: (R) -> [Change]
    ) throws -> (R, DiskUsage, UInt64) {
        try checkWritable()
        let counterBefore = shared.change
        var foldDue = false
        defer { if shared.change != counterBefore { changeSignal.post() } }  // once the lock is released
        defer { if foldDue { scheduleFold() } }
        return try withCaughtUpIndex(exclusive: true) { hold in
            shared.intent = true
            setIntentTarget(target)
            let result: R
            do {
                result = try io()
            } catch {
                shared.intent = false
                throw error
            }
            let changes = change(result)
            if changes.isEmpty {
                shared.intent = false
                return (result, DiskUsage(), shared.change)
            }
            // Applied first: what applying a change removed is what its entry held before,
            // which its record says (see `JournalRecords`). Most often one change: no array.
            var befores: (Record?, Record?) = (nil, nil)
            var moreBefores: [Record?] = []
            let (offset, removed) = changeState(hold) { state -> (Int, DiskUsage) in
                var removed = DiskUsage()
                for (i, change) in changes.enumerated() {
                    let gone = state.index.apply(change)
                    removed = removed + gone
                    let before =
                        gone.entryCount == 1
                        ? Record(logical: gone.logicalBytes, allocated: gone.allocatedBytes, lastAccess: 0) : nil
                    switch i {
                    case 0: befores.0 = before
                    case 1: befores.1 = before
                    default: moreBefores.append(before)
                    }
                }
                return (state.journalOffset, removed)
            }
            func before(_ i: Int) -> Record? { i == 0 ? befores.0 : i == 1 ? befores.1 : moreBefores[i - 2] }
            // The records in temporary memory (the stack), not an array: see `encode(_:before:count:at:)`.
            var recordCount = 0
            for (i, change) in changes.enumerated() { recordCount += Self.encodedCount(change, before: before(i)) }
            let appended = withUnsafeTemporaryAllocation(byteCount: recordCount, alignment: 8) { buffer in
                var at = 0
                for (i, change) in changes.enumerated() {
                    let count = Self.encodedCount(change, before: before(i))
                    Self.encode(change, before: before(i), count: count, at: buffer.baseAddress! + at)
                    at += count
                }
                return fileSystem.pwrite(journalFD, buffer.baseAddress!, recordCount, off_t(offset)) == recordCount
            }
            let counter = shared.bumpChange()
            changeState(hold) { state in
                if appended { state.journalOffset += recordCount }
                state.appliedChange = counter
                for change in changes {
                    state.changes.append(StoreChange(change, origin: origin, fromOtherProcess: false))
                }
            }
            // Without its record the journal is behind the disk: the intent word stays set, so
            // the next exclusive holder (perhaps this process) looks at the named entry, or
            // rescans (``repairIntentTarget(_:)``).
            if appended {
                shared.intent = false
                foldDue = offset + recordCount > Self.compactionThreshold
            }
            return (result, removed, counter)
        }
    }

    /// Names `target` as the entry the intent word is about to cover (see ``mutate(origin:target:_:change:)``).
    func setIntentTarget(_ target: DiskKey?) {
        guard let target else { return shared.setIntentTarget(nil) }
        let change = Change.remove(target)
        let count = Self.encodedCount(change)
        withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { buffer in
            Self.encode(change, count: count, at: buffer.baseAddress!)
            shared.setIntentTarget(UnsafeRawBufferPointer(buffer))
        }
    }

    /// Under the exclusive lock, with the intent word set — a holder died between a change to
    /// the disk and its record, or failed to append it: when that holder named the one entry
    /// it was changing, brings the index in line with that entry's file (one `lstat`) by
    /// journaling what the file now is, and clears the word. Its records, if it appended
    /// them, are caught up with first.
    ///
    /// - Returns: Whether the index is whole again; `false` when no target was named, the
    ///   journal cannot be caught up with, or the entry's path holds something other than a
    ///   file (the caller rescans the root).
    /// - Complexity: A catch-up, an `lstat` and a journal append.
    func repairIntentTarget(_ hold: Hold) -> Bool {
        guard writeRefusal == nil, let bytes = shared.intentTarget else { return false }
        let decoded = Self.decodeJournal(bytes[...])
        guard !decoded.damaged, decoded.changes.count == 1, case .remove(let key) = decoded.changes[0],
            catchUp(hold) == .caughtUp
        else { return false }
        var status = stat()
        let found = lstat(rootPath + "/" + key.relativePath, below: workingRoot, &status) == 0
        if !found && errno != ENOENT { return false }
        if found && status.st_mode & S_IFMT != S_IFREG { return false }  // a folder at the entry's path: rescan
        // Journaled whatever this process's index says: it may be the very process whose
        // record is missing (its append failed), its index ahead of the journal. The records
        // hold absolute values, so saying again what an index knows changes nothing. A file,
        // or nothing, at the entry's path: no folder there holds entries.
        let now = Date().timeIntervalSince1970
        let entry: Change =
            found
            ? .set(
                key,
                Record(logical: Int64(status.st_size), allocated: Int64(status.st_blocks) * 512, lastAccess: now)
            )
            : .remove(key)
        guard journalAndApply(hold, [entry, .clear(key.shadowingFolder)]) else { return false }
        shared.intent = false
        return true
    }

    /// Appends the records of `changes` — another process's, which it died before recording —
    /// and applies them, under the exclusive lock with the index caught up; `false` when the
    /// records could not be appended (the index has them all the same; the caller leaves the
    /// intent word set).
    private func journalAndApply(_ hold: Hold, _ changes: [Change]) -> Bool {
        assert(hold.isExclusive, "only the exclusive holder appends to the journal")
        let befores = changeState(hold) { state in
            changes.map { change -> Record? in
                let gone = state.index.apply(change)
                return gone.entryCount == 1
                    ? Record(logical: gone.logicalBytes, allocated: gone.allocatedBytes, lastAccess: 0) : nil
            }
        }
        var bytes: [UInt8] = []
        for (change, before) in zip(changes, befores) { Self.encode(change, before: before, into: &bytes) }
        let offset = readState { $0.journalOffset }
        let appended = bytes.withUnsafeBytes {
            fileSystem.pwrite(journalFD, $0.baseAddress!, $0.count, off_t(offset)) == $0.count
        }
        let counter = shared.bumpChange()
        changeState(hold) { state in
            if appended { state.journalOffset += bytes.count }
            state.appliedChange = counter
            for change in changes { state.changes.append(StoreChange(change, origin: 0, fromOtherProcess: true)) }
        }
        return appended
    }

    /// Brings the index up to date with other processes' changes, if the change counter moved.
    ///
    /// - Complexity: One atomic load when nothing changed; otherwise the shared lock and
    ///   O(records appended since), or O(entries) after another process saved a snapshot (and
    ///   a scan, without the lock, when that snapshot is missing).
    package func refresh() {
        let counter = shared.change
        if readState({ $0.appliedChange }) == counter { return }
        for _ in 0..<Self.scanAttempts {
            let outcome = (try? holding(exclusive: false) { catchUp($0) }) ?? .caughtUp
            if outcome == .caughtUp || outcome == .needsRepair { return }
            try? resolve(outcome, repairing: false)
        }
    }

    /// `body`'s answer from an index brought up to date with every process's changes.
    ///
    /// When the intent word is set, a writer is between its file change and its record — or
    /// died there: the shared lock waits for a live one; if the word is still set under it,
    /// the writer is dead and this process repairs the index under the exclusive lock.
    func readIndex<R>(_ body: (SizeIndex) -> R) -> R {
        let counter = shared.change
        if !shared.intent,
            let current = readState({ $0.appliedChange == counter && !$0.index.isDamaged ? body($0.index) : nil })
        {
            return current
        }
        // A repair or a scan that fails leaves the index as it was: the answer is its best.
        try? withCaughtUpIndex(exclusive: false) { _ in }
        return readState { body($0.index) }
    }

    /// Makes the saved index current: every committed change is in the journal already, and
    /// the journal is folded into a new snapshot layer when it holds any (``flushFolds``). It
    /// never waits for a fold under way in the background (a merge of every layer may be):
    /// each fold publishes only if the epoch did not move, so the two cannot both land.
    ///
    /// - Throws: ``StorageError`` when the snapshot cannot be written.
    /// - Complexity: Blocking file I/O: a catch-up; when the journal is folded, O(folders +
    ///   changes) plus at most ``foldMergeBudget`` bytes of older layers without the lock
    ///   (``foldJournal(merging:)``); a whole snapshot under it after a few lost races with
    ///   other processes' folds.
    package func flush() throws {
        guard writeRefusal == nil else { return }  // nothing can have changed
        for _ in 0..<Self.scanAttempts {
            try withCaughtUpIndex(exclusive: false) { _ in }
            guard flushFolds else { return }
            if try foldJournal() != .lost { return }
        }
        try withCaughtUpIndex(exclusive: true) { hold in
            try saveSnapshotExclusive(hold, scanning: false)
        }
    }

    // MARK: Under the lock

    /// What a catch-up under the lock found.
    enum CatchUpOutcome: Equatable {
        /// The index holds every process's committed changes.
        case caughtUp
        /// The journal cannot tell every change — a holder died between a file change and its
        /// record (the intent word is set), or a record is damaged or unreadable: only a rescan
        /// saved as a new epoch repairs that (``repair()``).
        case needsRepair
        /// The journal is whole but the snapshot of its epoch is missing or unreadable (its
        /// save failed): a scan plus the journal rebuild the index (``rebuildFromScan()``).
        case needsScan
        /// Another process started a new epoch: its snapshot, O(entries), is read without the
        /// lock (``reloadWithoutLock()``).
        case needsReload
    }

    /// Applies the journal records this process has not seen (under the lock, shared or
    /// exclusive); reloads the snapshot when another process started a new epoch.
    ///
    /// When the records cannot tell every change — the journal is damaged or unreadable, or the
    /// intent word is set under the lock (a holder changed the disk and died, or failed to
    /// append its record, e.g. `ENOSPC`) — the change list gets "anything may have changed"
    /// (``StoreChange/everything``), so memory tiers drop this store's values and change
    /// streams report everything instead of going on with what the journal lacks.
    ///
    /// - Returns: ``CatchUpOutcome/needsRepair`` when the journal holds a damaged record or
    ///   cannot be read, ``CatchUpOutcome/needsReload`` when another process started an epoch
    ///   (the caller repairs or reloads, without the lock).
    @discardableResult
    func catchUp(_ hold: Hold) -> CatchUpOutcome {
        let counter = shared.change
        let epoch = shared.epoch
        let (applied, appliedEpoch, offset, damaged) = readState {
            ($0.appliedChange, $0.appliedEpoch, $0.journalOffset, $0.index.isDamaged)
        }
        if damaged { return .needsRepair }
        if counter == applied && epoch == appliedEpoch { return .caughtUp }
        if epoch != appliedEpoch { return .needsReload }
        var previous = readState { $0.replayedFolder }
        guard let decoded = readJournalRecords(from: offset, previous: &previous) else {
            changeState(hold) { $0.changes.append(.everything) }
            return .needsRepair
        }
        let incomplete = decoded.damaged || shared.intent
        changeState(hold) { state in
            state.replayedFolder = previous
            guard state.journalOffset == offset, state.appliedEpoch == epoch else { return }  // another thread did it
            decoded.apply(to: &state.index)
            for change in decoded.changes {
                state.changes.append(StoreChange(change, origin: 0, fromOtherProcess: true))
            }
            if incomplete { state.changes.append(.everything) }
            state.journalOffset += decoded.consumed
            state.appliedChange = counter
        }
        return decoded.damaged ? .needsRepair : .caughtUp
    }

    /// Replaces the index by the saved snapshot of `epoch` plus the whole journal, under the
    /// lock: only as a last resort (``withCaughtUpIndex(exclusive:_:)``) and for a read-only
    /// root, whose snapshot nobody changes; a catch-up reads it without the lock
    /// (``reloadWithoutLock()``).
    ///
    /// - Returns: ``CatchUpOutcome/caughtUp`` when the index was replaced and the journal was
    ///   whole; ``CatchUpOutcome/needsScan`` when the snapshot is missing, unreadable or of
    ///   another epoch (nothing replaced); ``CatchUpOutcome/needsRepair`` when the journal is
    ///   damaged or unreadable.
    func reload(_ hold: Hold, counter: UInt64, epoch: UInt64) -> CatchUpOutcome {
        guard let (saved, _, _) = readSnapshot(of: epoch) else { return .needsScan }
        var index = saved
        var previous: PreviousFolder?
        guard let replayed = replayJournal(from: 0, into: &index, previous: &previous) else { return .needsRepair }
        changeState(hold) { state in
            state.index = index
            state.journalOffset = replayed.consumed
            state.appliedEpoch = epoch
            state.appliedChange = counter
            // anything may have changed
            state.changes.append(StoreChange(.clear(FolderPath([])), origin: 0, fromOtherProcess: true))
        }
        return replayed.damaged ? .needsRepair : .caughtUp
    }

    /// Saves the index — this process's, or a fresh scan's — as the snapshot of a new epoch
    /// and empties the journal. Runs under the exclusive lock. (A repair scans without the
    /// lock, ``repair()``; `scanning` is its last resort.)
    ///
    /// The intent word is set meanwhile, so a holder killed half-way leaves the next one a
    /// rescan. A failed snapshot write must not leave it set (every operation of every process
    /// would rescan from then on): without a scan, the journal and the old snapshot still agree
    /// with the disk, so the word is cleared and the error thrown; after a scan, the journal is
    /// emptied and a new epoch started all the same — the scanned index in memory is exact, and
    /// the others, finding no snapshot of the new epoch, scan for themselves.
    func saveSnapshotExclusive(_ hold: Hold, scanning: Bool) throws {
        assert(hold.isExclusive || writeRefusal != nil, "only the exclusive holder starts an epoch")
        if writeRefusal != nil {  // a read-only root keeps a scan in memory
            if scanning {
                let index = try scan()
                changeState(hold) { $0.index = index }
            }
            return
        }
        shared.intent = true
        let index = scanning ? try scan() : nil
        let snapshot = changeState(hold) { state in
            if let index { state.index = index }
            return state.index.snapshot()
        }
        let epoch = shared.epoch &+ 1
        var saved = true
        // Outside the state lock: O(n).
        guard let bytes = snapshot.serialized(epoch: epoch) else {
            // A page of the snapshot file the index reads is damaged: a scan tells what it held
            // (a scanned index reads no file, so this happens once).
            return try saveSnapshotExclusive(hold, scanning: true)
        }
        do {
            _ = try bytes.withChunks { chunks in
                try AtomicFile.write(
                    chunks,
                    toPath: indexPath,
                    durability: .none,
                    createFolders: false,
                    fileSystem: fileSystem,
                    below: workingRoot
                )
            }
        } catch {
            saved = false
            if !scanning {
                shared.intent = false
                throw error
            }
        }
        startEpoch(hold, snapshotBytes: saved ? bytes.byteCount : nil, scanned: scanning)
        // The records in memory give way to the snapshot file just saved.
        if saved && shared.epoch == epoch { rebase(onSnapshotOf: epoch) }
    }

    /// Writes `bytes` as the next snapshot file's temporary beside `.archivist/index`, unsynced
    /// like every index save, to be renamed into place under the lock (a fold, a repair).
    ///
    /// - Throws: ``StorageError`` when the temporary cannot be written.
    func prepareSnapshot(_ bytes: SizeIndex.SerializedSnapshot) throws -> AtomicFile.Prepared {
        try bytes.withChunks { chunks in
            try AtomicFile.prepare(
                chunks,
                toPath: indexPath,
                durability: .none,
                createFolders: false,
                fileSystem: fileSystem,
                below: workingRoot
            )
        }
    }

    /// The end of a snapshot save, under the exclusive lock with the intent word set, the
    /// index in memory being the one saved (tagged with the epoch after the current one):
    /// empties the journal and starts that epoch, clearing the word — or, when the journal
    /// cannot be emptied and the index comes from a scan (`scanned`), leaves the word set so
    /// the next holder tries again.
    ///
    /// - Parameter snapshotBytes: The saved snapshot's size; `nil` when it was not saved.
    func startEpoch(_ hold: Hold, snapshotBytes: Int?, scanned: Bool) {
        assert(hold.isExclusive, "only the exclusive holder truncates the journal")
        let epoch = shared.epoch &+ 1
        if fileSystem.ftruncate(journalFD, 0) == 0 {
            _ = shared.bumpEpoch()
            let counter = shared.bumpChange()
            changeState(hold) { state in
                state.journalOffset = 0
                state.appliedEpoch = epoch
                state.appliedChange = counter
                if scanned {
                    state.changes.append(StoreChange(.clear(FolderPath([])), origin: 0, fromOtherProcess: true))
                }
            }
            if snapshotBytes != nil {
                try? setMarker(dirty: false)
                removeLayers(keeping: [])  // the snapshot saved stacks on nothing
            }
            shared.intent = false
        } else {
            // The journal could not be emptied. Without a scan it still agrees with the disk
            // (the new snapshot only adds an epoch nobody uses); after one it may not, so the
            // word stays set and the next holder tries again.
            let end = fileSystem.statusWithoutTimes(journalFD).map { Int(clamping: $0.sizes.logical) } ?? 0
            let epochNow = shared.epoch
            let counter = shared.bumpChange()
            changeState(hold) { state in
                state.journalOffset = end
                state.appliedEpoch = epochNow
                state.appliedChange = counter
                if scanned {
                    state.changes.append(StoreChange(.clear(FolderPath([])), origin: 0, fromOtherProcess: true))
                }
            }
            if !scanned { shared.intent = false }
        }
    }

    /// The journal's bytes from `offset` to its end; `nil` when it cannot be read.
    func readJournal(from offset: Int) -> [UInt8]? {
        guard let end = journalEnd(), end >= offset else { return nil }
        return readJournalBytes(at: offset, count: end - offset)
    }

    /// How many bytes a journal record takes at most: its length and checksum words around a
    /// body of at most 4,096 bytes (see ``decodeJournal(_:previous:)``).
    static let maxJournalRecordBytes = 8 + 4096
    /// How much of the journal ``readJournalRecords(from:previous:)`` reads at a time.
    static let journalChunkBytes = 1 << 20

    /// The journal's whole records from `offset` on, decoded as they are read (see
    /// ``forEachJournalRecord(from:previous:chunkBytes:_:)``). What it returns is what
    /// ``decodeJournal(_:previous:)`` returns for the bytes from `offset` to the end. `nil`
    /// when the journal cannot be read or ends before `offset`.
    ///
    /// - Parameter chunkBytes: How much to read at a time (at least a longest record's bytes).
    /// - Complexity: O(bytes up to the first damaged record, plus one chunk).
    func readJournalRecords(
        from offset: Int,
        previous: inout PreviousFolder?,
        chunkBytes: Int = journalChunkBytes
    )
        -> JournalRecords?
    {
        var records = JournalRecords()
        guard
            let (consumed, damaged) = forEachJournalRecord(
                from: offset,
                previous: &previous,
                chunkBytes: chunkBytes,
                { change, before in
                    records.changes.append(change)
                    records.before.append(before)
                }
            )
        else { return nil }
        (records.consumed, records.damaged) = (consumed, damaged)
        return records
    }

    /// Applies the journal's whole records from `offset` on to `index`, in order, as they are
    /// decoded — no array of changes in between (an open replays up to
    /// ``compactionThreshold`` bytes; the `scale` suite's open guards it). Returns what
    /// ``forEachJournalRecord(from:previous:chunkBytes:_:)`` returns.
    func replayJournal(
        from offset: Int,
        into index: inout SizeIndex,
        previous: inout PreviousFolder?
    )
        -> (consumed: Int, damaged: Bool)?
    {
        // About one record per 64 bytes.
        var run = SizeIndex.Replay(expecting: ((journalEnd() ?? offset) - offset) / 64)
        defer { index.finish(&run) }
        return forEachJournalRecord(from: offset, previous: &previous) { change, before in
            index.replay(change, before: before, in: &run)
        }
    }

    /// Hands the journal's whole records from `offset` on to `body` in order, decoded as they
    /// are read, a chunk at a time: reading stops at the first damaged record, so a damaged
    /// journal costs what comes before the damage, not its length (a journal of gigabytes of
    /// garbage, or a sparse one, is judged by its first chunk). Returns the bytes the whole
    /// records took from `offset`, and whether they stopped at damage rather than at the end;
    /// `nil` when the journal cannot be read or ends before `offset`.
    ///
    /// - Parameter chunkBytes: How much to read at a time (at least a longest record's bytes).
    /// - Complexity: O(bytes up to the first damaged record, plus one chunk).
    func forEachJournalRecord(
        from offset: Int,
        previous: inout PreviousFolder?,
        chunkBytes: Int = journalChunkBytes,
        _ body: (Change, Record?) -> Void
    ) -> (consumed: Int, damaged: Bool)? {
        precondition(chunkBytes >= Self.maxJournalRecordBytes, "a chunk must hold the longest record")
        guard let end = journalEnd(), end >= offset else { return nil }
        var position = offset
        while position < end {
            let count = min(chunkBytes, end - position)
            guard let chunk = readJournalBytes(at: position, count: count) else { return nil }
            let (consumed, damaged) = Self.forEachRecord(in: chunk[...], previous: &previous, body)
            let chunkEnd = position + count
            position += consumed
            guard damaged else { continue }
            // A record the chunk's end cut short is read whole with the next chunk. Damage is a
            // record that had its room in the chunk and did not check, or the journal's end.
            let cutShort = chunkEnd < end && chunkEnd - position < Self.maxJournalRecordBytes
            if !cutShort { return (position - offset, true) }
        }
        return (position - offset, false)
    }

    /// The journal's length; `0` for a read-only root without a journal, `nil` when it cannot
    /// be told.
    private func journalEnd() -> Int? {
        if journalFD < 0 { return 0 }  // a read-only root without a journal
        // Without the time stamps: reading them would make the next append dirty the
        // journal's inode (see ``FileSystem/statusWithoutTimes``).
        return fileSystem.statusWithoutTimes(journalFD).map { Int(clamping: $0.sizes.logical) }
    }

    /// `count` bytes of the journal at `offset`; `nil` when they cannot all be read.
    func readJournalBytes(at offset: Int, count: Int) -> [UInt8]? {
        // Threads holding the lock shared read the one descriptor at once.
        fileSystem.readBytes(of: journalFD, at: offset, count: count)
    }

    /// The saved snapshot, when it is of `epoch` (of any epoch when `nil`), opened to be read
    /// in place (``SnapshotFile``) with the older layers it stacks on, with its epoch and its
    /// newest layer's length in bytes. Each file's header is read and judged first, then its
    /// directory, whose length the header gives and the file's length must agree with: a
    /// snapshot of another epoch or format, garbage, or a sparse file of gigabytes costs one
    /// small read. `nil` for any of them, or when a file is missing (an older layer another
    /// process's merge removed: the epoch moved) or its directory is damaged; a damaged page
    /// is found when it is read.
    ///
    /// - Complexity: O(folders + pages) of each layer — the directories — never O(entries).
    func readSnapshot(of epoch: UInt64?) -> (index: SizeIndex, epoch: UInt64, byteCount: Int)? {
        /// The layer file at `path`, opened; `nil` when missing or damaged.
        func openLayer(_ path: String, _ body: (SnapshotFile.Source, Int, (Int, Int) -> [UInt8]?) -> Bool) -> Bool {
            let fd = fileSystem.open(path, O_RDONLY | O_CLOEXEC, 0, below: workingRoot)
            guard fd >= 0 else { return false }
            guard let length = fileSystem.statusWithoutTimes(fd).map({ Int(clamping: $0.sizes.logical) }),
                body(
                    .file(fd, fileSystem),
                    length,
                    { offset, count in fileSystem.readBytes(of: fd, at: offset, count: count) }
                )
            else {
                _ = fileSystem.close(fd)
                return false
            }
            // The file owns the descriptor from here, and closes it when the index lets it go.
            return true
        }
        var opened: (SnapshotFile, SizeIndex)?
        _ = openLayer(indexPath) { source, length, readAt in
            // The header first: a snapshot of another epoch opens none of its layers.
            guard let header = readAt(0, SizeIndex.headerLength), let tag = SizeIndex.epoch(ofHeader: header),
                epoch == nil || tag == epoch
            else { return false }
            opened = SnapshotFile.open(source: source, length: length, readAt: readAt) { base in
                var layer: (SnapshotFile, SnapshotFile.Directory)?
                _ = openLayer(self.layerPath(of: base)) { source, length, readAt in
                    layer = SnapshotFile.openLayer(source: source, length: length, readAt: readAt)
                    return layer != nil
                }
                return layer
            }
            return opened != nil
        }
        guard let (file, index) = opened else { return nil }
        return (index, file.epoch, file.byteCount)
    }

    /// Where the layer of the snapshot of `epoch` stays once a newer one stacks on it: `index.`
    /// and the epoch in sixteen hex digits.
    func layerPath(of epoch: UInt64) -> String {
        let hex = String(epoch, radix: 16)
        return indexPath + "." + String(repeating: "0", count: max(0, 16 - hex.count)) + hex
    }

    /// Removes every older layer file but those of `kept`, under the exclusive lock after a new
    /// snapshot was renamed into place: those the snapshot does not stack on (a process that
    /// opened one keeps reading it by its descriptor; one about to open it finds the epoch
    /// moved), and any a fold killed before its rename left.
    ///
    /// - Complexity: One read of the internal folder, an `unlink` per layer removed.
    func removeLayers(keeping kept: [UInt64]) {
        guard let stream = DirectoryEntries.open(internalPath, below: workingRoot) else { return }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = String(cString: DirectoryEntries.name(of: entry))
            // "index." and sixteen hex digits
            guard name.utf8.count == 22, name.hasPrefix("index."), let epoch = UInt64(name.dropFirst(6), radix: 16),
                !kept.contains(epoch)
            else { continue }
            names.append(name)
        }
        closedir(stream)
        for name in names { _ = fileSystem.unlink(internalPath + "/" + name, below: workingRoot) }
    }

    /// Writes the marker's flag byte.
    func setMarker(dirty: Bool) throws {
        var flag = dirty ? UInt8(ascii: "D") : UInt8(ascii: "C")
        guard fileSystem.pwrite(markerFD, &flag, 1, 0) == 1 else {
            throw StorageError.posix("write index marker", path: markerPath, errno: errno)
        }
    }
}
