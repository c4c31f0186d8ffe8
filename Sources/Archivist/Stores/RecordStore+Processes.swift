import Foundation

// Several processes on one store folder (an app and its extension in an app-group
// container, several workers of a service). Every process keeps all records in memory; the
// change log is the shared truth. A writer takes the folder's cross-process lock, first
// reads what other processes appended since it last looked (or reloads snapshot and log when
// another process compacted), then appends, so upsert-by-id and insert's duplicate check hold
// across processes and a compaction includes everybody's committed changes.
extension RecordStore {
    /// Brings the records in memory up to date with the log on disk. Call inside
    /// ``writing(_:)`` and the cross-process lock, held exclusively — through
    /// ``withExclusiveCatchingUp(_:)``, so that a snapshot to reload from was decoded before
    /// the lock was taken.
    ///
    /// - Complexity: One `fstat` when nothing changed; O(new entries) after another process
    ///   appended; after it compacted or reset the log, O(log) to replay the log, the
    ///   snapshot decoded before the lock was taken.
    func catchUpLocked() throws {
        switch log.state(expectedGeneration: state.withLock { $0.generation }) {
        case .current:
            return
        case .grown:
            try applyNewEntries(settingAside: true)
        case .replaced:
            try reloadFromDisk()
            markWatches { _ in true }
            notify(Change(upserted: [], deleted: [], isFromAnotherProcess: true, isReload: true))
        }
    }

    /// ``catchUpLocked()`` for a reader holding the cross-process lock shared: applies the
    /// entries other processes appended, changing no file.
    ///
    /// - Throws: ``ChangeLog/NeedsExclusiveLock`` when the catch-up needs the exclusive lock
    ///   (another process compacted, or left a damaged tail to set aside); what it applied
    ///   before stays applied.
    func catchUpShared() throws {
        switch log.state(expectedGeneration: state.withLock { $0.generation }) {
        case .current: return
        case .grown: try applyNewEntries(settingAside: false)
        case .replaced: throw ChangeLog.NeedsExclusiveLock()
        }
    }

    /// Applies the log's entries past what was read, and reports them as other processes'.
    private func applyNewEntries(settingAside: Bool) throws {
        let bad = try log.readNewEntries(
            as: RecordBatch<Record>.self,
            options: RecordBatch<Record>.decodingOptions(configuration.archiveOptions),
            settingAside: settingAside
        ) { batch in
            state.withLock { $0.apply(upserts: batch.upserts, deletes: batch.deletes) }
            markWatches { id in batch.upserts.contains { $0.id == id } || batch.deletes.contains(id) }
            notify(
                Change(
                    upserted: batch.upserts.map(\.id),
                    deleted: batch.deletes,
                    isFromAnotherProcess: true,
                    isReload: false
                )
            )
        }
        if let bad { damage.withLock { $0 = Damage(quarantinedBytes: bad.bytes, quarantineURL: bad.url) } }
    }

    /// Runs `body` holding the cross-process lock exclusively, having first decoded — without
    /// the lock — the snapshot that ``catchUpLocked()`` reloads from when another process
    /// compacted (or on the first open). The snapshot is O(records), too long a hold: under
    /// the lock only the check that the file is still the one decoded, the log's replay and
    /// the install remain. When another compaction replaced the snapshot in between, the lock
    /// is released and the new one decoded, a few times; the last try decodes it under the
    /// lock rather than never finish (``SnapshotDecodes/underLock`` counts those).
    ///
    /// - Complexity: O(snapshot) without the lock when a reload is due; else one `fstat`.
    func withExclusiveCatchingUp<R>(_ body: () throws -> R) throws -> R {
        var attempt = 0
        while true {
            attempt += 1
            var decoded: DecodedSnapshot?
            if log.state(expectedGeneration: state.withLock { $0.generation }) == .replaced {
                decoded = try decodeSnapshot()
                snapshotDecodes.withLock { $0.withoutLock += 1 }
            }
            pendingSnapshot.withLock { $0 = decoded }
            defer { pendingSnapshot.withLock { $0 = nil } }
            var result: R?
            var replacedMeanwhile = false
            try crossProcessLock.withExclusive {
                if let decoded, attempt < Self.reloadAttempts, !log.isSnapshot(pinnedBy: decoded.pin) {
                    replacedMeanwhile = true
                    return
                }
                result = try body()
            }
            // Freed here, without the lock: the records a reload in `body` replaced.
            _ = retiredTable.withLock { table -> RecordTable<Record>? in
                defer { table = nil }
                return table
            }
            if !replacedMeanwhile { return result! }
        }
    }

    /// How many times ``withExclusiveCatchingUp(_:)`` decodes a snapshot without the lock before
    /// it decodes one under it.
    static var reloadAttempts: Int { 4 }

    /// The snapshot read and decoded now, as the table of its records, its file held open
    /// (see ``DecodedSnapshot``). The table's write sequence numbers continue after those in
    /// memory: call it inside ``writing(_:)`` (or before the store is shared), so that no
    /// write takes one meanwhile.
    ///
    /// - Throws: ``StoreError`` `corrupt` (through ``writing(_:)``) when it cannot be decoded
    ///   with this configuration; an I/O error.
    /// - Complexity: O(snapshot).
    func decodeSnapshot() throws -> DecodedSnapshot {
        guard let (bytes, pin) = try log.readSnapshotPinned() else {
            return DecodedSnapshot(nil, pin: -1, fileSystem: log.fileSystem)
        }
        do {
            let snapshot = try Archive.decode(
                RecordSnapshot<Record>.self,
                from: bytes,
                options: configuration.archiveOptions
            )
            var table = RecordTable<Record>(sequencesAfter: state.withLock { $0.lastSequence })
            table.generation = snapshot.generation
            for record in snapshot.records { table.upsert(record) }
            table.snapshotBytes = bytes.count
            return DecodedSnapshot(table, pin: pin, fileSystem: log.fileSystem)
        } catch {
            _ = log.fileSystem.close(pin)
            throw error
        }
    }

    /// What ``reloadFromDisk()`` starts from, under the lock: the table of the snapshot
    /// decoded before the lock was taken when the file is still that one, else of the file
    /// read and decoded now; an empty table when there is no snapshot.
    func tableForReload() throws -> RecordTable<Record> {
        let decoded: DecodedSnapshot
        if let pending = pendingSnapshot.withLock({ $0 }), log.isSnapshot(pinnedBy: pending.pin) {
            decoded = pending
        } else {
            snapshotDecodes.withLock { $0.underLock += 1 }
            decoded = try decodeSnapshot()
        }
        return decoded.table ?? RecordTable(sequencesAfter: state.withLock { $0.lastSequence })
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

    /// How many snapshots this store decoded so far, without the cross-process lock and
    /// under it (tests).
    package var snapshotDecodeCounts: SnapshotDecodes { snapshotDecodes.withLock { $0 } }

    /// Snapshots decoded, by whether the cross-process lock was held.
    package struct SnapshotDecodes: Sendable, Equatable {
        /// Decoded before the lock was taken (``withExclusiveCatchingUp(_:)``).
        package var withoutLock = 0
        /// Decoded under the lock: the snapshot was replaced again between the decode and
        /// the lock, on the last try.
        package var underLock = 0
    }

    /// A snapshot read and decoded without the cross-process lock, its file held open (so its
    /// inode is not handed to another file) until this is released: under the lock,
    /// ``ChangeLog/isSnapshot(pinnedBy:)`` tells whether the file is still the one decoded.
    final class DecodedSnapshot: Sendable {
        /// The snapshot's records, generation and size; `nil` when there was none.
        let table: RecordTable<Record>?
        /// The descriptor the snapshot was read from (-1 when there was none).
        let pin: Int32
        private let fileSystem: FileSystem

        init(_ table: RecordTable<Record>?, pin: Int32, fileSystem: FileSystem) {
            self.table = table
            self.pin = pin
            self.fileSystem = fileSystem
        }

        deinit {
            if pin >= 0 { _ = fileSystem.close(pin) }
        }
    }
}
