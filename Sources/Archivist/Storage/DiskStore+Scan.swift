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
    /// `.archivist` folder aside) with its size, allocation and modification date as last
    /// access. Stale temporaries left by a crash are deleted on the way; files and folders
    /// whose names are not ours are left alone and not counted.
    ///
    /// - Throws: ``CacheError`` when the root cannot be listed.
    /// - Complexity: Blocking file I/O: one `lstat` per file under the root.
    func scan() throws -> SizeIndex {
        sweepInternalTemporaries()
        var index = SizeIndex()
        try scanFolder(rootPath, components: [], into: &index)
        return index
    }

    /// Deletes the temporaries of index saves that a crash interrupted: they sit in
    /// `.archivist`, which the entry walk skips. (A save runs with the intent word set, so a
    /// save killed midway always leaves a scan to the next holder of the lock.)
    func sweepInternalTemporaries() {
        TemporaryName.sweepAbandoned(inFolder: internalPath, fileSystem: fileSystem)
    }

    /// Deletes, on the trash queue, the abandoned temporaries in every entry folder: what
    /// processes killed while writing an entry (outside the lock) left behind. Temporaries of
    /// live writers stay (``TemporaryName/isAbandoned(_:modified:now:)``); nothing is counted,
    /// so the index needs no change and no lock is held.
    ///
    /// - Complexity: O(files under the root), in the background: a directory walk, and one
    ///   `lstat` per temporary (and per item whose type the directory entry does not give).
    func sweepAbandonedEntryTemporaries() {
        let root = rootPath
        let fileSystem = fileSystem
        trashQueue.async { Self.sweepTemporaries(inFolder: root, depth: 0, fileSystem: fileSystem) }
    }

    private static func sweepTemporaries(inFolder path: String, depth: Int, fileSystem: FileSystem) {
        guard let dir = opendir(path) else { return }
        var folders: [String] = []
        var temporaries: [String] = []
        while let item = readdir(dir) {
            let name = Self.name(of: item)
            if name == "." || name == ".." || (depth == 0 && name == ".archivist") { continue }
            if AtomicFile.isTemporary(name[...]) {
                temporaries.append(name)
                continue
            }
            guard depth < maxScanDepth, name.utf8.allSatisfy(FolderPath.isAllowed) else { continue }
            let type = item.pointee.d_type
            if type == UInt8(DT_DIR) {
                folders.append(name)
            } else if type == UInt8(DT_UNKNOWN) {
                var status = stat()
                if lstat(path + "/" + name, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { folders.append(name) }
            }
        }
        closedir(dir)
        let now = TemporaryName.currentTime()
        for name in temporaries {
            let child = path + "/" + name
            var status = stat()
            guard lstat(child, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                  TemporaryName.isAbandoned(name[...], modified: TemporaryName.modificationTime(status), now: now)
            else { continue }
            _ = fileSystem.unlink(child)
        }
        for folder in folders { sweepTemporaries(inFolder: path + "/" + folder, depth: depth + 1, fileSystem: fileSystem) }
    }

    private static func name(of item: UnsafeMutablePointer<dirent>) -> String {
        withUnsafePointer(to: &item.pointee.d_name) {
            String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
        }
    }

    private func scanFolder(_ path: String, components: [String], into index: inout SizeIndex) throws {
        guard let dir = opendir(path) else {
            if components.isEmpty { throw CacheError.posix("opendir", path: path, errno: errno) }
            return
        }
        defer { closedir(dir) }
        let folder = FolderPath(components)
        while let item = readdir(dir) {
            let name = Self.name(of: item)
            if name == "." || name == ".." || (components.isEmpty && name == ".archivist") { continue }
            let child = path + "/" + name
            var status = stat()
            guard lstat(child, &status) == 0 else { continue }
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                if components.count < Self.maxScanDepth, !name.isEmpty, name.utf8.allSatisfy(FolderPath.isAllowed) {
                    try scanFolder(child, components: components + [name], into: &index)
                }
            case S_IFREG:
                let modified = TemporaryName.modificationTime(status)
                if AtomicFile.isTemporary(name[...]) {
                    // Another live process may be writing it: only an abandoned one goes.
                    if TemporaryName.isAbandoned(name[...], modified: modified) { _ = fileSystem.unlink(child) }
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
