import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store's trash, `.archivist/trash`: what a clear removes is renamed into it in O(1) and
/// deleted later on ``queue``, in bounded batches under the trash lock, large emptied folders
/// kept as spares for the next entry folders (``SpareFolders``, which owns the walk). The
/// queue also runs the store's other background file work (sweeps of abandoned temporaries),
/// so that ``waitUntilEmptied()`` waits for all of it.
///
/// <!-- snippet: skip the trash is internal to the module -->
/// ```swift
/// try trash.moveToTrash(rootPath + "/shared-caches", cleared: true)
/// trash.empty { print("deleted") }
/// ```
final class Trash: Sendable {
    /// The trash folder's path.
    let path: String
    /// The store's internal folder, `.archivist`.
    let internalPath: String
    let fileSystem: FileSystem
    /// The root folder open: items move into the trash of the folder the store opened.
    let openRoot: OpenRoot?
    /// Where the trash is emptied, one walk after another.
    let queue = DispatchQueue(label: "Archivist.Trash", qos: .utility)
    /// Emptied folders kept for the next entry folder, and the walk that keeps them.
    let spares: SpareFolders

    /// The trash of the store whose internal folder is `internalPath`. With `writable`, makes
    /// the lock file every walk takes (see ``SpareFolders/emptyTrash(shouldStop:)``) now,
    /// beside the journal, rather than by the first walk: that walk runs right after the
    /// open, and a file appearing then raced whoever removed or listed the root. Best effort:
    /// a walk that finds no lock file keeps nothing.
    init(internalPath: String, fileSystem: FileSystem, openRoot: OpenRoot?, writable: Bool) {
        self.path = internalPath + "/trash"
        self.internalPath = internalPath
        self.fileSystem = fileSystem
        self.openRoot = openRoot
        self.spares = SpareFolders(internalPath: internalPath, fileSystem: fileSystem, queue: queue, openRoot: openRoot)
        if writable {
            let lock = fileSystem.openCreatingPrivately(
                internalPath + "/trash.lock",
                O_RDWR | O_CLOEXEC,
                below: openRoot?.root
            )
            if lock >= 0 { _ = fileSystem.close(lock) }
        }
    }
    /// Renames `source` into the trash; a missing source is already clear. Only a folder
    /// `cleared` (by ``clear(_:origin:completion:)``, not a foreign one out of an entry's way)
    /// is named so that its emptied folders may be kept as spares (``SpareFolders/clearedPrefix``).
    /// Through the root's descriptor, into the trash of the folder the store opened (renamed
    /// away or not); in a removed root, by the path (see `DiskStore+RootRelative.swift`).
    func moveToTrash(_ source: String, cleared: Bool = false) throws {
        let target = path + "/" + SpareFolders.trashItemName(keepable: cleared)
        _ = try belowRootOrByPath(openRoot?.root, internalPath: internalPath) {
            try moveToTrash(source, to: target, below: $0)
        }
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
                try fileSystem.makeDirectories(path, below: root)
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
            _ = fileSystem.unlink(path, below: root)
            try fileSystem.makeDirectories(path, below: root)
            if fileSystem.rename(source, target, below: root) == 0 { return true }
            code = errno
            if code == ENOTDIR { throw StorageError.posix("rename into trash", path: source, errno: code) }
        }
        if code == ENOENT || code == ENOTDIR { return false }
        throw StorageError.posix("rename into trash", path: source, errno: code)
    }

    /// Whether `item` names anything (below `root`, or by the whole path without one).
    private func exists(_ item: String, below root: AtomicFile.Root?) -> Bool {
        if let root { return fileSystem.accessAt(root.descriptor, root.relative(item), F_OK) == 0 }
        return access(item, F_OK) == 0
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
    func empty(completion: (@Sendable () -> Void)?) {
        let spares = spares
        queue.async {
            spares.emptyTrashInBackground()
            completion?()
        }
    }

    /// The error of the last trash deletion that failed and that no caller was told of yet,
    /// now told (``SpareFolders/takeUnreportedTrashFailure()``).
    func takeUnreportedFailure() -> StorageError? {
        spares.takeUnreportedTrashFailure()
    }

    /// Waits until every deletion queued so far has finished.
    ///
    /// - Complexity: Blocks the caller until the trash queue drains.
    func waitUntilEmptied() {
        queue.sync {}
    }
}
