import Foundation

/// The cross-process lock of one plist file: a ``FileLock`` on the hidden file
/// `.lock.<name>` beside `<name>.plist`, which every ``PlistStore`` and ``Preferences`` of
/// every process writing that file takes around its read-modify-write.
///
/// One `FileLock` per lock file serves the whole process (threads queue on its condition,
/// processes on `flock`), so a table here hands it out by the file's identity (device and
/// inode): on a case-insensitive volume — APFS and HFS+ as macOS and iOS format them —
/// `Settings.plist` and `settings.plist` are one file, and two `FileLock`s on it would
/// deadlock a thread that nests the two spellings. Locks nobody holds are kept for reuse, a
/// few at most; the others are dropped, closing their descriptors. (An idle lock keeps its file
/// open, so its inode number cannot be reused by another file meanwhile.)
///
/// The lock file is never deleted (deleting a lock file another process has open would let
/// two writers lock two different files); it is empty and created 0600.
package enum PlistFileLock {
    /// How many idle locks (open descriptors) the process keeps for reuse.
    static let idleLimit = 16

    private struct Entry {
        var lock: FileLock
        var users: Int
    }

    /// What a plist's lock file is known by in this process: its identity (device and
    /// inode), or, while it cannot be made (its folder missing, for a first write that then
    /// creates it), its canonical path (``canonicalPath(_:)``). The identity stays the same
    /// while the plist itself is replaced by a rename on every write: the lock file is never
    /// replaced.
    enum Key: Hashable {
        case file(device: UInt64, inode: UInt64)
        case path(String)
    }

    private static let table = Locked<[Key: Entry]>([:])
    private static let longestHoldNanoseconds = Locked<Int64>(0)

    /// The path of the lock file of the plist at `url`.
    static func lockPath(for url: URL) -> String {
        let url = url.standardizedFileURL  // one lock instance however the folder was spelled
        let base = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent(".lock." + base).path
    }

    /// Runs `body` holding the plist's lock exclusively, against every thread of this process
    /// and every other process. The plist's folder is created (0700) first if missing.
    ///
    /// Call it around a read-modify-write only, never around a caller's waiting or I/O of
    /// other files: the lock is held for exactly as long as `body` runs.
    ///
    /// - Throws: ``StoreError`` naming the plist when the folder or lock file cannot be made
    ///   or locked; what `body` throws, unchanged.
    /// - Complexity: `flock` and its release around `body`, plus waiting for other holders.
    static func withExclusive<R>(forPlistAt url: URL, _ body: () throws -> R) throws -> R {
        let path = lockPath(for: url)
        let key = key(ofLockAt: path, creating: true)
        let lock = acquire(key, path: path)
        defer { release(key) }
        var bodyError: (any Error)?
        func run() throws -> R {
            try lock.withExclusive {
                let start = DispatchTime.now().uptimeNanoseconds
                defer { noteHold(since: start) }
                do {
                    return try body()
                } catch {
                    bodyError = error
                    throw error
                }
            }
        }
        do {
            return try run()
        } catch  where bodyError == nil && (error as? StorageError)?.errno == ENOENT {
            // The plist's folder does not exist yet: a first write creates it.
            do {
                try FileSystem.posix.makeDirectories(url.deletingLastPathComponent().path)
                return try run()
            } catch {
                if let bodyError { throw bodyError }
                throw StoreFile.storeError(error, "cannot lock", url)
            }
        } catch {
            if let bodyError { throw bodyError }
            throw StoreFile.storeError(error, "cannot lock", url)
        }
    }

    /// The longest time, so far in this process, that any plist's lock was held (measured
    /// from inside the lock, around the read-modify-write).
    package static var longestHold: Duration { .nanoseconds(longestHoldNanoseconds.withLock { $0 }) }

    /// Every hold of the lock of the plist at `url` by this process, by duration, while this
    /// process keeps that lock open (in use, or among the idle ones); `nil` otherwise.
    package static func holdHistogram(forPlistAt url: URL) -> LockHoldHistogram? {
        let key = key(ofLockAt: lockPath(for: url), creating: false)
        return table.withLock { $0[key]?.lock }?.holdHistogram
    }

    /// The keys the plist at `url` is known by in this process: its lock file's identity,
    /// when there is one, then its canonical path, which names the file also before its folder
    /// exists. ``PreferencesFile`` keeps one state per file under both.
    ///
    /// - Complexity: One `stat` and a `realpath`.
    static func keys(forPlistAt url: URL) -> [Key] {
        let path = lockPath(for: url)
        let canonical = Key.path(canonicalPath(path))
        let key = key(ofLockAt: path, creating: false)
        return key == .path(path) ? [canonical] : [key, canonical]
    }

    /// As ``keys(forPlistAt:)``, the lock file made first (empty, 0600) when its folder exists,
    /// and kept open as `pin` (-1 when it cannot be opened), so that its inode number stays
    /// its own for as long as the caller keeps the key: a deleted lock file's number could
    /// otherwise go to another folder's lock file. The caller closes `pin`.
    ///
    /// - Complexity: One `open` (which may create the file), an `fstat` and a `realpath`.
    static func pinnedKeys(forPlistAt url: URL) -> (keys: [Key], pin: Int32) {
        let path = lockPath(for: url)
        let canonical = Key.path(canonicalPath(path))
        var fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 && errno == ENOENT { fd = FileSystem.posix.openCreatingPrivately(path, O_RDWR | O_CLOEXEC) }
        var status = stat()
        guard fd >= 0, fstat(fd, &status) == 0 else {
            if fd >= 0 { close(fd) }
            return ([canonical], -1)
        }
        let key = Key.file(
            device: UInt64(truncatingIfNeeded: status.st_dev),
            inode: UInt64(truncatingIfNeeded: status.st_ino)
        )
        return ([key, canonical], fd)
    }

    /// `path` with the symbolic links, `.` and `..` of its longest existing prefix resolved
    /// (`realpath`), and the rest appended as given: one spelling for every path to one file,
    /// whether or not the file and its folders exist yet.
    ///
    /// - Complexity: One `realpath` per missing trailing component, plus one.
    static func canonicalPath(_ path: String) -> String {
        var existing = URL(fileURLWithPath: path).standardizedFileURL.path
        var missing: [String] = []
        while existing.count > 1 {
            if let resolved = realpath(existing, nil) {
                defer { free(resolved) }
                let base = String(cString: resolved)
                return missing.reversed().reduce(base) { $0 == "/" ? "/" + $1 : $0 + "/" + $1 }
            }
            let url = URL(fileURLWithPath: existing)
            missing.append(url.lastPathComponent)
            existing = url.deletingLastPathComponent().path
        }
        return "/" + missing.reversed().joined(separator: "/")
    }

    /// The table's key of the lock file at `path`, made first (empty, 0600) when `creating`.
    private static func key(ofLockAt path: String, creating: Bool) -> Key {
        var status = stat()
        if stat(path, &status) != 0 {
            guard creating, errno == ENOENT else { return .path(path) }
            let fd = FileSystem.posix.openCreatingPrivately(path, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { return .path(path) }
            defer { close(fd) }
            guard fstat(fd, &status) == 0 else { return .path(path) }
        }
        return .file(
            device: UInt64(truncatingIfNeeded: status.st_dev),
            inode: UInt64(truncatingIfNeeded: status.st_ino)
        )
    }

    private static func acquire(_ key: Key, path: String) -> FileLock {
        table.withLock { table in
            var entry = table[key] ?? Entry(lock: FileLock(path: path), users: 0)
            entry.users += 1
            table[key] = entry
            return entry.lock
        }
    }

    /// Records a hold that began at `start` (`uptimeNanoseconds`), while still holding the
    /// lock: the same span `FileLock.longestHold` measures, less the unlock call. (Reading
    /// `FileLock.longestHold` after the release could wait for another thread's `flock`.)
    private static func noteHold(since start: UInt64) {
        let held = Int64(clamping: DispatchTime.now().uptimeNanoseconds &- start)
        longestHoldNanoseconds.withLock { $0 = max($0, held) }
    }

    private static func release(_ key: Key) {
        table.withLock { table in
            table[key]?.users -= 1
            guard table.count > idleLimit else { return }
            for (idleKey, entry) in table where entry.users == 0 && table.count > idleLimit {
                table[idleKey] = nil
            }
        }
    }
}
