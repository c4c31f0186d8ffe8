import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PersistentIndex {
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
        guard let (saved, _, _) = readSnapshot(of: epoch) else {
            // A later epoch's snapshot is one whose epoch is about to begin (or whose holder
            // died before it did: the intent word, set, then calls for a repair).
            return (shared.epoch == epoch && !isLater(snapshotEpochAt: epoch) ? .needsScan : .needsReload, epoch)
        }
        var index = saved
        var previous: PreviousFolder?
        let prefix = replayJournal(from: 0, into: &index, previous: &previous) ?? (0, false)
        let outcome = try holding(exclusive: false) { hold -> CatchUpOutcome in
            guard shared.epoch == epoch,
                let rest = replayJournal(from: prefix.consumed, into: &index, previous: &previous)
            else { return .needsReload }
            let counter = shared.change
            changeState(hold) { state in
                state.index = index
                state.journalOffset = prefix.consumed + rest.consumed
                state.appliedEpoch = epoch
                // Past a damaged record the counter stays behind, so the next catch-up reads
                // the damage again and calls for the repair.
                if !rest.damaged { state.appliedChange = counter }
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

    /// What a fold did.
    enum FoldOutcome: Equatable {
        /// A new snapshot layer was renamed into place and its epoch begun.
        case folded
        /// Another process folded or repaired meanwhile, or a repair is due: nothing changed.
        case lost
        /// Folding now would stack more than ``maxSnapshotLayers`` layers without a merge larger
        /// than ``foldMergeBudget``: the journal stays as it is (it is the saved form of the
        /// changes), and a merge of every layer is scheduled in the background.
        case deferred
    }

    /// The layers a fold keeps a snapshot to, merging its newest ones within ``foldMergeBudget``;
    /// a fold that leaves more schedules a merge of them all in the background.
    static let snapshotLayerCap = 8
    /// The most layers a snapshot holds: past it, a fold that cannot merge within
    /// ``foldMergeBudget`` is deferred (``FoldOutcome/deferred``).
    static let maxSnapshotLayers = 16
    /// The bytes of older layers a fold reads and merges into its new one at most, unless it is
    /// the background merge of every layer: what a ``flush()`` may cost beyond its changes.
    static let foldMergeBudget = 1 << 19

    /// How many of a snapshot's newest layers (of `layerBytes` bytes each, newest first) a fold
    /// of `changedBytes` bytes of changed records merges into its new layer: each layer no more
    /// than twice the bytes gathered so far — so the layers grow geometrically downwards and a
    /// record is rewritten a logarithmic number of times — or any while the stack is past
    /// ``snapshotLayerCap``, as long as all stay within ``foldMergeBudget``.
    static func layersToMerge(changedBytes: Int, layerBytes: [Int]) -> Int {
        var merged = 0
        var bytes = changedBytes
        while merged < layerBytes.count {
            let next = layerBytes[merged]
            let tooDeep = layerBytes.count - merged + 1 > snapshotLayerCap
            guard bytes * 2 >= next || tooDeep, bytes + next <= foldMergeBudget else { break }
            bytes += next
            merged += 1
        }
        return merged
    }

    /// The layers of the snapshot this process's index reads; 0 for an index built in memory.
    var snapshotLayerCount: Int {
        readState { $0.index.file == nil ? 0 : 1 + $0.index.bases.count }
    }

    /// Folds the journal into a new snapshot layer, serialized and written without the lock
    /// from this process's index as of a journal position; then, under a short exclusive hold,
    /// caught up, the current snapshot file kept under its epoch's layer name (when the new one
    /// stacks on it), the new one renamed into place, with the records appended meanwhile moved
    /// to the start of the journal as the new epoch's, if the epoch did not move and no repair
    /// is due; then the layers no longer stacked on are removed. The intent word is set across
    /// that hold's file changes, so a holder killed there leaves a repair. `LockHoldTests`
    /// guards that the snapshot is written outside the lock.
    ///
    /// The new layer holds what changed since the snapshot the index was loaded from, merged
    /// with some of its newest layers (``layersToMerge(changedBytes:layerBytes:)``); with
    /// `merging`, or for an index built in memory, every record in one layer that stacks on
    /// nothing.
    ///
    /// - Returns: What it did (``FoldOutcome``; on ``FoldOutcome/lost`` the temporary is deleted).
    /// - Throws: ``StorageError`` when the snapshot cannot be written or renamed (nothing changed).
    /// - Complexity: Without the lock, O(folders + changes + the layers merged), or O(entries)
    ///   with `merging`; under it, a catch-up, a link, a rename, and the records appended while
    ///   the layer was written.
    func foldJournal(merging: Bool = false) throws -> FoldOutcome {
        // The copy and its journal position under a short shared hold, which none of this
        // process's writes is inside: one between applying its change and moving the position
        // past its record would have the new epoch's journal apply that change again
        // (`RebaseRaceTests`). O(folders): the copy shares each folder's table until written.
        let (snapshot, epoch, offset) = try holding(exclusive: false) { _ in
            readState { ($0.index.snapshot(), $0.appliedEpoch, $0.journalOffset) }
        }
        // The layers stack only on the snapshot of the epoch folded: an index loaded from
        // another (its rebase failed) or built in memory is saved whole.
        let layered = !merging && snapshot.layers.first == epoch
        var merged = snapshot.layers.count
        if layered {
            // The layer's pages, and a page's worth for its header and directory.
            let records = snapshot.folders.reduce(0) { $0 + $1.entries.count }
            let changed = ((records + Self.recordsPerPage - 1) / Self.recordsPerPage + 1) * Self.snapshotPageSize
            merged = Self.layersToMerge(changedBytes: changed, layerBytes: snapshot.layerBytes)
            if snapshot.layers.count - merged + 1 > Self.maxSnapshotLayers {
                scheduleFold()
                return .deferred
            }
        }
        // A page of a layer the index reads is damaged: the next catch-up repairs.
        guard let bytes = snapshot.serialized(epoch: epoch &+ 1, merging: merged) else { return .lost }
        let prepared = try prepareSnapshot(bytes)
        var renamed = false
        defer { if !renamed { prepared.discard(fileSystem) } }
        let folded = try holding(exclusive: true) { hold throws -> Bool in
            guard !shared.intent, catchUp(hold) == .caughtUp, shared.epoch == epoch else { return false }
            let end = readState { $0.journalOffset }
            guard end >= offset, let tail = readJournal(from: offset), tail.count == end - offset else { return false }
            // The snapshot file of the epoch folded stays, under its layer name, when the new
            // one stacks on it. A link left by a holder killed before its rename is replaced.
            if bytes.bases.first == epoch {
                let layer = layerPath(of: epoch)
                _ = fileSystem.unlink(layer, below: workingRoot)
                guard fileSystem.link(indexPath, layer, below: workingRoot) == 0 else { return false }
            }
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
            changeState(hold) { state in
                state.journalOffset = tail.count
                state.appliedEpoch = epoch &+ 1
                state.appliedChange = counter
            }
            try? setMarker(dirty: false)
            shared.intent = false
            removeLayers(keeping: bytes.bases)
            return true
        }
        guard folded else { return .lost }
        rebase(onSnapshotOf: epoch &+ 1)
        if bytes.bases.count + 1 > Self.snapshotLayerCap { scheduleFold() }
        return .folded
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
        let start = readState { $0.appliedEpoch == epoch ? $0.journalOffset : -1 }
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
        try? holding(exclusive: false) { hold in
            let end = readState { $0.appliedEpoch == epoch ? $0.journalOffset : -1 }
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
            changeState(hold) { state in
                guard state.appliedEpoch == epoch, state.journalOffset == end else { return }  // a catch-up moved it
                state.index = index
                state.replayedFolder = previous
            }
        }
    }
}
