#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which folder a store works in: the one it opened, through its descriptor (``DiskStore/root``),
/// for as long as that folder is the store's — wherever it was renamed or moved to. Reads,
/// writes (their folders included), removes, clears, spare folders, the trash's walk, scans
/// and index saves all go there, so they agree with each other and with the sizes, whose
/// journal, marker and shared counters are open descriptors of the same folder.
///
/// A root that was removed is no longer the store's: what a call finds missing below it is
/// asked of the path instead, where a root made again is used (a write's folders are made
/// there, the root too when missing). "Removed" is the folder's link count on Linux, and
/// elsewhere its internal `.archivist` folder gone (``AtomicFile/Root/holdsStore(internalPath:)``);
/// a read's miss decides by the link count alone (``AtomicFile/readBuffer(path:fileSystem:below:identity:)``),
/// so off Linux a read's miss in a renamed root is asked of the path too.
///
/// The decision costs an `fstat` and is made only where a call below the root found nothing
/// (a remove's or clear's miss) or before rare whole-folder work (a walk, a scan, a save):
/// never on a set's or get's way when the entry's folder exists.
extension DiskStore {
    /// The root's descriptor while the folder it opened is still the store's; `nil` once it
    /// was removed, and for a store without one.
    ///
    /// - Complexity: An `fstat` (and an `fstatat` off Linux).
    var workingRoot: AtomicFile.Root? {
        root?.working(internalPath: internalPath)
    }

    /// Whether the folder at ``rootPath`` (a final symbolic link followed, as when it was
    /// opened) is still the root this store opened; `true` for a store without a root
    /// descriptor, which works by the path anyway.
    ///
    /// - Complexity: An `fstat` and a `stat`.
    var isAtItsPath: Bool {
        guard let root else { return true }
        var opened = stat()
        var there = stat()
        guard fstat(root.descriptor, &opened) == 0 else { return true }
        return stat(rootPath, &there) == 0 && there.st_dev == opened.st_dev && there.st_ino == opened.st_ino
    }

    /// Unlinks the entry file at `path` below the root (by its path in a removed root).
    ///
    /// - Returns: Whether it is gone (unlinked, or missing).
    func unlinkEntryFile(_ path: String) -> Bool {
        if fileSystem.unlink(path, below: root) == 0 { return true }
        guard errno == ENOENT else { return false }
        guard let root, !root.holdsStore(internalPath: internalPath) else { return true }
        return fileSystem.unlink(path) == 0 || errno == ENOENT
    }
}

/// The store's root folder open (``AtomicFile/Root``), closed when its last holder lets go:
/// the store, and the work it queued on its trash queue (a walk of the trash, a sweep), which
/// may run after the store is gone. Closed under such work, the descriptor's number could be
/// another folder's by then, and the walk's deletions would go there.
final class OpenRoot: Sendable {
    /// The folder and its descriptor.
    let root: AtomicFile.Root
    private let fileSystem: FileSystem

    /// Takes over `root`'s descriptor, to close through `fileSystem`.
    init(_ root: AtomicFile.Root, fileSystem: FileSystem) {
        self.root = root
        self.fileSystem = fileSystem
    }

    deinit {
        _ = fileSystem.close(root.descriptor)
    }
}
