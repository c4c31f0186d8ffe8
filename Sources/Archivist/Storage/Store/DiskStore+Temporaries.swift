import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DiskStore {
    /// Deletes the abandoned temporaries of index saves — they sit in `.archivist`, which the
    /// entry walk skips, and a fold writes its snapshot without the lock or the intent word,
    /// so a process that dies or exits during one leaves no repair to find it — and those of
    /// entry writes (``temporariesPath``). Every open and every scan calls it: two small
    /// folders listed. Static, so that the index's scans call it without holding the store.
    static func sweepInternalTemporaries(rootPath: String, fileSystem: FileSystem, below root: AtomicFile.Root?) {
        let temporariesPath = rootPath + "/" + temporariesFolderName
        TemporaryName.sweepAbandoned(inFolder: rootPath + "/.archivist", fileSystem: fileSystem, below: root)
        TemporaryName.sweepAbandoned(inFolder: temporariesPath, fileSystem: fileSystem, below: root)
        sweepCrossDeviceTemporaries(rootPath: rootPath, fileSystem: fileSystem)
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
    static func sweepCrossDeviceTemporaries(rootPath: String, fileSystem: FileSystem) {
        let (internalPath, temporariesPath) = (rootPath + "/.archivist", rootPath + "/" + temporariesFolderName)
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
            let name = String(cString: DirectoryEntries.name(of: item))
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
        trash.queue.async {
            let below = openRoot?.root.working(internalPath: internalPath)
            TemporaryName.sweepAbandoned(inFolder: temporariesPath, fileSystem: fileSystem, below: below)
        }
    }
}
