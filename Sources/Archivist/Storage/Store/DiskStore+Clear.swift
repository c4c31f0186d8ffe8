extension DiskStore {
    /// Clears `folders` in O(1): each is renamed into `.archivist/trash` and dropped from the
    /// index, and the trash is deleted in the background.
    ///
    /// Writes in flight finish first (they hold the clear gate shared); reads are not waited
    /// for. A folder that does not exist counts as already clear.
    ///
    /// - Parameter completion: Called on a background queue with the logical bytes freed, once
    ///   the trash holding them has been deleted.
    /// - Returns: The logical bytes freed (now gone from every size).
    /// - Throws: ``StorageError`` when a rename fails; folders renamed before it stay cleared.
    /// - Complexity: One `rename` per folder, whatever it holds; deletion runs later on a
    ///   utility queue.
    @discardableResult
    package func clear(
        _ folders: [FolderPath],
        origin: UInt = 0,
        completion: (@Sendable (Int64) -> Void)? = nil
    ) throws -> Int64 {
        let freed = Locked<Int64>(0)
        defer {
            let total = freed.withLock { $0 }
            if let completion {
                trash.empty { completion(total) }
            } else {
                trash.empty(completion: nil)
            }
        }
        try clearGate.withExclusive {
            for folder in folders {
                let source = rootPath + "/" + folder.relativePath
                let (_, gone, _) = try index.mutate(origin: origin) {
                    try trash.moveToTrash(source, cleared: true)
                } change: { _ in
                    [.clear(folder)]
                }
                freed.withLock { $0 += gone.logicalBytes }
            }
        }
        return freed.withLock { $0 }
    }

    /// Deletes everything in the trash on the trash queue, then calls `completion`
    /// (``Trash/empty(completion:)``).
    func emptyTrash(completion: (@Sendable () -> Void)?) {
        trash.empty(completion: completion)
    }

    /// The error of the last trash deletion that failed and that no caller was told of yet,
    /// now told (``Trash/takeUnreportedFailure()``).
    func takeUnreportedTrashFailure() -> StorageError? {
        trash.takeUnreportedFailure()
    }

    /// Waits until every deletion and sweep queued so far has finished.
    ///
    /// - Complexity: Blocks the caller until the trash queue drains.
    package func waitForTrash() {
        trash.waitUntilEmptied()
    }
}
