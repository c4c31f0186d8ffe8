extension DiskStore {
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
        if !writing && state.withLock({ $0.appliedChange }) == shared.change { return }
        _ = try? lock.withShared { catchUp() }
    }
}
