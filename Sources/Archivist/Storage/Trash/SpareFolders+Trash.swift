import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The trash's walk: what keeps and sets aside the spares' folders, a batch at a time under
/// the trash lock (see ``emptyTrash(shouldStop:)``).
extension SpareFolders {
    /// How the trash walks of this instance held the trash lock: each hold's duration, and
    /// how many entries it removed (the lock-hold tests read these).
    package struct TrashLockHolds: Sendable {
        /// Every hold, by duration.
        package var durations = LockHoldHistogram()
        /// The most entries one hold deleted (or kept as spares).
        package var mostRemovedInOneHold = 0
        /// The entries all holds deleted (or kept).
        package var removed = 0
    }

    /// The holds of the trash lock by this instance's walks so far.
    package var trashLockHolds: TrashLockHolds { holds.withLock { $0 } }

    /// Empties the trash, keeping large emptied folders as spares: the body of the store's
    /// trash deletion, run on its trash queue. Claims of dead processes and strays of the
    /// spare area go into the trash first (``sweep(below:)``).
    ///
    /// The walk holds ``lockPath`` a batch at a time (``FolderRemoval/batchSize`` entries,
    /// ``FolderRemoval/Batches``) and releases it between batches, so no hold grows with what
    /// the trash holds: iOS terminates a suspended app that holds a file lock in a shared
    /// container (`0xdead10cc`), and `shouldStop` (the background activity's expiry, checked
    /// between batches) ends the walk early with the lock released; the next emptying goes on.
    ///
    /// Only a batch alone in the trash keeps anything: another walk (another process emptying
    /// the same trash) may hold any folder of it open, and goes on deleting what it reads
    /// there — in a kept folder that a claim made an entry folder meanwhile, the new entries.
    /// So each batch holds ``lockPath``: exclusively, when no other walk holds it, and then it
    /// keeps; else shared (after a keeping batch ends), and removes everything, keeping no
    /// spare. Between batches a walk holds folders open without the lock, so another walk
    /// may keep one of them meanwhile: each batch after the first checks, under the lock,
    /// that every folder it holds open is still where it found it in the trash, and starts
    /// over from the top otherwise (``FolderRemoval/Batches/resume()``). The store makes the
    /// lock file when it opens the root, so no file appears in the root behind an open (a
    /// removal or listing of the root right after it saw it come). A walk that finds it gone
    /// (removed since, or a removed root made again by a write) makes it again when there is
    /// trash to walk (else it has nothing to do): a walk without it would remove unlocked
    /// while another process's walk, having made the file, locks it alone and keeps folders
    /// this walk may hold open. When the lock cannot be had at all (it cannot be made),
    /// nothing is kept; when it cannot be opened for want of descriptors or memory, the trash
    /// is left to the next emptying.
    ///
    /// - Parameter shouldStop: Asked between batches; `true` ends the walk there, the rest of
    ///   the trash left to the next emptying.
    /// - Throws: ``StorageError`` as ``FolderRemoval/removeContents(of:below:keeping:)``.
    /// - Complexity: O(entries in the trash), in holds of at most ``FolderRemoval/batchSize``
    ///   entries each.
    func emptyTrash(shouldStop: () -> Bool = { false }) throws {
        // Through the root while the folder it opened is the store's (renamed away or not); by
        // the path once it was removed, where a root made again is used.
        let root = openRoot?.root.working(internalPath: internalPath)
        var lock = fileSystem.open(lockPath, O_RDWR | O_CLOEXEC, 0, below: root)
        if lock < 0 && errno == ENOENT {
            // Made again only when there is trash to walk: a walk with nothing to do makes no
            // file (the open's walk, say, while a caller removes the root it just opened).
            guard holdsTrash(below: root) else { return }
            lock = fileSystem.openCreatingPrivately(lockPath, O_RDWR | O_CLOEXEC, below: root)
        }
        // Short of descriptors or memory for now, while other processes may lock and keep:
        // the next emptying (the next clear or open) walks instead.
        if lock < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM) { return }
        defer { if lock >= 0 { _ = fileSystem.close(lock) } }  // closing releases the lock
        var removal: FolderRemoval.Batches?
        defer { removal?.close() }
        // Large emptied folders moved out of the trash during a batch, removed after it.
        var setAside: [String] = []
        var passes = 1
        while true {
            let alone = lock >= 0 && lockFile(lock, LOCK_EX | LOCK_NB)
            let locked = alone || (lock >= 0 && lockFile(lock, LOCK_SH))
            let start = DispatchTime.now().uptimeNanoseconds
            let removedBefore = removal?.removed ?? 0
            var done = true
            var failure: (any Error)?
            do {
                if removal == nil {
                    sweep(below: root)
                    removal = try FolderRemoval.Batches(of: trashPath, below: root)
                } else {
                    try removal?.resume()
                }
                done =
                    try removal?.next(keeping: alone ? self : nil) { [self] folder, name in
                        guard let aside = self.setAside(name, in: folder, below: root) else { return false }
                        setAside.append(aside)
                        return true
                    } ?? true
            } catch {
                failure = error  // the walk's end, with what it could not delete
            }
            if locked {
                _ = fileSystem.flock(lock, LOCK_UN)
                noteHold(since: start, removed: (removal?.removed ?? 0) - removedBefore)
            }
            // Outside the lock: a removal as long as the names the folder once held. One found
            // not empty after all goes back to the trash, for one more pass.
            var again = false
            for folder in setAside where fileSystem.removeDirectory(folder, below: root) != 0 && errno != ENOENT {
                again = moveToTrash(folder, keepable: false, below: root) || again
            }
            setAside.removeAll()
            if let failure { throw failure }
            if done && again && passes == 1 {
                passes += 1
                removal?.close()
                removal = nil
                continue
            }
            if done || shouldStop() { return }
        }
    }

    /// Moves the emptied folder `name` of the open folder `folder` (in the trash) into the
    /// spare area under a name of this process's (``TemporaryName``), which no walk, claim or
    /// sweep touches while this process lives: its removal then runs without the trash lock.
    /// (A process killed meanwhile leaves a claim-like name, which the next emptying's
    /// ``sweep(below:)`` puts back into the trash.)
    ///
    /// - Returns: Its path now, or `nil` when it could not be moved (it is removed in place).
    /// - Complexity: One rename, and a `mkdir` when the spare area is missing.
    func setAside(_ name: String, in folder: Int32, below root: AtomicFile.Root?) -> String? {
        let target = path + "/" + TemporaryName.make()
        for attempt in 0..<2 {
            let moved =
                root.map { fileSystem.renameExclusive(folder, name, $0.descriptor, $0.relative(target)) }
                ?? fileSystem.renameExclusive(folder, name, AT_FDCWD, target)
            if moved == 0 { return target }
            // The area is missing (or the folder is gone: the next try says so again).
            guard attempt == 0, errno == ENOENT, fileSystem.makeDirectory(path, below: root) || errno == EEXIST else {
                return nil
            }
        }
        return nil
    }

    /// Counts one hold of the trash lock that began at `start` and removed `removed` entries.
    private func noteHold(since start: UInt64, removed: Int) {
        let held = DispatchTime.now().uptimeNanoseconds &- start
        holds.withLock { holds in
            holds.durations.record(nanoseconds: held)
            holds.mostRemovedInOneHold = max(holds.mostRemovedInOneHold, removed)
            holds.removed += removed
        }
    }

    /// The background walks that could not delete everything in the trash: how many, and the
    /// error of the last one no caller was told of yet (see ``takeUnreportedTrashFailure()``).
    package struct TrashFailures: Sendable {
        /// How many walks ended with an error since the store opened.
        package var count = 0
        /// The last walk's error, until ``takeUnreportedTrashFailure()`` hands it over.
        package var unreported: StorageError?
    }

    /// The trash walks' failures so far.
    package var trashFailures: TrashFailures { failures.withLock { $0 } }

    /// The error of the last failed trash walk that no caller was told of yet, now told: what
    /// could not be deleted stays in the trash (no size counts it), and the next clear or open
    /// tries again.
    func takeUnreportedTrashFailure() -> StorageError? {
        failures.withLock { failures in
            defer { failures.unreported = nil }
            return failures.unreported
        }
    }

    /// ``emptyTrash(shouldStop:)`` inside a ``BackgroundActivity``, stopping between batches
    /// when its time is up: how the store's trash queue runs it. A walk that fails is counted
    /// and its error kept for the store's next ``DiskStore/flush()`` to throw: no caller waits
    /// for the walk to tell it.
    func emptyTrashInBackground() {
        BackgroundActivity.run("Archivist: deleting a cleared cache's files") { activity in
            do {
                try emptyTrash(shouldStop: { activity.isExpiring })
            } catch {
                var failure =
                    error as? StorageError
                    ?? StorageError(.fileSystem, "\(error)", fileURL: URL(fileURLWithPath: trashPath))
                failure.message =
                    "deleting cleared entries in the trash failed (what is left there counts in no size, "
                    + "and the next clear or open tries again): " + failure.message
                failures.withLock { failures in
                    failures.count += 1
                    failures.unreported = failure
                }
            }
        }
    }

    /// Whether the trash folder lists anything (or cannot be read: then the walk decides).
    private func holdsTrash(below root: AtomicFile.Root?) -> Bool {
        guard let dir = DirectoryEntries.open(trashPath, below: root, noFollow: true) else { return errno != ENOENT }
        defer { closedir(dir) }
        return !DirectoryEntries.readsEmpty(dir)
    }

    /// `flock(fd, operation)`, again after a signal: whether it was taken.
    private func lockFile(_ fd: Int32, _ operation: Int32) -> Bool {
        while fileSystem.flock(fd, operation) != 0 {
            if errno != EINTR { return false }
        }
        return true
    }

    /// Renames `item` into the trash (making the trash folder when it is missing), named so
    /// that it may be kept again once emptied when `keepable`.
    func moveToTrash(_ item: String, keepable: Bool, below root: AtomicFile.Root?) -> Bool {
        let target = trashPath + "/" + Self.trashItemName(keepable: keepable)
        if fileSystem.rename(item, target, below: root) == 0 { return true }
        guard errno == ENOENT, fileSystem.makeDirectory(trashPath, below: root) || errno == EEXIST else { return false }
        return fileSystem.rename(item, target, below: root) == 0
    }
}
