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
    /// ``AtomicFile/replace(_:toPath:durability:createFolders:fileSystem:)`` for an entry file;
    /// a folder in the way (the rename fails with `EISDIR`) is moved into the trash and the
    /// write tried once more.
    ///
    /// - Returns: The new file's sizes, the folder sync's failure if any, and whether a folder
    ///   was cleared out of the way (its contents must leave the index).
    /// - Throws: ``CacheError`` as `AtomicFile.replace`; the old entry is untouched.
    /// - Complexity: Blocking file I/O, O(total bytes).
    func replaceEntry(
        _ chunks: [UnsafeRawBufferPointer], at path: String, durability: Durability
    ) throws -> (sizes: AtomicFile.Sizes, folderSyncFailure: CacheError?, clearedFolder: Bool) {
        do {
            let (sizes, failure) = try AtomicFile.replace(chunks, toPath: path, durability: durability, fileSystem: fileSystem)
            return (sizes, failure, false)
        } catch let error as CacheError where error.errno == EISDIR {
            guard try removeItem(at: path) else { throw error }
            let (sizes, failure) = try AtomicFile.replace(chunks, toPath: path, durability: durability, fileSystem: fileSystem)
            return (sizes, failure, true)
        }
    }
}
