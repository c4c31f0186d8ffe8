import Foundation

extension PlistStore {
    /// Stores `value` for `key` in the plist called `name`, keeping the file's other keys.
    ///
    /// The file is replaced atomically, under that file's lock, only if no other writer changed
    /// it since it was read (else the change is applied again to the new root; see the type's
    /// discussion), so concurrent writers of different keys all land, whether they
    /// are threads of this process or other processes. A missing file is first seeded from its
    /// default, if it has one. Writing a value equal to the stored one does not touch the disk.
    ///
    /// ```swift
    /// try store.set("Reading", forKey: "name", in: "taskData")
    /// try store.set(["hour": 7, "minute": 30], forKey: "alert", in: "taskData")
    /// ```
    ///
    /// - Parameters:
    ///   - value: the value; nested arrays and dictionaries are stored as such.
    ///   - key: the key in the root dictionary; any string, including the empty one.
    ///   - name: the plist's name.
    /// - Throws: ``StoreError``: `corrupt` when the existing file cannot be read (it is left
    ///   untouched), `notRepresentable` when the root holds another spelling of `key` (equal
    ///   as a `String`, different in bytes; see the type's discussion), `invalidName`,
    ///   `permissionDenied`, `noSpace` or `ioFailed`.
    /// - Complexity: O(n) in the file's size; blocking file I/O with an `fsync`.
    public func set(_ value: PlistValue, forKey key: String, in name: String) throws {
        let url = try fileURL(for: name)
        try update(name) { root in
            try Self.checkNoLookalike(of: key, in: root, url: url)
            root[key] = value
        }
    }

    /// Stores a ``PlistConvertible`` value for `key` in the plist called `name`, keeping the
    /// file's other keys.
    ///
    /// ```swift
    /// try store.set(Date(), forKey: "alertTime", in: "taskData")
    /// try store.set([25, 5, 15], forKey: "durations", in: "taskData")
    /// ```
    ///
    /// - Throws: as ``set(_:forKey:in:)-(PlistValue,_,_)``.
    /// - Complexity: O(n) in the file's size; blocking file I/O with an `fsync`.
    public func set<Value: PlistConvertible>(_ value: Value, forKey key: String, in name: String) throws {
        try set(value.plistValue, forKey: key, in: name)
    }

    /// Removes `key` from the plist called `name`.
    ///
    /// ```swift
    /// try store.removeValue(forKey: "task-42", in: "taskData")
    /// ```
    ///
    /// - Returns: the removed value, or `nil` when the key was absent (the file is then left
    ///   as it is). Another spelling of `key` (equal as a `String`, different in bytes) is
    ///   another key, and stays.
    /// - Throws: as ``set(_:forKey:in:)-(PlistValue,_,_)``.
    /// - Complexity: O(n) in the file's size; blocking file I/O with an `fsync`.
    @discardableResult
    public func removeValue(forKey key: String, in name: String) throws -> PlistValue? {
        try update(name) { root in
            guard Self.entry(key, in: root) != nil else { return nil }
            return root.removeValue(forKey: key)
        }
    }

    /// Replaces the whole root dictionary of the plist called `name`, as seed 000's
    /// `saveTaskData:` does.
    ///
    /// ```swift
    /// try store.write(["t1": task1, "t2": task2], to: "taskData")
    /// ```
    ///
    /// - Throws: ``StoreError``: `invalidName`, `permissionDenied`, `noSpace` or `ioFailed`.
    /// - Complexity: O(n) in the size of `root`; blocking file I/O with an `fsync`.
    public func write(_ root: [String: PlistValue], to name: String) throws {
        _ = try replace(try fileURL(for: name), with: root)
    }

    /// Reads the root dictionary of the plist called `name`, lets `body` change it, and writes
    /// it back: the way to do a read-modify-write (add, delete, update a record) that no
    /// concurrent writer, in this process or another, can interleave with.
    ///
    /// It is optimistic, like ``RecordStore/update(id:_:)``: `body` runs without the file's
    /// lock (which is never held across a caller's closure), then the lock is taken to write;
    /// if another writer changed the file meanwhile, `body` runs again on the new root, so
    /// its outcome — written, unchanged or thrown — is always decided on the latest one.
    /// `body` may therefore run more than once: keep it free of side effects beyond the
    /// dictionary, and never write the same plist from it (each such write makes it start
    /// over). After 8 such lost races in a row `body` runs once more with the lock held, so
    /// the call always ends (a write `body` made to the same plist is then overwritten). The
    /// file is written only when `body` changed the dictionary. If `body` throws, nothing is
    /// written.
    ///
    /// ```swift
    /// let count = try store.update("taskData") { tasks in
    ///     tasks["t3"] = ["name": "Writing", "diligenceTime": 50]
    ///     return tasks.count
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: the plist's name.
    ///   - body: changes the root dictionary in place and returns a result.
    /// - Returns: what `body` returned.
    /// - Throws: what `body` throws, or as ``set(_:forKey:in:)-(PlistValue,_,_)``.
    /// - Complexity: O(n) in the file's size plus the cost of `body`; blocking file I/O with
    ///   an `fsync` when the root changed.
    @discardableResult
    public func update<Result>(
        _ name: String,
        _ body: (inout [String: PlistValue]) throws -> Result
    ) throws -> Result {
        try modify(name, body).result
    }

    /// As ``update(_:_:)``, also returning the root as written (or as read, when unchanged).
    ///
    /// The new version is written and synced before the file's lock is taken
    /// (``replace(_:with:deciding:)``); under the lock it is renamed into place only if the
    /// file is still the version `body` ran on.
    ///
    /// `durability` says how far each version written is synced (``Durability``).
    func modify<Result>(
        _ name: String,
        durability: Durability = .fileAndFolder,
        _ body: (inout [String: PlistValue]) throws -> Result
    ) throws -> (result: Result, snapshot: PlistSnapshot) {
        let url = try fileURL(for: name)
        for _ in 0..<Self.optimisticAttempts {
            let old = try snapshot(of: name)
            var root = old.root
            let outcome: Swift.Result<Result, any Error>
            do {
                outcome = .success(try body(&root))
            } catch {
                outcome = .failure(error)
            }
            // A stamp never comes back (see `FileStamp`): the file is the version `body` ran on
            // if it has the same stamp — or, when `body` ran on no file, if there is still none.
            func isUnchanged(_ stamp: FileStamp?) -> Bool {
                stamp != nil ? stamp == old.stamp : old.stamp == nil && old.root.isEmpty
            }
            if case .success(let result) = outcome, root != old.root {
                let (replacement, written) = try replace(url, with: root, durability: durability) {
                    isUnchanged($0) ? .write : .retry
                }
                if replacement == .write { return (result, written) }
                continue  // another writer came first: run `body` again
            }
            // Nothing to write (or `body` threw): decided on the version `body` saw, if it is
            // still the file's.
            if try PlistFileLock.withExclusive(forPlistAt: url, { isUnchanged(try FileStamp.of(url)) }) {
                return (try outcome.get(), old)
            }
        }
        // Lost the race every time (a busy file, or `body` writing this plist itself): run
        // `body` once under the lock, so the call always ends. The only write whose syncs run
        // under the lock: one file's, after eight lost races in a row.
        return try PlistFileLock.withExclusive(forPlistAt: url) { () throws -> (Result, PlistSnapshot) in
            let current = try loadOrSeed(name, at: url)
            var root = current.root
            let result = try body(&root)
            guard root != current.root else { return (result, current) }
            return (
                result,
                try write(
                    try encode(root, for: url),
                    of: root,
                    to: url,
                    replacing: current.stamp,
                    durability: durability
                )
            )
        }
    }

    /// How many times ``update(_:_:)`` runs its closure without the lock, each time finding that
    /// another writer changed the file meanwhile, before it runs the closure under the lock.
    static var optimisticAttempts: Int { 8 }

    /// Deletes the file of the plist called `name`; the next read seeds it again from its
    /// default, if it has one. Deleting a missing file does nothing.
    ///
    /// This is also the way out of a ``StoreError/Code/corrupt`` file. The hidden lock file
    /// beside it stays: another process may hold it open.
    ///
    /// ```swift
    /// try store.removeFile(named: "taskData")
    /// ```
    ///
    /// - Throws: ``StoreError``: `invalidName`, `permissionDenied` or `ioFailed`.
    /// - Complexity: O(1); blocking file I/O.
    public func removeFile(named name: String) throws {
        let url = try fileURL(for: name)
        guard try FileStamp.of(url) != nil else { return forget(url) }
        defer { Self.signalChange(of: url) }
        try PlistFileLock.withExclusive(forPlistAt: url) {
            defer { forget(url) }
            do {
                try FileManager.default.removeItem(at: url)
            } catch CocoaError.fileNoSuchFile {
                return
            } catch {
                if !FileManager.default.fileExists(atPath: url.path) { return }
                throw StoreError(.ioFailed, "cannot delete the file", fileURL: url, underlyingError: error)
            }
        }
    }
}
