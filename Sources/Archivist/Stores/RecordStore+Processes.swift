import Foundation

// Several processes on one store folder (an app and its extension in an app-group
// container, several workers of a service). Every process keeps all records in memory; the
// change log is the shared truth. A writer takes the folder's cross-process lock, first
// reads what other processes appended since it last looked (or reloads snapshot and log when
// another process compacted), then appends, so upsert-by-id and insert's duplicate check hold
// across processes and a compaction includes everybody's committed changes.
extension RecordStore {
    /// Brings the records in memory up to date with the log on disk. Call inside
    /// ``writing(_:)`` and the cross-process lock.
    ///
    /// - Complexity: One `fstat` when nothing changed; O(new entries) after another process
    ///   appended; O(snapshot + log) after it compacted or reset the log.
    func catchUpLocked() throws {
        switch log.state(expectedGeneration: state.withLock { $0.generation }) {
        case .current:
            return
        case .grown:
            let bad = try log.readNewEntries(
                as: RecordBatch<Record>.self, options: RecordBatch<Record>.decodingOptions(configuration.archiveOptions)
            ) { batch in
                state.withLock { $0.apply(upserts: batch.upserts, deletes: batch.deletes) }
                markWatches { id in batch.upserts.contains { $0.id == id } || batch.deletes.contains(id) }
                notify(Change(upserted: batch.upserts.map(\.id), deleted: batch.deletes, isFromAnotherProcess: true, isReload: false))
            }
            if let bad { damage.withLock { $0 = Damage(quarantinedBytes: bad.bytes, quarantineURL: bad.url) } }
        case .replaced:
            try reloadFromDisk()
            markWatches { _ in true }
            notify(Change(upserted: [], deleted: [], isFromAnotherProcess: true, isReload: true))
        }
    }

    /// Runs `body`, which changes the record `id` outside the cross-process lock; the closure
    /// it receives tells whether catching up has since applied another process's change to
    /// that record (or reloaded everything), in which case the change must be redone.
    func watching<R>(_ id: Record.ID, _ body: (_ isTouched: () -> Bool) throws -> R) throws -> R {
        let index = watches.withLock { list -> Int in
            list.append((id, false))
            return list.count - 1
        }
        defer { _ = watches.withLock { $0.removeLast() } }
        return try body { watches.withLock { $0[index].touched } }
    }

    private func markWatches(_ touches: (Record.ID) -> Bool) {
        watches.withLock { list in
            for index in list.indices where !list[index].touched && touches(list[index].id) {
                list[index].touched = true
            }
        }
    }
}

extension RecordStore {
    /// Every hold of `records.lock` by this store so far, by duration (the `processes`
    /// benchmark's figures).
    package var crossProcessLockHolds: LockHoldHistogram { crossProcessLock.holdHistogram }
}
