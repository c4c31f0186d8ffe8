import Foundation

extension RecordStore {
    /// Inserts a record whose identifier is new.
    ///
    /// - Throws: ``StoreError`` with `alreadyExists`, or an I/O code (`noSpace`,
    ///   `permissionDenied`, `ioFailed`); on error nothing changed.
    /// - Complexity: Blocking file I/O: one log append, independent of the store's size.
    public func insert(_ record: Record) throws {
        try commit {
            guard self.record(id: record.id) == nil else {
                throw StoreError(.alreadyExists, "a record with id \(record.id) exists", fileURL: directory)
            }
            return (RecordBatch(upserting: [record]), ())
        }
    }

    /// Inserts a record, or replaces the one with the same identifier (find-or-create).
    ///
    /// - Throws: ``StoreError`` with an I/O code; on error nothing changed.
    /// - Complexity: Blocking file I/O: one log append, independent of the store's size.
    public func upsert(_ record: Record) throws {
        try commit(RecordBatch(upserting: [record]))
    }

    /// Upserts every record as one all-or-nothing batch.
    ///
    /// - Throws: ``StoreError``; on error none of the records was written.
    /// - Complexity: Blocking file I/O: one log append of all the records.
    public func upsert<S: Sequence>(contentsOf records: S) throws where S.Element == Record {
        try commit(RecordBatch(upserting: Array(records)))
    }

    /// Changes one record in place and saves it.
    ///
    /// `body` runs while other writers wait, so read-modify-write is atomic; it may read or
    /// write the store again. If it changes the identifier, the record moves to the new one.
    ///
    /// ```swift
    /// try letters.update(id: 42) { $0.isRead = true }
    /// ```
    ///
    /// - Returns: The record as saved.
    /// - Throws: ``StoreError`` with `notFound`, the error `body` throws (unchanged), or an I/O code; on
    ///   error nothing changed.
    /// - Complexity: Blocking file I/O: one log append, independent of the store's size.
    @discardableResult
    public func update(id: Record.ID, _ body: (inout Record) throws -> Void) throws -> Record {
        try writing {
            // The body runs without the cross-process lock (never held across a caller's
            // closure), on the record as this process last saw it. The catch-up before the
            // append tells whether another process changed that record meanwhile; then the
            // body runs again on the new value, and its outcome — saved or thrown — is always
            // decided on the latest one.
            while true {
                guard var record = record(id: id) else {
                    let stillMissing = try withExclusiveCatchingUp {
                        try catchUpLocked()
                        return self.record(id: id) == nil
                    }
                    if stillMissing { throw StoreError(.notFound, "no record with id \(id)", fileURL: directory) }
                    continue
                }
                let committed = try watching(id) { isTouched in
                    var bodyError: (any Error)?
                    do {
                        try body(&record)
                    } catch {
                        bodyError = error
                    }
                    return try withExclusiveCatchingUp { () throws -> Bool in
                        try catchUpLocked()
                        guard !isTouched() else { return false }
                        if let bodyError { throw CallerError(error: bodyError) }
                        var batch = RecordBatch(upserting: [record])
                        if record.id != id { batch.delete(id: id) }
                        try appendLocked(batch)
                        return true
                    }
                }
                if committed {
                    compactIfDue()
                    return record
                }
            }
        }
    }

    /// Deletes the record with identifier `id`.
    ///
    /// - Returns: Whether there was such a record.
    /// - Throws: ``StoreError`` with an I/O code; on error nothing changed.
    @discardableResult
    public func delete(id: Record.ID) throws -> Bool {
        try commit {
            guard self.record(id: id) != nil else { return (RecordBatch(), false) }
            var batch = RecordBatch<Record>()
            batch.delete(id: id)
            return (batch, true)
        }
    }

    /// Applies a batch of upserts and deletes, all or nothing — also across a crash: after a
    /// restart the store holds the batch entirely or not at all.
    ///
    /// - Throws: ``StoreError``: `notRepresentable` when the batch cannot be archived or
    ///   archives to more than one change-log entry holds (4 GiB), else an I/O code; on error
    ///   nothing changed.
    /// - Complexity: Blocking file I/O: one log append.
    public func save(_ batch: RecordBatch<Record>) throws {
        try commit(batch)
    }

    /// Applies a batch in the background and calls `completion` there (seed 002's
    /// `saveWithBlock:completion:`). Batches saved this way apply in the order they were given.
    ///
    /// `completion` may use the store again.
    public func save(_ batch: RecordBatch<Record>, completion: @escaping @Sendable (Result<Void, StoreError>) -> Void) {
        queue.async {
            do {
                try self.save(batch)
                completion(.success(()))
            } catch {
                completion(.failure(StoreError(wrapping: error, fileURL: self.directory)))
            }
        }
    }

    /// Applies a batch off the caller's executor.
    ///
    /// - Throws: ``StoreError``; on error nothing changed.
    public func save(_ batch: RecordBatch<Record>) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            save(batch) { continuation.resume(with: $0.mapError { $0 as any Error }) }
        }
    }

    /// Deletes every record.
    ///
    /// - Throws: ``StoreError`` with an I/O code; on error nothing changed, unless only the
    ///   folder sync after the empty snapshot's rename failed (the message says it is in place).
    /// - Complexity: Blocking file I/O: writes an empty snapshot and resets the log.
    public func removeAll() throws {
        try writing {
            try withExclusiveCatchingUp {
                try catchUpLocked()
                try compactLocked(removingAll: true)
            }
        }
    }

    /// Folds the change log into a new snapshot now (it also happens by itself once the log
    /// outgrows the snapshot and ``Configuration/compactionThreshold``).
    ///
    /// The snapshot is written and synced before the cross-process lock is taken; under the
    /// lock it is renamed into place only if no process committed anything meanwhile, else it
    /// is written again. Nothing of size O(n) runs under the lock (iOS terminates a suspended
    /// app that holds a file lock in a shared container, `0xdead10cc`): when other processes
    /// commit during each of four tries, the log is left as it is — whole and
    /// correct — and the next commit that finds it large tries again.
    ///
    /// - Throws: ``StoreError`` with an I/O code; the store stays usable and consistent.
    /// - Complexity: Blocking file I/O, O(n), outside the cross-process lock.
    public func compact() throws {
        try writing {
            for _ in 0..<Self.compactionAttempts where try compactUnlocked() { return }
        }
    }

    /// How many times ``compact()`` writes a snapshot before it leaves the log to the next
    /// commit, when other processes commit while each is written.
    static var compactionAttempts: Int { 4 }

    /// Reads the changes other processes committed since this one last wrote or refreshed.
    ///
    /// Reads (``record(id:)``, ``all()``, queries) answer from memory without touching the
    /// disk; every write catches up by itself first, so upsert-by-id and
    /// ``insert(_:)``'s duplicate check hold across processes. Call `refresh()` to see
    /// another process's writes before reading.
    ///
    /// - Throws: ``StoreError`` with an I/O code, or `corrupt` when a new snapshot or an
    ///   intact new log entry cannot be decoded with this configuration (the log is left as it
    ///   is, and every write throws the same until a store that reads it catches up); a torn
    ///   tail left by a writer that died is set aside and reported in ``recoveredDamage``.
    /// - Complexity: One `fstat` when nothing changed; O(new entries) after appends; O(n)
    ///   after another process compacted.
    ///
    /// Nothing new costs one `fstat` and no lock. Other processes' new entries are read
    /// holding the cross-process lock shared (readers do not wait for each other); a reload
    /// after a compaction decodes the snapshot without the lock, and holds it exclusively
    /// only to replay the log and install, as does setting aside a damaged tail.
    public func refresh() throws {
        try writing {
            switch log.state(expectedGeneration: state.withLock { $0.generation }) {
            case .current:
                return
            case .grown:
                do {
                    return try crossProcessLock.withShared { try catchUpShared() }
                } catch is ChangeLog.NeedsExclusiveLock {
                    // Compacted meanwhile, or a damaged tail to set aside: below.
                }
            case .replaced:
                break
            }
            try withExclusiveCatchingUp { try catchUpLocked() }
        }
    }

    // MARK: - Internals

    /// Runs `body` as the only writer (re-entrant on the same thread), mapping errors; then,
    /// the cross-process lock released, signals the change `body` committed, if any.
    func writing<R>(_ body: () throws -> R) throws -> R {
        writeLock.lock()
        defer { writeLock.unlock() }
        defer {
            if signalDue.withLock({ due in
                defer { due = false }
                return due
            }) {
                changeSignal.post()
            }
        }
        defer { log.closeReplacedLogs() }  // the lock released: freeing a replaced log's blocks holds nothing
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch let error as CallerError {
            throw error.error
        } catch {
            throw StoreError(wrapping: error, fileURL: directory)
        }
    }

    /// Commits a batch of this process's: under the cross-process lock, catches up with
    /// other processes, appends, and makes it visible; then compacts, if due, without it.
    private func commit(_ batch: RecordBatch<Record>) throws {
        guard !batch.isEmpty else { return }
        try commit { (batch, ()) }
    }

    /// Under the cross-process lock, catches up with other processes, asks `prepare` (this
    /// file's own code, never a caller's closure) for the batch from the current records,
    /// and appends it; `prepare` may throw to refuse.
    private func commit<R>(_ prepare: () throws -> (RecordBatch<Record>, R)) throws -> R {
        try writing {
            let result = try withExclusiveCatchingUp {
                try catchUpLocked()
                let (batch, result) = try prepare()
                try appendLocked(batch)
                return result
            }
            compactIfDue()
            return result
        }
    }

    /// Appends the batch to the log, then makes it visible. Call inside ``writing(_:)`` and the
    /// cross-process lock, caught up.
    ///
    /// The append's sync (``Configuration/durability``) runs under the lock: moved after it, a
    /// failed sync could no longer cut the entry back (other processes may have appended
    /// behind it), and a batch that throws must leave nothing changed. It syncs one batch's
    /// bytes, whatever the store holds.
    private func appendLocked(_ batch: RecordBatch<Record>) throws {
        guard !batch.isEmpty else { return }
        let entry: Data
        do {
            entry = try Archive.encode(batch, options: configuration.archiveOptions)
        } catch {
            throw StoreError(
                .notRepresentable,
                "cannot archive the batch: \(error)",
                fileURL: directory,
                underlyingError: error
            )
        }
        try log.append(entry)
        signalDue.withLock { $0 = true }
        state.withLock { $0.apply(upserts: batch.upserts, deletes: batch.deletes) }
        notify(
            Change(
                upserted: batch.upserts.map(\.id),
                deleted: batch.deletes,
                isFromAnotherProcess: false,
                isReload: false
            )
        )
    }

    /// Compacts when the log has grown enough, after a commit, outside the cross-process lock
    /// (``compactUnlocked()``). Call inside ``writing(_:)``.
    ///
    /// The batch is committed: a failed compaction must not report it as failed. The log stays
    /// as it is (or is reset before the next append) and the next commit tries again — as it
    /// does when another process committed while the snapshot was written.
    private func compactIfDue() {
        let snapshotBytes = state.withLock { $0.snapshotBytes }
        guard log.size > configuration.compactionThreshold && log.size > snapshotBytes else { return }
        _ = try? compactUnlocked()
    }

    /// A compaction: writes the snapshot of generation + 1 (every record in memory) to a
    /// synced temporary without the cross-process lock, so its length, which grows with the
    /// records, holds no lock; then, under the lock and caught up, renames it into place and
    /// resets the log (``compactLocked(removingAll:)`` says why that order) — only if the
    /// log is still the one the snapshot folds in: same generation, nothing appended.
    /// Call inside ``writing(_:)``.
    ///
    /// - Returns: Whether the snapshot is in place; `false` when another process committed
    ///   meanwhile (the temporary is deleted).
    /// - Throws: As ``compactLocked(removingAll:)``.
    private func compactUnlocked() throws -> Bool {
        // Caught up first when another process compacted: its snapshot decoded without the lock.
        if log.state(expectedGeneration: state.withLock { $0.generation }) == .replaced {
            try withExclusiveCatchingUp { try catchUpLocked() }
        }
        let (records, basis) = state.withLock { ($0.inWriteOrder(), $0.generation) }
        let basisEnd = log.end
        let bytes = try Archive.encode(
            RecordSnapshot<Record>(generation: basis + 1, records: records),
            options: configuration.archiveOptions
        )
        let prepared = try bytes.withUnsafeBytes { raw in
            try AtomicFile.prepare(
                [raw],
                toPath: log.snapshotPath,
                durability: log.durability == .none ? .none : .fileAndFolder,
                fileSystem: log.fileSystem
            )
        }
        var renamed = false
        defer { if !renamed { prepared.discard(log.fileSystem) } }
        return try crossProcessLock.withExclusive {
            // Another process compacted meanwhile: its snapshot is decoded without the lock on
            // the next try (catching up here would decode it under the lock).
            guard log.state(expectedGeneration: basis) != .replaced else { return false }
            try catchUpLocked()
            guard state.withLock({ $0.generation }) == basis && log.end == basisEnd else { return false }
            renamed = try prepared.rename(log.fileSystem)
            guard renamed else { return false }
            try installSnapshotLocked(
                generation: basis + 1,
                bytes: bytes.count,
                removingAll: false,
                folderSyncFailure: prepared.syncFolderIfAsked(log.fileSystem)
            )
            return true
        }
    }

    /// Writes a snapshot of generation + 1 atomically (of no records when `removingAll`),
    /// then resets the log to that generation. A crash between the two leaves a log of the old
    /// generation, which the next open recognizes as already folded in; a failed reset is
    /// retried before the next append. Call inside ``writing(_:)`` and the cross-process lock,
    /// caught up, so the snapshot holds every process's committed changes.
    ///
    /// - Throws: Before the snapshot's rename, with nothing changed; after it, only a failed
    ///   folder sync, whose message says the snapshot is in place.
    private func compactLocked(removingAll: Bool = false) throws {
        let (records, generation) = state.withLock { (removingAll ? [] : $0.inWriteOrder(), $0.generation + 1) }
        let bytes = try Archive.encode(
            RecordSnapshot<Record>(generation: generation, records: records),
            options: configuration.archiveOptions
        )
        let (_, folderSyncFailure) = try bytes.withUnsafeBytes { raw in
            try AtomicFile.replace(
                [raw],
                toPath: log.snapshotPath,
                durability: log.durability == .none ? .none : .fileAndFolder,
                fileSystem: log.fileSystem
            )
        }
        try installSnapshotLocked(
            generation: generation,
            bytes: bytes.count,
            removingAll: removingAll,
            folderSyncFailure: folderSyncFailure
        )
    }

    /// Once a snapshot of `generation` (`bytes` long) is in place, under the cross-process
    /// lock: voids the old log's entries, records the generation, and resets the log.
    ///
    /// - Throws: `folderSyncFailure`, the failed sync of the snapshot's folder, whose message
    ///   says the snapshot is in place.
    private func installSnapshotLocked(
        generation: UInt64,
        bytes: Int,
        removingAll: Bool,
        folderSyncFailure: StorageError?
    ) throws {
        // The snapshot is in place: from here on the old log's entries are void.
        log.requireReset(generation: generation)
        signalDue.withLock { $0 = true }
        state.withLock {
            if removingAll { $0.removeAll() }
            $0.generation = generation
            $0.snapshotBytes = bytes
        }
        if removingAll { notify(Change(upserted: [], deleted: [], isFromAnotherProcess: false, isReload: true)) }
        try? log.reset(generation: generation)  // retried before the next append if it fails
        if let folderSyncFailure { throw folderSyncFailure }
    }
}

/// An error thrown by a caller's closure (the body of ``RecordStore/update(id:_:)``), carried
/// through ``RecordStore/writing(_:)`` so that it reaches the caller unchanged.
struct CallerError: Error {
    var error: any Error
}
