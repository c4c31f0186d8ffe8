#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
                emptyTrash { completion(total) }
            } else {
                emptyTrash(completion: nil)
            }
        }
        try clearGate.withExclusive {
            for folder in folders {
                let source = rootPath + "/" + folder.relativePath
                let (_, gone, _) = try mutate(origin: origin) {
                    try moveToTrash(source, cleared: true)
                } change: { _ in
                    [.clear(folder)]
                }
                freed.withLock { $0 += gone.logicalBytes }
            }
        }
        return freed.withLock { $0 }
    }

    /// Renames `source` into the trash; a missing source is already clear. Only a folder
    /// `cleared` (by ``clear(_:origin:completion:)``, not a foreign one out of an entry's way)
    /// is named so that its emptied folders may be kept as spares (``SpareFolders/clearedPrefix``).
    /// Through the root's descriptor, into the trash of the folder the store opened (renamed
    /// away or not); in a removed root, by the path (see `DiskStore+RootRelative.swift`).
    func moveToTrash(_ source: String, cleared: Bool = false) throws {
        let target = trashPath + "/" + SpareFolders.trashItemName(keepable: cleared)
        _ = try belowRootOrByPath { try moveToTrash(source, to: target, below: $0) }
    }

    /// ``moveToTrash(_:cleared:)`` from `root`, or by the whole paths without one.
    ///
    /// - Returns: Whether `source` was moved; `false` when it is missing (or, below a root,
    ///   when the trash cannot be made: the root was removed).
    private func moveToTrash(_ source: String, to target: String, below root: AtomicFile.Root?) throws -> Bool {
        if fileSystem.rename(source, target, below: root) == 0 { return true }
        var code = errno
        if code == ENOENT {
            // Either the source is missing (nothing to clear) or the trash folder was removed.
            do {
                try fileSystem.makeDirectories(trashPath, below: root)
            } catch let error as StorageError where root != nil && error.errno == ENOENT {
                return false
            }
            if fileSystem.rename(source, target, below: root) == 0 { return true }
            code = errno
        }
        if code == ENOTDIR && exists(source, below: root) {
            // The source is there, so what is not a folder is the trash: an internal name
            // something outside put a file at. A folder takes its place, or the clear would
            // report cleared entries that stay readable.
            _ = fileSystem.unlink(trashPath, below: root)
            try fileSystem.makeDirectories(trashPath, below: root)
            if fileSystem.rename(source, target, below: root) == 0 { return true }
            code = errno
            if code == ENOTDIR { throw StorageError.posix("rename into trash", path: source, errno: code) }
        }
        if code == ENOENT || code == ENOTDIR { return false }
        throw StorageError.posix("rename into trash", path: source, errno: code)
    }

    /// Whether `path` names anything (below `root`, or by the whole path without one).
    private func exists(_ path: String, below root: AtomicFile.Root?) -> Bool {
        if let root { return fileSystem.accessAt(root.descriptor, root.relative(path), F_OK) == 0 }
        return access(path, F_OK) == 0
    }

    /// Deletes everything in the trash on the trash queue, then calls `completion`. Large
    /// emptied folders are kept as spares for the next entry folders, up to a small cap (see
    /// ``SpareFolders``).
    ///
    /// Best effort, as the deletion always was: what cannot be deleted (see
    /// ``FolderRemoval/removeContents(of:below:keeping:)``) stays in the trash, which no size counts, and
    /// the next clear or open tries again; so does what is left when the background activity's
    /// time runs out (``BackgroundActivity``; the walk stops between two batches, its lock
    /// released, see ``SpareFolders/emptyTrash(shouldStop:)``).
    ///
    /// - Complexity: Returns at once; the deletion is O(files in the trash) in the background,
    ///   holding the trash lock a bounded batch at a time.
    func emptyTrash(completion: (@Sendable () -> Void)?) {
        let spares = spares
        trashQueue.async {
            spares.emptyTrashInBackground()
            completion?()
        }
    }

    /// The error of the last trash deletion that failed and that no caller was told of yet,
    /// now told (``SpareFolders/takeUnreportedTrashFailure()``).
    func takeUnreportedTrashFailure() -> StorageError? {
        spares.takeUnreportedTrashFailure()
    }

    /// Waits until every deletion queued so far has finished.
    ///
    /// - Complexity: Blocks the caller until the trash queue drains.
    package func waitForTrash() {
        trashQueue.sync {}
    }
}
