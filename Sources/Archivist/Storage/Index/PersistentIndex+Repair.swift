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
/// after ``scanAttempts`` tries the scan runs under the lock, so that the call ends.
extension PersistentIndex {
    /// How many scans without the lock a catch-up tries before scanning under it.
    static let scanAttempts = 8

    /// What an open does about the index once it released the lock (``loadIndexAtOpen()``).
    enum IndexLoad {
        /// Read the snapshot and the journal (without the lock, ``reloadWithoutLock()``).
        case load
        /// Scan the root: a repair is due (the intent word is set).
        case repair
        /// A root that refuses writes: its snapshot, whatever its epoch, or a scan (`unclean`:
        /// the marker says the last run did not save its index).
        case readOnly(unclean: Bool)
    }

    /// At open, under the exclusive lock: claims the shared counters and a slot, and says what
    /// to do about the index once the lock is released — nothing that grows with the entries
    /// runs here. The root is marked for a repair (the intent word) when the marker or the
    /// intent word says a process died mid-change, or the shared counters were reinitialised.
    /// A slot of a process that died without freeing it (killed or crashed: a normal exit
    /// frees it) is freed and the dead process's temporaries are swept on the trash queue; it
    /// needs no rescan, since every file change of a killed holder that its journal record
    /// lacks leaves the intent word set (see ``mutate(origin:target:_:change:)``).
    ///
    /// - Returns: This process's slot in the shared counters, to free when the index goes away,
    ///   what ``loadIndexAfterOpening(_:backgroundRescanAbove:keepingAlive:)`` does, and whether
    ///   a dead process's temporaries are due for a sweep.
    func loadIndexAtOpen() -> (slot: Int?, load: IndexLoad, sweep: Bool) {
        var flag: UInt8 = 0
        let unclean = fileSystem.read(markerFD, &flag, 1) == 1 && flag == UInt8(ascii: "D")
        if writeRefusal != nil { return (nil, .readOnly(unclean: unclean), false) }
        let ours = shared.adoptLayout()
        // A dead owner's temporaries go even when another process's scan does the repair.
        let (slot, sweep) = shared.register()
        // A holder that died naming its one entry leaves that entry to look at, once the
        // snapshot is loaded (``repairIntentTarget(_:)``), not a rescan.
        if ours && !unclean && (!shared.intent || shared.intentTarget != nil) { return (slot, .load, sweep) }
        shared.intent = true  // no process starts a change until a scan is in place
        return (slot, .repair, sweep)
    }

    /// At open, once ``loadIndexAtOpen()`` released the lock: loads the snapshot and the
    /// journal, or repairs the index by a scan — when that said so, or when the snapshot is
    /// missing, damaged or of another epoch — or catches up with another process's repair. A
    /// read-only root's snapshot (or scan) is read without any lock: nobody can change it.
    ///
    /// With `backgroundRescanAbove`, the repair of a root whose last snapshot counted at least
    /// that many entries runs on a background queue rather than before this returns
    /// (``repairInBackground(unusableSnapshotOf:keepingAlive:)``), keeping `owner` alive meanwhile.
    ///
    /// - Throws: ``StorageError`` when the lock cannot be taken or the root cannot be scanned.
    func loadIndexAfterOpening(
        _ load: IndexLoad,
        backgroundRescanAbove: Int? = nil,
        keepingAlive owner: (any Sendable & AnyObject)? = nil
    ) throws {
        switch load {
        case .readOnly(let unclean):
            if !unclean, let (_, epoch, _) = readSnapshot(of: nil),
                reload(readOnlyHold(), counter: 0, epoch: epoch) == .caughtUp
            {
                return
            }
            let index = try BackgroundActivity.run("Archivist: scanning a read-only cache") { _ in try scan() }
            changeState(readOnlyHold()) { $0.index = index }
            return
        case .load:
            let (outcome, epoch) = try reloadWithoutLock()
            if outcome == .needsScan {
                if rescanIsLong(above: backgroundRescanAbove) {
                    return repairInBackground(unusableSnapshotOf: epoch, keepingAlive: owner)
                }
                try repair(unusableSnapshotOf: epoch)  // before the open returns
            }
        case .repair:
            if rescanIsLong(above: backgroundRescanAbove) {
                return repairInBackground(unusableSnapshotOf: nil, keepingAlive: owner)
            }
        }
        try withCaughtUpIndex(exclusive: false) { _ in }
    }

    /// Runs `body` holding the lock (exclusively, or shared) with the index caught up with
    /// every process's committed changes. When the catch-up calls for a reload, a repair or a
    /// rebuild by scan, the lock is released, that work done without it, and the catch-up
    /// tried again.
    ///
    /// - Throws: ``StorageError`` when the lock cannot be taken or the root cannot be scanned;
    ///   what `body` throws.
    /// - Complexity: One catch-up under the lock (see ``catchUp(_:)``) in the common case.
    func withCaughtUpIndex<R>(exclusive: Bool, _ body: (Hold) throws -> R) throws -> R {
        func attempt(_ hold: Hold) throws -> (CatchUpOutcome, R?) {
            let outcome = exclusive ? catchUpExclusive(hold) : catchUpShared(hold)
            guard outcome == .caughtUp else { return (outcome, nil) }
            return (.caughtUp, try body(hold))
        }
        for _ in 0..<Self.scanAttempts {
            let (outcome, result) = try holding(exclusive: exclusive, attempt)
            if outcome == .caughtUp, let result { return result }
            try resolve(outcome, repairing: true)
        }
        // Processes keep dying mid-change, repairing or folding the journal under this one:
        // catch up under the lock, so that this call ends however often others die.
        func lastResort(_ hold: Hold) throws -> R {
            var outcome = catchUpExclusive(hold)
            if outcome == .needsReload {
                outcome = reload(hold, counter: shared.change, epoch: shared.epoch)
                if outcome == .caughtUp { outcome = catchUpExclusive(hold) }
            }
            if outcome != .caughtUp { try saveSnapshotExclusive(hold, scanning: true) }
            return try body(hold)
        }
        return try holding(exclusive: true, lastResort)
    }

    /// Does, without the lock, what a catch-up under it said is due; a repair only when
    /// `repairing` (``refresh()`` leaves that to the next change or size).
    func resolve(_ outcome: CatchUpOutcome, repairing: Bool) throws {
        switch outcome {
        case .caughtUp:
            return
        case .needsRepair:
            if repairing { try repair() }
        case .needsScan:
            if try rebuildFromScan(), repairing { try repair() }
        case .needsReload:
            let (reloaded, _) = try reloadWithoutLock()
            if reloaded != .needsReload { try resolve(reloaded, repairing: repairing) }
        }
    }

    /// Catches up under the exclusive lock; a set intent word calls for a repair at once,
    /// unless its holder named the one entry it was changing (``repairIntentTarget(_:)``).
    private func catchUpExclusive(_ hold: Hold) -> CatchUpOutcome {
        if shared.intent && !repairIntentTarget(hold) { return .needsRepair }
        return catchUp(hold)
    }

    /// Catches up under the shared lock; an intent word set then means its writer died (no
    /// writer holds the lock now): a repair is due, whatever else the catch-up found.
    private func catchUpShared(_ hold: Hold) -> CatchUpOutcome {
        let outcome = catchUp(hold)
        return shared.intent ? .needsRepair : outcome
    }

    /// Repairs the index: marks the root (the intent word) under a short hold, scans it without
    /// the lock, and installs the scan as the snapshot of a new epoch under another short hold,
    /// if no other process repaired meanwhile (see the extension's discussion). Returns early,
    /// scanning nothing, when no repair is due any more.
    ///
    /// - Parameter unusable: An epoch whose snapshot this process found missing or damaged at
    ///   open: a repair is due while it is still the current epoch.
    /// - Throws: ``StorageError`` when the lock cannot be taken or the root cannot be scanned.
    /// - Complexity: Two short holds of the lock; O(entries) blocking file I/O without it.
    func repair(unusableSnapshotOf unusable: UInt64? = nil) throws {
        try repairGate.withLock {
            let due = try holding(exclusive: true) { hold -> UInt64? in
                if shared.intent && unusable == nil && repairIntentTarget(hold) { return nil }  // one entry to look at
                if !shared.intent {
                    // A damaged journal, or a snapshot an open cannot use: no process changes
                    // anything until the scan is in place.
                    // repaired meanwhile
                    guard unusable == shared.epoch || catchUp(hold) == .needsRepair else { return nil }
                    shared.intent = true
                }
                return shared.epoch
            }
            guard let epoch = due else { return }
            let (index, prepared, bytes) = try BackgroundActivity.run("Archivist: rebuilding a cache's size index") {
                _ in
                let index = try scan()
                // The snapshot's file too, written before the lock (unsynced, as every index save).
                // A scanned index reads no snapshot file, so it always serializes.
                let bytes = index.snapshot().serialized(epoch: epoch &+ 1)
                let prepared = try? bytes.map(prepareSnapshot)
                return (index, prepared, bytes?.byteCount ?? 0)
            }
            do {
                let installed = try holding(exclusive: true) { hold -> Bool in
                    guard shared.intent && shared.epoch == epoch else {
                        prepared?.discard(fileSystem)  // another process repaired: catch up with it
                        return false
                    }
                    var saved = false
                    if let prepared {
                        saved = (try? prepared.rename(fileSystem)) == true
                        if !saved { prepared.discard(fileSystem) }
                    }
                    changeState(hold) { $0.index = index }
                    startEpoch(hold, snapshotBytes: saved ? bytes : nil, scanned: true)
                    return saved
                }
                // The scan's records in memory give way to the snapshot file just saved.
                if installed { rebase(onSnapshotOf: epoch &+ 1) }
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
    /// - Throws: ``StorageError`` when the lock cannot be taken or the root cannot be scanned.
    /// - Complexity: One short hold of the lock; O(entries) blocking file I/O without it.
    @discardableResult
    func rebuildFromScan() throws -> Bool {
        try repairGate.withLock {
            let epoch = shared.epoch
            if readState({ $0.appliedEpoch }) == epoch { return false }  // rebuilt meanwhile
            var previous: PreviousFolder?
            var (index, prefix) = try BackgroundActivity.run("Archivist: rebuilding a cache's size index") { _ in
                // Records read without the lock: a tail being appended may be cut short; what
                // follows the last whole one is read again under the lock.
                var index = try scan()
                let prefix = replayJournal(from: 0, into: &index, previous: &previous) ?? (0, false)
                return (index, prefix)
            }
            return try holding(exclusive: false) { hold -> Bool in
                // Otherwise the catch-up that follows sees what moved, and what is due.
                guard shared.epoch == epoch, !shared.intent,
                    let rest = replayJournal(from: prefix.consumed, into: &index, previous: &previous)
                else { return false }
                if rest.damaged { return true }  // the index, half replayed, is not installed
                let counter = shared.change
                changeState(hold) { state in
                    state.index = index
                    state.journalOffset = prefix.consumed + rest.consumed
                    state.appliedEpoch = epoch
                    state.appliedChange = counter
                    state.replayedFolder = nil
                    // anything may have changed
                    state.changes.append(StoreChange(.clear(FolderPath([])), origin: 0, fromOtherProcess: true))
                }
                return false
            }
        }
    }

    /// Rebuilds the index by a scan, as after a process died mid-change: sets the intent word
    /// under a short exclusive hold, then flushes, whose catch-up repairs (``repair()``).
    ///
    /// - Throws: ``StorageError`` when the root refuses writes or the snapshot cannot be saved.
    /// - Complexity: Blocking file I/O: O(entries) for the scan, which holds no lock.
    func rebuildByScan() throws {
        try checkWritable()
        try holding(exclusive: true) { _ in shared.intent = true }
        try flush()
    }
}
