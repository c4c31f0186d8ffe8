#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Things at an entry's path that are not entry files — a folder, a FIFO, a symbolic link,
/// put there by another program or a restore gone wrong. A read reports them as corrupt
/// entries; removing, discarding and overwriting an entry clear them out of the way, so no
/// key can be left unreadable and unwritable for good.
extension DiskStore {
    /// Removes whatever is at `path`: a file, link or FIFO is unlinked; a folder is renamed
    /// into the trash and deleted in the background.
    ///
    /// - Returns: Whether something was there.
    /// - Throws: ``CacheError`` when it exists but cannot be removed.
    /// - Complexity: Blocking file I/O: one `unlink`, plus an `lstat` and a `rename` for a folder.
    func removeItem(at path: String) throws -> Bool {
        if fileSystem.unlink(path) == 0 { return true }
        let code = errno
        if code == ENOENT || code == ENOTDIR { return false }
        // Linux says EISDIR for a folder, Apple platforms EPERM.
        var status = stat()
        if code == EISDIR || code == EPERM, lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            try moveToTrash(path)
            emptyTrash(completion: nil)
            return true
        }
        throw CacheError.posix("unlink", path: path, errno: code)
    }

    /// The folder a scan would have taken a folder at `key`'s path for, so that whatever it
    /// counted inside can be dropped from the index together with the folder.
    func folderShadowing(_ key: DiskKey) -> FolderPath {
        FolderPath(key.folder.components + [key.name.fileName])
    }
}

extension DiskStore {
    /// What ``replaceEntry(_:at:key:durability:)`` had to clear out of the way.
    enum ClearedObstacle {
        /// A folder at the entry's path (moved into the trash).
        case folderAtEntry
        /// A file where one of the entry's folders belongs (unlinked); the key a scan would
        /// have counted it as, if any.
        case fileAtFolder(DiskKey?)
    }

    /// ``AtomicFile/replace(_:toPath:durability:createFolders:fileSystem:)`` for an entry file;
    /// a folder in the way (the rename fails with `EISDIR`), or a file where one of the
    /// entry's folders belongs (`ENOTDIR`), is cleared away and the write tried once more.
    ///
    /// - Returns: The new file's sizes, the folder sync's failure if any, and what was cleared
    ///   out of the way (pass it to ``forget(_:for:in:)`` with the index update).
    /// - Throws: ``CacheError`` as `AtomicFile.replace`; the old entry is untouched.
    /// - Complexity: Blocking file I/O, O(total bytes).
    func replaceEntry(
        _ chunks: [UnsafeRawBufferPointer], at path: String, key: DiskKey, durability: Durability
    ) throws -> (sizes: AtomicFile.Sizes, folderSyncFailure: CacheError?, cleared: ClearedObstacle?) {
        let cleared: ClearedObstacle
        do {
            let (sizes, failure) = try AtomicFile.replace(chunks, toPath: path, durability: durability, fileSystem: fileSystem)
            return (sizes, failure, nil)
        } catch let error as CacheError where error.errno == EISDIR {
            guard try removeItem(at: path) else { throw error }
            cleared = .folderAtEntry
        } catch let error as CacheError where error.errno == ENOTDIR {
            guard let obstacle = try removeFileInPlaceOfFolder(key.folder) else { throw error }
            cleared = .fileAtFolder(obstacle)
        }
        let (sizes, failure) = try AtomicFile.replace(chunks, toPath: path, durability: durability, fileSystem: fileSystem)
        return (sizes, failure, cleared)
    }

    /// Drops from `index` whatever a scan may have counted in what was cleared for `key`.
    func forget(_ cleared: ClearedObstacle, for key: DiskKey, in index: inout SizeIndex) {
        switch cleared {
        case .folderAtEntry: _ = index.detach(folderShadowing(key))
        case .fileAtFolder(let counted?): index.remove(counted)
        case .fileAtFolder(nil): break
        }
    }

    /// Unlinks the first of `folder`'s components, from the root down, that exists but is not
    /// a folder.
    ///
    /// - Returns: `nil` when there was none; otherwise the key a scan would have counted the
    ///   file as (`nil` inside when it would not have counted it).
    private func removeFileInPlaceOfFolder(_ folder: FolderPath) throws -> DiskKey?? {
        var path = rootPath
        for (depth, component) in folder.components.enumerated() {
            path += "/" + component
            var status = stat()
            guard lstat(path, &status) == 0 else { return nil }
            if status.st_mode & S_IFMT == S_IFDIR { continue }
            guard try removeItem(at: path) else { return nil }
            let parent = Array(folder.components.prefix(depth))
            guard !parent.isEmpty, let name = EntryName(fileName: component[...]) else { return .some(nil) }
            return DiskKey(folder: FolderPath(parent), name: name)
        }
        return nil
    }
}
