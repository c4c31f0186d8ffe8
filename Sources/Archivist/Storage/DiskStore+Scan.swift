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
    /// `.archivist`, which the entry walk skips. (A save runs only while the marker reads `D`,
    /// so such a temporary always comes with a scan.)
    func sweepInternalTemporaries() {
        TemporaryName.sweepAbandoned(inFolder: internalPath, fileSystem: fileSystem)
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
