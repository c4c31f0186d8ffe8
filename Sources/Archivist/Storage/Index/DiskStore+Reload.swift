import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DiskStore {
    /// Loads the snapshot of the current epoch (another process folded the journal, or repaired
    /// the root) and the journal's records since, reading both without the lock — the snapshot
    /// is O(entries), far too long a hold for a large root — and installing them under a short
    /// shared hold if the epoch did not move meanwhile (`LockHoldTests` guards it).
    ///
    /// A snapshot is renamed into place before its epoch begins, so the file read is whole,
    /// and its tag says which epoch it starts. While the epoch stays, the journal is only
    /// appended to (a new epoch truncates it), so the records read without the lock are those
    /// that follow, but for a tail being appended: what follows the last whole one is read
    /// again under the lock.
    ///
    /// - Returns: ``CatchUpOutcome/caughtUp`` when installed (a catch-up brings what followed),
    ///   ``CatchUpOutcome/needsRepair`` when installed but the journal is damaged,
    ///   ``CatchUpOutcome/needsScan`` when the snapshot of the epoch is missing or damaged,
    ///   ``CatchUpOutcome/needsReload`` when the epoch moved meanwhile (catch up again);
    ///   and the epoch it read.
    /// - Throws: ``StorageError`` when the lock cannot be taken.
    /// - Complexity: O(entries + journal) without the lock; under it, the journal's tail.
    func reloadWithoutLock() throws -> (CatchUpOutcome, epoch: UInt64) {
        let epoch = shared.epoch
        guard let (saved, _, snapshotBytes) = readSnapshot(of: epoch) else {
            // A later epoch's snapshot is one whose epoch is about to begin (or whose holder
            // died before it did: the intent word, set, then calls for a repair).
            return (shared.epoch == epoch && !isLater(snapshotEpochAt: epoch) ? .needsScan : .needsReload, epoch)
        }
        var index = saved
        var previous: PreviousFolder?
        let prefix = replayJournal(from: 0, into: &index, previous: &previous) ?? (0, false)
        let outcome = try lock.withShared { () -> CatchUpOutcome in
            guard shared.epoch == epoch,
                let rest = replayJournal(from: prefix.consumed, into: &index, previous: &previous)
            else { return .needsReload }
            let counter = shared.change
            state.withLock { state in
                state.index = index
                state.journalOffset = prefix.consumed + rest.consumed
                state.appliedEpoch = epoch
                // Past a damaged record the counter stays behind, so the next catch-up reads
                // the damage again and calls for the repair.
                if !rest.damaged { state.appliedChange = counter }
                state.snapshotBytes = snapshotBytes
                // anything may have changed
                state.changes.append(StoreChange(.clear(FolderPath([])), origin: 0, fromOtherProcess: true))
            }
            return rest.damaged ? .needsRepair : .caughtUp
        }
        return (outcome, epoch)
    }

    /// Whether the snapshot file holds an epoch later than `epoch` (its tag, without reading
    /// the rest).
    private func isLater(snapshotEpochAt epoch: UInt64) -> Bool {
        let fd = fileSystem.open(indexPath, O_RDONLY | O_CLOEXEC, 0, below: workingRoot)
        guard fd >= 0 else { return false }
        defer { _ = fileSystem.close(fd) }
        var header = [UInt8](repeating: 0, count: SizeIndex.headerLength)
        guard fileSystem.pread(fd, &header, header.count, 0) == header.count,
            let tag = SizeIndex.epoch(ofHeader: header)
        else { return false }
        return tag > epoch
    }

    /// Folds the journal into a new snapshot, the snapshot serialized and written without the
    /// lock — O(entries), too long a hold for a large root — from this process's index as of
    /// a journal position; then, under a short exclusive hold, caught up, renamed into place,
    /// with the records appended meanwhile moved to the start of the journal as the new
    /// epoch's, if the epoch did not move and no repair is due. The intent word is set across
    /// that hold's file changes, so a holder killed there leaves a repair. `LockHoldTests`
    /// guards that the snapshot is written outside the lock.
    ///
    /// - Returns: Whether the journal was folded; `false` when another process folded or
    ///   repaired meanwhile, or a repair is due (nothing changed; the temporary is deleted).
    /// - Throws: ``StorageError`` when the snapshot cannot be written or renamed (nothing changed).
    /// - Complexity: O(entries) without the lock; under it, a catch-up, a rename, and the
    ///   records appended while the snapshot was written.
    func foldJournal() throws -> Bool {
        // The copy and its journal position under a short shared hold, which none of this
        // process's writes is inside: one between applying its change and moving the position
        // past its record would have the new epoch's journal apply that change again
        // (`RebaseRaceTests`). O(folders): the copy shares each folder's table until written.
        let (snapshot, epoch, offset) = try lock.withShared {
            state.withLock { ($0.index.snapshot(), $0.appliedEpoch, $0.journalOffset) }
        }
        // A page of the snapshot file the index reads is damaged: the next catch-up repairs.
        guard let bytes = snapshot.serialized(epoch: epoch &+ 1) else { return false }
        let prepared = try bytes.withChunks { chunks in
            try AtomicFile.prepare(
                chunks,
                toPath: indexPath,
                durability: .none,
                createFolders: false,
                fileSystem: fileSystem,
                below: workingRoot
            )
        }
        var renamed = false
        defer { if !renamed { prepared.discard(fileSystem) } }
        let folded = try lock.withExclusive { () throws -> Bool in
            guard !shared.intent, catchUp() == .caughtUp, shared.epoch == epoch else { return false }
            let end = state.withLock { $0.journalOffset }
            guard end >= offset, let tail = readJournal(from: offset), tail.count == end - offset else { return false }
            shared.intent = true
            do {
                renamed = try prepared.rename(fileSystem)
            } catch {
                shared.intent = false
                throw error
            }
            guard renamed else {
                shared.intent = false
                return false
            }
            // The new epoch's journal: the records that followed the snapshot's position. On
            // failure the word stays set, and the next holder repairs.
            let moved =
                tail.isEmpty
                || tail.withUnsafeBytes { fileSystem.pwrite(journalFD, $0.baseAddress!, $0.count, 0) == $0.count }
            guard moved, fileSystem.ftruncate(journalFD, off_t(tail.count)) == 0 else { return false }
            _ = shared.bumpEpoch()
            let counter = shared.bumpChange()
            state.withLock { state in
                state.journalOffset = tail.count
                state.appliedEpoch = epoch &+ 1
                state.appliedChange = counter
                state.snapshotBytes = bytes.byteCount
            }
            try? setMarker(dirty: false)
            shared.intent = false
            return true
        }
        if folded { rebase(onSnapshotOf: epoch &+ 1) }
        return folded
    }

    /// After this process saved the snapshot of `epoch`: reads the index from that file, as
    /// the other processes do, rather than keeping in memory every change since the snapshot
    /// it loaded before — which would grow with each fold. The snapshot and the records this
    /// process had applied when it looked are read without the lock: the file is renamed into
    /// place, and while the epoch lasts the journal is only appended to. The records it applied
    /// since, and the install, come under a short shared hold, which none of this process's
    /// writes is inside: a write applies its change to the index before it appends the record
    /// and moves this process's journal position after, so an install between the two would
    /// drop the change for good (`RebaseRaceTests` guards it). When the epoch moved or a record
    /// is damaged, the index in memory stays, exact all the same.
    ///
    /// - Complexity: O(folders + pages) for the snapshot's directory, and the journal's
    ///   records; under the lock, those appended while the others were replayed.
    func rebase(onSnapshotOf epoch: UInt64) {
        let start = state.withLock { $0.appliedEpoch == epoch ? $0.journalOffset : -1 }
        guard start >= 0, let (saved, _, _) = readSnapshot(of: epoch),
            let applied = readJournalBytes(at: 0, count: start)
        else { return }
        var previous: PreviousFolder?
        var index = saved
        var run = SizeIndex.Replay(expecting: start / 64)
        let (_, damaged) = Self.forEachRecord(in: applied[...], previous: &previous) { change, before in
            index.replay(change, before: before, in: &run)
        }
        index.finish(&run)
        guard !damaged else { return }
        try? lock.withShared {
            let end = state.withLock { $0.appliedEpoch == epoch ? $0.journalOffset : -1 }
            guard end >= start else { return }
            if end > start {
                guard let tail = readJournalBytes(at: start, count: end - start) else { return }
                var run = SizeIndex.Replay()
                let (_, damaged) = Self.forEachRecord(in: tail[...], previous: &previous) { change, before in
                    index.replay(change, before: before, in: &run)
                }
                index.finish(&run)
                guard !damaged else { return }
            }
            state.withLock { state in
                guard state.appliedEpoch == epoch, state.journalOffset == end else { return }  // a catch-up moved it
                state.index = index
                state.replayedFolder = previous
            }
        }
    }
}
