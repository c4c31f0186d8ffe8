import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DiskStore {
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
        sweepInternalTemporaries(below: below)
        var index = SizeIndex()
        let fd = openFolder(rootPath, below: below)
        guard fd >= 0 else { throw StorageError.posix("opendir", path: rootPath, errno: errno) }
        var examined = 0
        try scanFolder(fd, path: rootPath, components: [], into: &index, examined: &examined, below: below)
        return index
    }

    /// Deletes the abandoned temporaries of index saves — they sit in `.archivist`, which the
    /// entry walk skips, and a fold writes its snapshot without the lock or the intent word,
    /// so a process that dies or exits during one leaves no repair to find it — and those of
    /// entry writes (``temporariesPath``). Every open and every scan calls it: two small
    /// folders listed.
    func sweepInternalTemporaries(below root: AtomicFile.Root?) {
        TemporaryName.sweepAbandoned(inFolder: internalPath, fileSystem: fileSystem, below: root)
        TemporaryName.sweepAbandoned(inFolder: temporariesPath, fileSystem: fileSystem, below: root)
    }

    /// Deletes, on the trash queue, the abandoned temporaries of entry writes: what processes
    /// killed while writing an entry (outside the lock) left in ``temporariesPath``. Temporaries
    /// of live writers stay (``TemporaryName/isAbandoned(_:modified:now:)``); nothing is
    /// counted, so the index needs no change and no lock is held.
    ///
    /// - Complexity: O(temporaries) in the background — the writes under way in every process
    ///   and what dead ones left — never O(entries): one folder listed, one `lstat` per
    ///   temporary.
    func sweepEntryTemporaries() {
        // Not the store itself: work queued here must not keep it alive (the registry would
        // hand it out again). The root's owner, though, so its descriptor stays open.
        let (openRoot, internalPath, temporariesPath, fileSystem) = (openRoot, internalPath, temporariesPath, fileSystem)
        trashQueue.async {
            let below = openRoot?.root.working(internalPath: internalPath)
            TemporaryName.sweepAbandoned(inFolder: temporariesPath, fileSystem: fileSystem, below: below)
        }
    }

    private static func name(of item: UnsafeMutablePointer<dirent>) -> String {
        withUnsafePointer(to: &item.pointee.d_name) {
            String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
        }
    }

    /// Scans the folder open as `fd` (at `path`, the folder `components` below the root),
    /// which it closes: its subfolders are opened from it, its files `lstat`ed from it.
    /// `examined` counts the items seen, for ``rebuild``.
    private func scanFolder(_ fd: Int32, path: String, components: [String], into index: inout SizeIndex,
                            examined: inout Int, below root: AtomicFile.Root?) throws {
        guard let dir = DirectoryEntries.stream(taking: fd) else {
            if components.isEmpty { throw StorageError.posix("opendir", path: path, errno: errno) }
            return
        }
        defer { closedir(dir) }
        let folder = FolderPath(components)
        while let item = readdir(dir) {
            let name = Self.name(of: item)
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
                        try scanFolder(child, path: path + "/" + name, components: components + [name], into: &index,
                                       examined: &examined, below: root)
                    }
                }
            case S_IFREG:
                let modified = TemporaryName.modificationTime(status)
                if AtomicFile.isTemporary(name[...]) {
                    // Another live process may be writing it: only an abandoned one goes.
                    if TemporaryName.isAbandoned(name[...], modified: modified) { _ = fileSystem.unlink(path + "/" + name, below: root) }
                } else if !components.isEmpty, let entry = EntryName(fileName: name[...]) {
                    index.set(DiskKey(folder: folder, name: entry),
                              Record(logical: Int64(status.st_size), allocated: Int64(status.st_blocks) * 512,
                                     lastAccess: modified))
                }
            default:
                continue
            }
        }
    }
}
