import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing an entry file: the temporary written outside the store's lock, in the store's
/// temporaries folder (``temporariesPath``), then renamed over the entry's path under it.
///
/// The temporaries live in one folder of their own rather than beside their entries, so that
/// what a killed writer left is found by listing that folder (when its slot is freed, see
/// ``sweepEntryTemporaries()``), never by a walk of every folder of the store — a million entries
/// in one folder would make that walk as long as a rescan. The rename crosses folders of one
/// file system, as atomic as one within a folder. Since the temporary is not in the entry's
/// folder, a missing folder (never made, or cleared meanwhile) or a file where a folder
/// belongs is found by the rename: the writer makes the folder, or clears the file away,
/// without the lock, and renames the same temporary again.
///
/// An entry folder on another file system than the root (a type folder that is a bind mount,
/// a container volume, a folder moved to another volume) cannot receive a rename from the
/// temporaries folder (`EXDEV`): its writes make their temporaries beside the entry instead,
/// in the entry's folder, with the same atomicity. The process remembers such folders
/// (``crossDeviceFolders``), so only the first write into one meets the `EXDEV`; that write
/// also deletes the abandoned temporaries other writers left there (a rescan does too, as it
/// does for every temporary in an entry folder).
extension DiskStore {
    /// How many times a write renames (or prepares) again after something was in its way.
    static let writeAttempts = 8

    /// The entry folders of this process's stores that are on another file system than their
    /// root's temporaries folder: their writes make the temporary beside the entry.
    private static let crossDeviceFolders = Locked<Set<String>>([])

    /// Whether writes into `folder` make their temporary beside the entry.
    static func writesBesideEntries(in folder: String) -> Bool {
        crossDeviceFolders.withLock { $0.contains(folder) }
    }

    /// Remembers that `folder` is on another file system than the temporaries folder, and,
    /// the first time, deletes the abandoned temporaries left in it.
    private func noteCrossDevice(_ folder: String) {
        guard Self.crossDeviceFolders.withLock({ $0.insert(folder).inserted }) else { return }
        TemporaryName.sweepAbandoned(inFolder: folder, fileSystem: fileSystem)
    }

    /// Writes `chunks` as the entry file at `path` (the file of `key`), journaling the change;
    /// `onCommit` runs after the rename, with the change counter.
    ///
    /// - Throws: ``StorageError`` when the file cannot be written or renamed; the old entry is
    ///   then untouched (but for a folder at its path, cleared out of the way and journaled).
    /// - Complexity: Blocking file I/O on this key only, O(bytes); one `rename` under the lock.
    func writeEntry(
        _ chunks: [UnsafeRawBufferPointer],
        to key: DiskKey,
        path: String,
        writeDate: Date,
        durability: Durability,
        origin: UInt,
        onCommit: (_ change: UInt64) -> Void
    ) throws {
        var attempts = 0
        var clearedFileAtFolder = false
        var clearedTemporariesObstacle = false
        var pending: AtomicFile.Prepared?
        var besideEntry = false
        while true {
            attempts += 1
            let prepared: AtomicFile.Prepared
            if let pending {
                prepared = pending
            } else {
                do {
                    if !besideEntry, let folder = AtomicFile.folder(of: path) {
                        besideEntry = Self.writesBesideEntries(in: folder)
                    }
                    prepared = try AtomicFile.prepare(
                        chunks,
                        toPath: path,
                        durability: durability,
                        spares: trash.spares,
                        temporaries: besideEntry ? nil : temporariesPath,
                        fileSystem: fileSystem,
                        below: root
                    )
                } catch let error as StorageError where error.errno == ENOTDIR && !clearedTemporariesObstacle {
                    // A file where the temporaries folder belongs: ours by its name, counted by
                    // nothing. Cleared away once.
                    clearedTemporariesObstacle = true
                    guard removeNonFolder(at: temporariesPath) else { throw error }
                    continue
                }
            }
            pending = nil
            let renamed: Bool
            let failure: (any Error)?
            let obstacle: RenameObstacle?
            let counter: UInt64
            do {
                ((renamed, _, failure, obstacle), _, counter) = try index.mutate(origin: origin, target: key) {
                    try renameEntry(prepared)
                } change: { (renamed, clearedFolder, _, _) -> [Change] in
                    let set = Change.set(
                        key,
                        Record(
                            logical: prepared.sizes.logical,
                            allocated: prepared.sizes.allocated,
                            lastAccess: writeDate.timeIntervalSince1970
                        )
                    )
                    // A folder cleared out of the way is gone even when the rename failed.
                    // Each case one literal: an empty array appended to regrew on every write.
                    switch (clearedFolder, renamed) {
                    case (false, true): return [set]
                    case (true, true): return [.clear(key.shadowingFolder), set]
                    case (true, false): return [.clear(key.shadowingFolder)]
                    case (false, false): return []
                    }
                }
            } catch let error as StorageError where error.errno == EXDEV && !besideEntry {
                // The entry's folder is on another file system: written again beside the entry.
                prepared.discard(fileSystem)
                besideEntry = true
                noteCrossDevice(prepared.folder)
                continue
            } catch {
                prepared.discard(fileSystem)  // the lock or the catch-up failed before the rename
                throw error
            }
            if let failure { throw failure }
            if let obstacle {
                do {
                    guard attempts < Self.writeAttempts else {
                        throw StorageError.posix(
                            "rename",
                            path: path,
                            errno: obstacle == .missingFolder ? ENOENT : ENOTDIR
                        )
                    }
                    pending =
                        try clear(
                            obstacle,
                            for: prepared,
                            key: key,
                            origin: origin,
                            clearedFileAtFolder: &clearedFileAtFolder
                        ) ? prepared : nil
                } catch {
                    prepared.discard(fileSystem)
                    throw error
                }
                if pending == nil { prepared.discard(fileSystem) }
                continue
            }
            if !renamed {
                // The temporary was gone (swept as another's leftover: rare); written again.
                if attempts < Self.writeAttempts { continue }
                throw StorageError.posix("rename", path: path, errno: ENOENT)
            }
            let folderSyncFailure = prepared.syncFolderIfAsked(fileSystem)
            onCommit(counter)
            if let folderSyncFailure { throw folderSyncFailure }
            return
        }
    }

    /// Clears what kept `prepared` from its entry's path, without the store's lock: makes the
    /// entry's folder, or removes (once, journaled) a file where one of its folders belongs.
    ///
    /// - Returns: Whether to rename the same temporary again; `false` when it must be written
    ///   again (the root it was made below was removed: the next one goes by the whole path).
    /// - Throws: ``StorageError`` when the folder cannot be made, or the file in the way
    ///   cannot be removed or was already removed once.
    private func clear(
        _ obstacle: RenameObstacle,
        for prepared: AtomicFile.Prepared,
        key: DiskKey,
        origin: UInt,
        clearedFileAtFolder: inout Bool
    ) throws -> Bool {
        switch obstacle {
        case .missingFolder:
            do {
                try trash.spares.makeFolder(prepared.folder, below: prepared.root)
            } catch let error as StorageError where prepared.root != nil && error.errno == ENOENT {
                return false  // the root was removed under the temporary
            } catch let error as StorageError where error.errno == ENOTDIR && !clearedFileAtFolder {
                return try clear(
                    .fileInPlaceOfFolder,
                    for: prepared,
                    key: key,
                    origin: origin,
                    clearedFileAtFolder: &clearedFileAtFolder
                )
            }
            return true
        case .fileInPlaceOfFolder:
            guard !clearedFileAtFolder else { throw StorageError.posix("rename", path: prepared.path, errno: ENOTDIR) }
            clearedFileAtFolder = true
            let (obstacle, _, _) = try index.mutate(origin: origin) {
                try removeFileInPlaceOfFolder(key.folder)
            } change: { obstacle -> [Change] in
                if case .some(.some(let counted)) = obstacle { return [.remove(counted)] }
                return []
            }
            guard obstacle != nil else { throw StorageError.posix("rename", path: prepared.path, errno: ENOTDIR) }
            return true
        }
    }

    /// Removes what is at `path` when it is not a folder; whether it did.
    private func removeNonFolder(at path: String) -> Bool {
        var status = stat()
        guard lstat(path, below: workingRoot, &status) == 0, status.st_mode & S_IFMT != S_IFDIR else { return false }
        return fileSystem.unlink(path, below: workingRoot) == 0
    }
}
