import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rebuilding the index from the entry files themselves: the last resort of a repair
/// (`PersistentIndex+Repair.swift`), and a read-only root's index when its snapshot is unusable.
extension PersistentIndex {
    /// The deepest folder nesting a scan follows; deeper folders are not ours.
    static let maxScanDepth = 16

    /// Rebuilds the index from the disk: every entry file under the root (the store's own
    /// `.archivist` folder aside), walked from the root's descriptor while it is the store's
    /// (see `DiskStore+RootRelative.swift`) with its size, allocation and modification date as last
    /// access. Stale temporaries left by a crash are deleted on the way; files and folders
    /// whose names are not ours are left alone and not counted.
    ///
    /// - Throws: ``StorageError`` when the root cannot be listed.
    /// - Complexity: Blocking file I/O: one `lstat` per file under the root.
    func scan() throws -> SizeIndex {
        noteScan(running: true)
        defer { noteScan(running: false) }
        let below = workingRoot
        sweepTemporaries(below)
        var index = SizeIndex()
        let fd = openFolder(rootPath, below: below)
        guard fd >= 0 else { throw StorageError.posix("opendir", path: rootPath, errno: errno) }
        var examined = 0
        try scanFolder(fd, path: rootPath, components: [], into: &index, examined: &examined, below: below)
        return index
    }

    /// Scans the folder open as `fd` (at `path`, the folder `components` below the root),
    /// which it closes: its subfolders are opened from it, its files `lstat`ed from it.
    /// `examined` counts the items seen, for ``rebuild``.
    private func scanFolder(
        _ fd: Int32,
        path: String,
        components: [String],
        into index: inout SizeIndex,
        examined: inout Int,
        below root: AtomicFile.Root?
    ) throws {
        guard let dir = DirectoryEntries.stream(taking: fd) else {
            if components.isEmpty { throw StorageError.posix("opendir", path: path, errno: errno) }
            return
        }
        defer { closedir(dir) }
        let folder = FolderPath(components)
        while let item = readdir(dir) {
            let name = String(cString: DirectoryEntries.name(of: item))
            if name == "." || name == ".." || (components.isEmpty && name == ".archivist") { continue }
            examined += 1
            if examined % Self.rebuildProgressStride == 0 { noteScanProgress(examined) }
            var status = stat()
            guard fstatat(fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                if components.count < Self.maxScanDepth, !name.isEmpty, name.utf8.allSatisfy(FolderPath.isAllowed) {
                    let child = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    if child >= 0 {
                        try scanFolder(
                            child,
                            path: path + "/" + name,
                            components: components + [name],
                            into: &index,
                            examined: &examined,
                            below: root
                        )
                    }
                }
            case S_IFREG:
                let modified = TemporaryName.modificationTime(status)
                if AtomicFile.isTemporary(name[...]) {
                    // Another live process may be writing it: only an abandoned one goes.
                    if TemporaryName.isAbandoned(name[...], modified: modified) {
                        _ = fileSystem.unlink(path + "/" + name, below: root)
                    }
                } else if !components.isEmpty, let entry = EntryName(fileName: name[...]) {
                    index.set(
                        DiskKey(folder: folder, name: entry),
                        Record(
                            logical: Int64(status.st_size),
                            allocated: Int64(status.st_blocks) * 512,
                            lastAccess: modified
                        )
                    )
                }
            default:
                continue
            }
        }
    }
}
