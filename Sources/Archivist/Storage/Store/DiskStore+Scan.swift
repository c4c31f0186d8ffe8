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
        sweepCrossDeviceTemporaries()
    }

    /// Deletes the abandoned temporaries that entry writes left beside their entries in the
    /// root's folders on another mount than the root, where writes make them (`EXDEV`, see
    /// `DiskStore+EntryWrite.swift`): in each such folder and two levels of folders below it
    /// (a mounted location folder's user and type folders). Such folders are those of the
    /// root's first two levels on another device than the root, and on Linux the mount points
    /// below the root that `/proc/self/mountinfo` lists, at any depth (a bind mount of a
    /// folder of the root's own file system keeps its device number).
    ///
    /// - Complexity: O(the folders of the root's first level) `readdir`s and one read of the
    ///   mount table, plus listings of the folders on another mount.
    func sweepCrossDeviceTemporaries() {
        var rootStatus = stat()
        guard stat(rootPath, &rootStatus) == 0 else { return }
        func isElsewhere(_ folder: String) -> Bool {
            var status = stat()
            return lstat(folder, &status) == 0 && status.st_dev != rootStatus.st_dev
        }
        var mounted: Set<String> = []
        for folder in Self.subfolders(of: rootPath) where folder != internalPath && folder != temporariesPath {
            if isElsewhere(folder) {
                mounted.insert(folder)
            } else {
                for inner in Self.subfolders(of: folder) where isElsewhere(inner) { mounted.insert(inner) }
            }
        }
        for relative in Self.mountPoints(below: rootPath) { mounted.insert(rootPath + "/" + relative) }
        func sweep(_ folder: String, levels: Int) {
            TemporaryName.sweepAbandoned(inFolder: folder, fileSystem: fileSystem)
            guard levels > 0 else { return }
            for inner in Self.subfolders(of: folder) { sweep(inner, levels: levels - 1) }
        }
        for folder in mounted { sweep(folder, levels: 2) }
    }

    /// The mount points below the folder at `path`, relative to it (Linux's
    /// `/proc/self/mountinfo`; none elsewhere).
    private static func mountPoints(below path: String) -> [String] {
        #if os(Linux)
        guard let resolved = realpath(path, nil) else { return [] }
        let prefix = String(cString: resolved) + "/"
        free(resolved)
        guard let table = fopen("/proc/self/mountinfo", "r") else { return [] }
        defer { fclose(table) }
        var points: [String] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, table) > 0, let line {
            // The fifth field is the mount point, with space, tab, newline and `\` octal-escaped.
            let fields = String(cString: line).split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count > 4 else { continue }
            let point = unescapeMountField(fields[4])
            if point.hasPrefix(prefix), point.count > prefix.count {
                points.append(String(point.dropFirst(prefix.count)))
            }
        }
        return points
        #else
        return []
        #endif
    }

    /// A field of the mount table with its `\ooo` escapes decoded.
    private static func unescapeMountField(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
                let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The paths of the folders in the folder at `path` (symbolic links not followed).
    private static func subfolders(of path: String) -> [String] {
        guard let dir = DirectoryEntries.open(path, below: nil) else { return [] }
        defer { closedir(dir) }
        var folders: [String] = []
        while let item = readdir(dir) {
            let name = Self.name(of: item)
            guard name != "." && name != "..", !AtomicFile.isTemporary(name[...]) else { continue }
            let child = path + "/" + name
            let type = item.pointee.d_type
            if type == UInt8(DT_DIR) {
                folders.append(child)
            } else if type == UInt8(DT_UNKNOWN) {
                var status = stat()
                if lstat(child, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { folders.append(child) }
            }
        }
        return folders
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
        let (openRoot, internalPath, temporariesPath, fileSystem) = (
            openRoot, internalPath, temporariesPath, fileSystem
        )
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
