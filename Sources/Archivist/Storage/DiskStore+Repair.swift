import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rebuilding the size index from a scan of the root without holding the cross-process lock
/// across the scan, whose length grows with the entries (iOS terminates a suspended app that
/// holds a file lock in a shared container, `0xdead10cc`).
///
/// Two cases, each a scan made without the lock and checked under a short hold:
/// - **Repair** (``repair()``): the journal cannot tell every change — a holder died between
///   a file change and its record (the intent word is set), a record is damaged, the marker
///   says so at open, the shared counters were reinitialised, or the snapshot is missing at
///   open. The repairer sets the intent word under the lock (if it is not set already) and
///   releases it. While the word is set, no process starts a change (each finds it under the
///   lock and repairs first), so the disk the scan walks does not change. Under a second short
///   hold the scan is installed as the snapshot of a new epoch — if the word is still set and
///   the epoch unmoved: else another process repaired meanwhile (and changes may have
///   followed), and this one catches up instead. The snapshot file is written before that hold.
/// - **Rebuild** (``rebuildFromScan()``): the journal is whole but the snapshot of its epoch
///   is missing (its save failed). Changes go on meanwhile, each journaled; the scan plus every
///   record of the epoch, applied in order, is the index — if, under the hold that installs
///   it, the epoch is unmoved and the intent word clear (every change since the epoch began is
///   in the journal). Records hold absolute values, so one the scan already saw sets nothing new.
///
/// Each process scans for itself (one scan at a time in a process, ``repairGate``); a scan
/// runs inside a ``BackgroundActivity``. If processes keep dying mid-change under a repairer,
/// after ``scanAttempts`` tries the scan runs under the lock, as it always did before.
extension DiskStore {
    /// How many scans without the lock a catch-up tries before scanning under it.
    static let scanAttempts = 8

    /// At open, under the exclusive lock: loads the snapshot and the journal, or marks the root
    /// for a repair when the marker or the intent word says a process died mid-change, the
    /// shared counters were reinitialised, or the snapshot is missing, damaged or of another
    /// epoch. A slot of a process that died without freeing it (killed or crashed: a normal exit
    /// frees it) is freed and the dead process's temporaries are swept on the trash queue; it
    /// needs no rescan, since every file change of a killed holder that its journal record
    /// lacks leaves the intent word set (see ``mutate(origin:_:change:)``).
    ///
    /// - Returns: This process's slot in the shared counters, to free when the store goes away,
    ///   and whether a repair is due (the caller runs it once the lock is released,
    ///   ``loadIndexAfterOpening()``).
    func loadIndexAtOpen() -> (slot: Int?, repairDue: Bool) {
        var flag: UInt8 = 0
        let unclean = fileSystem.read(markerFD, &flag, 1) == 1 && flag == UInt8(ascii: "D")
        if writeRefusal != nil {
            // Nobody can write this root: the saved snapshot, whatever its epoch, and journal.
            if !unclean, let bytes = try? AtomicFile.read(path: indexPath, fileSystem: fileSystem, below: root),
               let (_, epoch) = SizeIndex.deserialize(bytes),
               reload(counter: 0, epoch: epoch) == .caughtUp { return (nil, false) }
            return (nil, true)
        }
        let ours = shared.adoptLayout()
        let (slot, sweep) = shared.register()
        // A dead owner's temporaries go even when another process's scan does the repair.
        if sweep { sweepAbandonedEntryTemporaries() }
        if ours && !unclean && !shared.intent && reload(counter: shared.change, epoch: shared.epoch) == .caughtUp {
            return (slot, false)
        }
        shared.intent = true   // no process starts a change until a scan is in place
        return (slot, true)
    }

    /// At open, after ``loadIndexAtOpen()`` said a repair is due, without the lock: scans the
    /// root (a read-only root's scan is kept in memory; nobody can change it), or catches up
    /// with another process's repair.
    ///
    /// - Throws: ``CacheError`` when the root cannot be scanned.
    func loadIndexAfterOpening() throws {
        if writeRefusal != nil {
            let index = try BackgroundActivity.run("Archivist: scanning a read-only cache") { _ in try scan() }
            state.withLock { $0.index = index }
            return
        }
        try withCaughtUpIndex(exclusive: false) {}
    }

    /// Runs `body` holding the lock (exclusively, or shared) with the index caught up with
    /// every process's committed changes. When the catch-up calls for a repair or a rebuild by
    /// scan, the lock is released, the scan made without it, and the catch-up tried again.
    ///
    /// - Throws: ``CacheError`` when the lock cannot be taken or the root cannot be scanned;
    ///   what `body` throws.
    /// - Complexity: One catch-up under the lock (see ``catchUp()``) in the common case.
    func withCaughtUpIndex<R>(exclusive: Bool, _ body: () throws -> R) throws -> R {
        func attempt() throws -> (CatchUpOutcome, R?) {
            let outcome = exclusive ? catchUpExclusive() : catchUpShared()
            guard outcome == .caughtUp else { return (outcome, nil) }
            return (.caughtUp, try body())
        }
        for _ in 0..<Self.scanAttempts {
            let (outcome, result) = try exclusive ? lock.withExclusive(attempt) : lock.withShared(attempt)
            switch outcome {
            case .caughtUp:
                if let result { return result }
            case .needsRepair:
                try repair()
            case .needsScan:
                if try rebuildFromScan() { try repair() }
            }
        }
        // Processes keep dying mid-change, or repairing, under this one: scan under the lock.
        func lastResort() throws -> R {
            if catchUpExclusive() != .caughtUp { try saveSnapshotExclusive(scanning: true) }
            return try body()
        }
        return try lock.withExclusive(lastResort)
    }

    /// Catches up under the exclusive lock; a set intent word calls for a repair at once.
    private func catchUpExclusive() -> CatchUpOutcome {
        shared.intent ? .needsRepair : catchUp()
    }

    /// Catches up under the shared lock; an intent word still set once the catch-up is done
    /// means its writer died (no writer holds the lock now): a repair is due.
    private func catchUpShared() -> CatchUpOutcome {
        let outcome = catchUp()
        return outcome == .caughtUp && shared.intent ? .needsRepair : outcome
    }

    /// Repairs the index: marks the root (the intent word) under a short hold, scans it without
    /// the lock, and installs the scan as the snapshot of a new epoch under another short hold,
    /// if no other process repaired meanwhile (see the extension's discussion). Returns early,
    /// scanning nothing, when no repair is due any more.
    ///
    /// - Throws: ``CacheError`` when the lock cannot be taken or the root cannot be scanned.
    /// - Complexity: Two short holds of the lock; O(entries) blocking file I/O without it.
    func repair() throws {
        try repairGate.withLock {
            let due = try lock.withExclusive { () -> UInt64? in
                if !shared.intent {
                    guard catchUp() == .needsRepair else { return nil }   // repaired meanwhile
                    shared.intent = true   // a damaged journal: no process changes anything until the scan is in place
                }
                return shared.epoch
            }
            guard let epoch = due else { return }
            let (index, prepared, bytes) = try BackgroundActivity.run("Archivist: rebuilding a cache's size index") { _ in
                let index = try scan()
                // The snapshot's file too, written before the lock (unsynced, as every index save).
                let bytes = index.snapshot().serialized(epoch: epoch &+ 1)
                let prepared = try? bytes.withUnsafeBytes { raw in
                    try AtomicFile.prepare([raw], toPath: indexPath, durability: .none, createFolders: false,
                                           fileSystem: fileSystem, below: workingRoot)
                }
                return (index, prepared, bytes.count)
            }
            do {
                try lock.withExclusive {
                    guard shared.intent && shared.epoch == epoch else {
                        prepared?.discard(fileSystem)   // another process repaired: catch up with it
                        return
                    }
                    var saved = false
                    if let prepared {
                        saved = (try? prepared.rename(fileSystem)) == true
                        if !saved { prepared.discard(fileSystem) }
                    }
                    state.withLock { $0.index = index }
                    startEpoch(snapshotBytes: saved ? bytes : nil, scanned: true)
                }
            } catch {
                prepared?.discard(fileSystem)
                throw error
            }
        }
    }

    /// Rebuilds the index from a scan made without the lock plus the whole journal, when the
    /// snapshot of the current epoch is missing: installed under a short shared hold if the
    /// epoch did not move and the intent word is clear (see the extension's discussion).
    /// Changes go on meanwhile; no new epoch is started.
    ///
    /// - Returns: Whether the journal turned out damaged: a repair is due.
    /// - Throws: ``CacheError`` when the lock cannot be taken or the root cannot be scanned.
    /// - Complexity: One short hold of the lock; O(entries) blocking file I/O without it.
    @discardableResult
    func rebuildFromScan() throws -> Bool {
        try repairGate.withLock {
            let epoch = shared.epoch
            if state.withLock({ $0.appliedEpoch }) == epoch { return false }   // rebuilt meanwhile
            var (index, prefix) = try BackgroundActivity.run("Archivist: rebuilding a cache's size index") { _ in
                (try scan(), readJournal(from: 0) ?? [])
            }
            // Records read without the lock: a tail being appended may be cut short; what
            // follows the last whole one is read again under the lock.
            let decoded = Self.decodeJournal(prefix[...])
            prefix = []
            for change in decoded.changes { index.apply(change) }
            return try lock.withShared { () -> Bool in
                // Otherwise the catch-up that follows sees what moved, and what is due.
                guard shared.epoch == epoch, !shared.intent, let tail = readJournal(from: decoded.consumed) else { return false }
                let rest = Self.decodeJournal(tail[...])
                if rest.damaged { return true }
                for change in rest.changes { index.apply(change) }
                let counter = shared.change
                state.withLock { state in
                    state.index = index
                    state.journalOffset = decoded.consumed + rest.consumed
                    state.appliedEpoch = epoch
                    state.appliedChange = counter
                    state.snapshotBytes = 0
                    state.replayedFolder = nil
                    state.changes.append(StoreChange(.clear(FolderPath([])), origin: 0, fromOtherProcess: true))   // anything may have changed
                }
                return false
            }
        }
    }
}
