extension PersistentIndex {
    /// A committed change as memory tiers and change notifications see it.
    package struct StoreChange: Sendable, Hashable {
        /// The folder changed: the entry's, or the one cleared.
        package var folder: FolderPath
        /// The entry changed; `nil` when everything inside `folder` may have changed.
        package var name: EntryName?
        /// Who made it in this process (the token passed to the write; 0 for the store's own
        /// changes such as evictions); 0 for another process's.
        package var origin: UInt
        /// Whether another process made it (seen in the journal).
        package var fromOtherProcess: Bool

        init(_ change: Change, origin: UInt, fromOtherProcess: Bool) {
            (folder, name) = change.touched
            self.origin = origin
            self.fromOtherProcess = fromOtherProcess
        }

        /// "Anything may have changed", for an observer that fell too far behind.
        package static let everything = StoreChange(.clear(FolderPath([])), origin: 0, fromOtherProcess: true)

        /// Whether the change may have touched `key`.
        package func touches(_ key: DiskKey) -> Bool {
            if let name { return name == key.name && folder == key.folder }
            return folder.contains(key.folder)
        }
    }

    /// The last ``capacity`` changes, numbered from 0 in the order they were applied.
    ///
    /// A ring: once full, each change overwrites the oldest in place, where dropping the older
    /// half with `removeFirst` moves the kept half each time, a copied change for every change
    /// (the `cache-manager` suite's 1 KB set guards it).
    struct ChangeRing {
        static let capacity = 1_024
        /// The number of the oldest change kept.
        var first: UInt64 = 0
        /// The changes kept: in order until the ring is full; after that the oldest is at `start`.
        private var storage: [StoreChange] = []
        private var start = 0
        /// The number the next change will get.
        var next: UInt64 { first + UInt64(storage.count) }

        mutating func append(_ change: StoreChange) {
            guard storage.count == Self.capacity else {
                storage.append(change)
                return
            }
            storage[start] = change
            start = start + 1 == Self.capacity ? 0 : start + 1
            first += 1
        }

        /// The changes numbered `sequence` (at least ``first``) and after, oldest first.
        func items(from sequence: UInt64) -> [StoreChange] {
            let skip = Int(sequence - first)
            let count = storage.count
            guard skip < count else { return [] }
            var out: [StoreChange] = []
            out.reserveCapacity(count - skip)
            for i in skip..<count { out.append(storage[(start + i) % count]) }
            return out
        }
    }

    /// The changes numbered `sequence` and after, and the number to ask from next time.
    /// `complete` is `false` when some of them are no longer kept: treat everything as changed.
    ///
    /// - Complexity: O(changes returned).
    package func changes(since sequence: UInt64) -> (changes: [StoreChange], next: UInt64, complete: Bool) {
        readState { state in
            let ring = state.changes
            if sequence >= ring.next { return ([], ring.next, true) }
            if sequence < ring.first { return (ring.items(from: ring.first), ring.next, false) }
            return (ring.items(from: sequence), ring.next, true)
        }
    }

    /// The number the next change will get: what a new observer starts from.
    package var changeSequence: UInt64 { readState { $0.changes.next } }

    /// Where the shared change counter lives, for a memory tier's one-load coherence check.
    package var changeCounter: UnsafePointer<UInt64> { shared.changeAddress }

    /// ``refresh()`` for an observer woken by the root's ``ChangeSignal`` (or its fallback
    /// poll): also catches up when a writer is between its journal record and its change
    /// counter, waiting for it under the lock held shared.
    ///
    /// On Linux the signal is the journal append itself, so it can arrive before the writer
    /// bumps the counter: ``refresh()``, which looks at the counter alone, would find nothing
    /// and the change would wait for the next poll. A writer sets the intent word before its
    /// file change and clears it only after the bump, so the word is read first: found clear,
    /// any commit that raised the signal has bumped the counter read next.
    ///
    /// <!-- snippet: skip the store's change signal is internal to the module -->
    /// ```swift
    /// let observation = store.changeSignal.observe(on: queue) { store.refreshAfterSignal() }
    /// ```
    ///
    /// - Complexity: Two atomic loads when nothing is new and no writer is under way;
    ///   otherwise the lock held shared and O(records appended since).
    package func refreshAfterSignal() {
        let writing = shared.intent
        if !writing && readState({ $0.appliedChange }) == shared.change { return }
        _ = try? holding(exclusive: false) { catchUp($0) }
    }
}

extension PersistentIndex {
    /// The longest time this process has held the root's cross-process lock, for the figures
    /// in docs/Reliability.md.
    package var longestLockHold: Duration { lock.longestHold }

    /// Every hold of the root's cross-process lock by this process so far, by duration.
    package var lockHolds: LockHoldHistogram { lock.holdHistogram }
}
