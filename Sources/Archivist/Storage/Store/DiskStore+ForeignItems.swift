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
    /// into the trash and deleted in the background. Through the root's descriptor, where
    /// a miss is final while the folder the store opened is still its own (renamed away or
    /// not); in a removed root, the path decides (see `DiskStore+RootRelative.swift`).
    ///
    /// - Returns: What was there: nothing, a file (or link, or FIFO), or a folder — whose
    ///   contents the index must drop as well (``DiskKey/shadowingFolder``).
    /// - Throws: ``StorageError`` when it exists but cannot be removed.
    /// - Complexity: Blocking file I/O: one `unlink`, plus an `lstat` and a `rename` for a
    ///   folder; on a miss below the root, an `fstat` more.
    func removeItem(at path: String) throws -> RemovedItem {
        var removed = RemovedItem.nothing
        _ = try belowRootOrByPath(root, internalPath: internalPath) { root in
            removed = try removeItem(at: path, below: root)
            return removed != .nothing
        }
        return removed
    }

    /// ``removeItem(at:)`` from `root`, or by the whole path without one.
    private func removeItem(at path: String, below root: AtomicFile.Root?) throws -> RemovedItem {
        if fileSystem.unlink(path, below: root) == 0 { return .file }
        let code = errno
        if code == ENOENT || code == ENOTDIR { return .nothing }
        // Linux says EISDIR for a folder, Apple platforms EPERM.
        var status = stat()
        if code == EISDIR || code == EPERM, lstat(path, below: root, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            try trash.moveToTrash(path)
            trash.empty(completion: nil)
            return .folder
        }
        throw StorageError.posix("unlink", path: path, errno: code)
    }

    /// What ``removeItem(at:)`` removed.
    enum RemovedItem {
        /// Nothing was at the path.
        case nothing
        /// A file, link or FIFO: unlinked.
        case file
        /// A folder: moved into the trash, with whatever a scan counted inside it.
        case folder
    }

    /// The changes that removing the entry at `key` makes to the index: none when nothing was
    /// there, its record for a file, and for a folder also whatever was counted inside it.
    /// (Journaling the folder's clear only for a folder keeps the common removal one record.)
    func removalChanges(_ key: DiskKey, _ removed: RemovedItem) -> [Change] {
        switch removed {
        case .nothing: []
        case .file: [.remove(key)]
        case .folder: [.remove(key), .clear(key.shadowingFolder)]
        }
    }
}

extension DiskStore {
    /// What stood between an entry's temporary and the entry's path when it was renamed
    /// (``renameEntry(_:)``): the writer clears it out of the lock, then renames the same
    /// temporary again.
    enum RenameObstacle {
        /// A folder of the entry's path is missing: never made, or cleared since.
        case missingFolder
        /// A file where one of the entry's folders belongs.
        case fileInPlaceOfFolder
    }

    /// Renames a prepared entry file into place (under the store's lock); a folder in the way
    /// (the rename fails with `EISDIR`) is moved into the trash and the rename tried once more.
    /// The temporary is deleted when this throws or reports a failure; it stays when the
    /// entry's folders are in the way.
    ///
    /// - Returns: Whether the entry was renamed (`false`: the temporary was gone, or an
    ///   `obstacle` stood in the way, or `failure` says why), whether a folder was cleared
    ///   out of the way (its contents must leave the index, even when the rename then failed:
    ///   the disk changed), the error of a rename that failed after that folder was gone,
    ///   for the caller to throw once the clear is journaled, and what kept the temporary
    ///   from the entry's path — nothing changed then.
    /// - Throws: ``StorageError`` as ``AtomicFile/Prepared/rename(_:)`` when nothing changed: the old
    ///   entry is untouched.
    /// - Complexity: One `rename`; an `lstat` and a `rename` more when a folder is in the way.
    func renameEntry(
        _ prepared: AtomicFile.Prepared
    ) throws
        -> (renamed: Bool, clearedFolder: Bool, failure: (any Error)?, obstacle: RenameObstacle?)
    {
        do {
            return (try prepared.rename(fileSystem), false, nil, nil)
        } catch let blocked as StorageError where blocked.errno == ENOENT || blocked.errno == ENOTDIR {
            // The temporary, in the store's temporaries folder, is still there (a missing one is
            // reported as `false`): a folder of the entry's path is missing, or is a file.
            return (false, false, nil, blocked.errno == ENOENT ? .missingFolder : .fileInPlaceOfFolder)
        } catch let inTheWay as StorageError where inTheWay.errno == EISDIR {
            let cleared: Bool
            do {
                cleared = try removeItem(at: prepared.path) != .nothing
            } catch {
                prepared.discard(fileSystem)
                throw error
            }
            guard cleared else {
                prepared.discard(fileSystem)
                throw inTheWay
            }
            do {
                return (try prepared.rename(fileSystem), true, nil, nil)
            } catch {
                prepared.discard(fileSystem)
                return (false, true, error, nil)
            }
        } catch {
            prepared.discard(fileSystem)
            throw error
        }
    }

    /// Unlinks the first of `folder`'s components, from the root down, that exists but is not
    /// a folder (under the store's lock: the write whose temporary it kept out calls it).
    ///
    /// - Returns: `nil` when there was none; otherwise the key a scan would have counted the
    ///   file as (`nil` inside when it would not have counted it).
    func removeFileInPlaceOfFolder(_ folder: FolderPath) throws -> DiskKey?? {
        let below = workingRoot
        var path = rootPath
        for (depth, component) in folder.components.enumerated() {
            path += "/" + component
            var status = stat()
            guard lstat(path, below: below, &status) == 0 else { return nil }
            if status.st_mode & S_IFMT == S_IFDIR { continue }
            guard try removeItem(at: path) != .nothing else { return nil }
            let parent = Array(folder.components.prefix(depth))
            guard !parent.isEmpty, let name = EntryName(fileName: component[...]) else { return .some(nil) }
            return DiskKey(folder: FolderPath(parent), name: name)
        }
        return nil
    }
}
