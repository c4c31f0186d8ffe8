import CArchivistSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX calls the storage layer makes, as function values, so a test can put a failing
/// or recording file system underneath a store. ``posix`` is the real thing.
///
/// Each function behaves like its C namesake: it returns -1 (or a negative count) and sets
/// `errno` on failure.
///
/// ```swift
/// var fs = FileSystem.posix
/// fs.rename = { _, _ in errno = EIO; return -1 }   // every rename now fails
/// ```
package struct FileSystem: Sendable {
    /// `open(path, flags, mode)`. Replacing it turns ``allowsRootRelativeCalls`` off.
    package var open: @Sendable (_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        didSet { allowsRootRelativeCalls = false }
    }
    /// `close(fd)`.
    package var close: @Sendable (_ fd: Int32) -> Int32
    /// `write(fd, buffer, count)`.
    package var write: @Sendable (_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int
    /// `writev(fd, vectors, count)`: one system call for several buffers (an entry's header
    /// and payload), so neither is copied next to the other first.
    package var writev: @Sendable (_ fd: Int32, _ vectors: UnsafePointer<iovec>, _ count: Int32) -> Int
    /// `pwrite(fd, buffer, count, offset)`.
    package var pwrite: @Sendable (_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, _ offset: off_t) -> Int
    /// `read(fd, buffer, count)`.
    package var read: @Sendable (_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int
    /// `pread(fd, buffer, count, offset)`: threads reading one descriptor at once, none moving
    /// its position (the journal).
    package var pread: @Sendable (_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, _ offset: off_t) -> Int
    /// The file's data on its way to stable storage, ordered before any later write:
    /// `F_BARRIERFSYNC` on Darwin (`fsync` where the file system refuses it), `fsync`
    /// elsewhere. What ``Durability/file`` and ``Durability/fileAndFolder`` ask for.
    package var fsync: @Sendable (_ fd: Int32) -> Int32
    /// The file's data on stable storage when it returns: `F_FULLFSYNC` on Darwin (`fsync`
    /// where the file system refuses it), `fsync` elsewhere. What ``Durability/fullSync`` asks for.
    package var fullFsync: @Sendable (_ fd: Int32) -> Int32
    /// `fstat(fd, &st)`.
    package var fstat: @Sendable (_ fd: Int32, _ status: inout stat) -> Int32
    /// The size, allocation, mode, device and inode of the open file `fd`, or `nil` with
    /// `errno` set: `fstat` without the time stamps (every `fstat` of the write and read paths
    /// goes through it). On Linux a `statx` that asks for no times, because reading a
    /// file's times (since Linux 6.13) makes its next change take a fine-grained time stamp,
    /// and that makes the next append to every other file — the store's journal — dirty its
    /// inode: on ext4, every journal record written after `fstat`ing a temporary then pays for
    /// an inode update as well (the `cache-manager` suite's 1 KB set guards it).
    package var statusWithoutTimes: @Sendable (_ fd: Int32) -> FileStatus?
    /// `fchmod(fd, mode)`.
    package var fchmod: @Sendable (_ fd: Int32, _ mode: mode_t) -> Int32
    /// `rename(from, to)`. Replacing it turns ``allowsRootRelativeCalls`` off.
    package var rename: @Sendable (_ from: String, _ to: String) -> Int32 {
        didSet { allowsRootRelativeCalls = false }
    }
    /// `renameat2(fromFolder, from, toFolder, to, RENAME_NOREPLACE)` (Darwin: `renameatx_np`
    /// with `RENAME_EXCL`): a rename that fails with `EEXIST` rather than replace anything;
    /// `AT_FDCWD` for a path. `EINVAL`, `ENOSYS` or `ENOTSUP` where it is not supported.
    package var renameExclusive:
        @Sendable (_ fromFolder: Int32, _ from: String, _ toFolder: Int32, _ to: String) -> Int32
    /// `rmdir(path)`. Replacing it turns ``allowsRootRelativeCalls`` off.
    package var removeDirectory: @Sendable (_ path: String) -> Int32 {
        didSet { allowsRootRelativeCalls = false }
    }
    /// `unlink(path)`. Replacing it turns ``allowsRootRelativeCalls`` off.
    package var unlink: @Sendable (_ path: String) -> Int32 {
        didSet { allowsRootRelativeCalls = false }
    }
    /// `linkat(fromFolder, existing, toFolder, new, 0)`: a second name for a file (a snapshot
    /// layer kept under its epoch); `AT_FDCWD` for whole paths (see ``link(_:_:below:)``).
    package var linkAt: @Sendable (_ fromFolder: Int32, _ existing: String, _ toFolder: Int32, _ new: String) -> Int32
    /// `ftruncate(fd, length)`.
    package var ftruncate: @Sendable (_ fd: Int32, _ length: off_t) -> Int32
    /// `mkdir(path, mode)`. Replacing it turns ``allowsRootRelativeCalls`` off.
    package var mkdir: @Sendable (_ path: String, _ mode: mode_t) -> Int32 {
        didSet { allowsRootRelativeCalls = false }
    }
    /// `chmod(path, mode)`. Replacing it turns ``allowsRootRelativeCalls`` off.
    package var chmod: @Sendable (_ path: String, _ mode: mode_t) -> Int32 {
        didSet { allowsRootRelativeCalls = false }
    }
    /// `openat(folder, path, flags, mode)`: the root-relative twin of ``open`` (see
    /// ``allowsRootRelativeCalls``). Replacing it turns ``makesEntryCallsDirectly`` off.
    package var openAt: @Sendable (_ folder: Int32, _ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        didSet { makesEntryCallsDirectly = false }
    }
    /// `renameat(fromFolder, from, toFolder, to)`: the root-relative twin of ``rename``.
    /// Replacing it turns ``makesEntryCallsDirectly`` off.
    package var renameAt: @Sendable (_ fromFolder: Int32, _ from: String, _ toFolder: Int32, _ to: String) -> Int32 {
        didSet { makesEntryCallsDirectly = false }
    }
    /// `unlinkat(folder, path, flags)`: the root-relative twin of ``unlink`` and, with
    /// `AT_REMOVEDIR`, of ``removeDirectory``.
    package var unlinkAt: @Sendable (_ folder: Int32, _ path: String, _ flags: Int32) -> Int32
    /// `mkdirat(folder, path, mode)`: the root-relative twin of ``mkdir``.
    package var mkdirAt: @Sendable (_ folder: Int32, _ path: String, _ mode: mode_t) -> Int32
    /// `fchmodat(folder, path, mode, 0)`: the root-relative twin of ``chmod``.
    package var chmodAt: @Sendable (_ folder: Int32, _ path: String, _ mode: mode_t) -> Int32
    /// `faccessat(folder, path, mode, 0)`: whether a renamed temporary is still there (`F_OK`)
    /// below the root. Replacing it turns ``makesEntryCallsDirectly`` off.
    package var accessAt: @Sendable (_ folder: Int32, _ path: String, _ mode: Int32) -> Int32 {
        didSet { makesEntryCallsDirectly = false }
    }
    /// `flock(fd, operation)`: `LOCK_SH`, `LOCK_EX` or `LOCK_UN`, optionally with `LOCK_NB`.
    package var flock: @Sendable (_ fd: Int32, _ operation: Int32) -> Int32
    /// Whether the path calls (``open``, ``rename``, ``unlink``, ``removeDirectory``,
    /// ``mkdir``, ``chmod``) are the operating system's own, so that a store may make every
    /// change below its root through a descriptor of the root instead (``openAt``,
    /// ``renameAt``, ``unlinkAt``, ``mkdirAt``, ``chmodAt``, ``renameExclusive``; see
    /// ``AtomicFile/Root``): the kernel walks only the components below the root, and a root
    /// renamed away is still the folder the store works in. Assigning any of those path
    /// closures clears it, so a test's replacement still sees every call, by its whole path.
    /// (The entry file's own `openat`, `renameat` and `faccessat` on the write and read paths
    /// are made directly while ``makesEntryCallsDirectly``.)
    package private(set) var allowsRootRelativeCalls = true
    /// Whether the write and read paths may make the entry file's `openat`, `renameat` and
    /// `faccessat` below the root themselves, from the path's own bytes, rather than through
    /// ``openAt``, ``renameAt`` and ``accessAt``: true until one of those is replaced, so a
    /// test's replacement sees those calls too. Through the closures, each call makes the
    /// relative path's `String` (a heap allocation past 15 bytes) and calls a closure, a
    /// noticeable share of a small set or get (the `cache-manager` suite's 1 KB set and get
    /// guard it).
    package private(set) var makesEntryCallsDirectly = true

    /// The operating system's own calls.
    package static let posix = posixFileSystem

    /// This file system with ``allowsRootRelativeCalls`` on again, though its path calls were
    /// replaced: for a test that replaced their root-relative twins alike (a fault injector),
    /// so that a store works through its root's descriptor as in production, and the test
    /// still sees every call.
    package func allowingRootRelativeCalls() -> FileSystem {
        var copy = self
        copy.allowsRootRelativeCalls = true
        return copy
    }
}

extension FileSystem {
    /// `count` bytes of the file open as `fd` at `offset`, read with `pread` — threads reading
    /// one descriptor at once move no shared position; `nil` when they cannot all be read
    /// (an error, or the file ends first).
    ///
    /// - Complexity: O(count); a `pread` per chunk the kernel returns.
    package func readBytes(of fd: Int32, at offset: Int, count: Int) -> [UInt8]? {
        if count == 0 { return [] }
        var whole = true
        let bytes = [UInt8].uninitialized(capacity: count) { buffer in
            var done = 0
            while done < buffer.count {
                let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
                if n > 0 {
                    done += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    whole = false
                    break
                }
            }
            return done
        }
        return whole ? bytes : nil
    }

    /// Creates the one folder `path` with mode 0700, whatever the umask (its parent must
    /// exist: a folder deleted meanwhile stays deleted).
    ///
    /// - Returns: Whether it was made; else `errno` says why (`EEXIST` when something is there).
    /// - Complexity: One `mkdir`, and a `chmod` when it was made.
    package func makeDirectory(_ path: String) -> Bool {
        guard mkdir(path, 0o700) == 0 else { return false }
        _ = chmod(path, 0o700)  // the umask may have stripped owner bits
        return true
    }

    /// Creates `path` and any missing parents with mode 0700, whatever the umask.
    ///
    /// - Throws: ``StorageError`` (`permissionDenied`, `readOnlyFileSystem`, `diskFull`,
    ///   `fileSystem`) when a folder cannot be created.
    /// - Complexity: Blocking file I/O: one `mkdir` per missing component.
    package func makeDirectories(_ path: String) throws {
        if makeDirectory(path) { return }
        let code = errno
        switch code {
        case EEXIST:
            return
        case ENOENT:
            guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else {
                throw StorageError.posix("mkdir", path: path, errno: code)
            }
            try makeDirectories(String(path[..<slash]))
            if !makeDirectory(path) && errno != EEXIST {
                throw StorageError.posix("mkdir", path: path, errno: errno)
            }
        default:
            throw StorageError.posix("mkdir", path: path, errno: code)
        }
    }

    /// Opens `path` with `flags | O_CREAT`, creating it 0600 whatever the umask: a file this
    /// call creates is private to its owner even when the umask stripped every bit (which
    /// would make it 0000, and unopenable by its own non-root owner next time).
    ///
    /// `root`: through the store's root descriptor (`openat`), as ``open(_:_:_:below:)``.
    ///
    /// - Returns: The descriptor, or -1 with `errno` set, as `open`.
    /// - Complexity: One `open` and one `fstat`; one `fchmod` when the mode is not 0600.
    package func openCreatingPrivately(_ path: String, _ flags: Int32, below root: AtomicFile.Root? = nil) -> Int32 {
        let fd = open(path, flags | O_CREAT, 0o600, below: root)
        guard fd >= 0 else { return fd }
        var status = stat()
        if fstat(fd, &status) == 0, status.st_mode & 0o777 != 0o600 { _ = fchmod(fd, 0o600) }
        // Locks, counters and journals coordinate the app with its extensions, which may run
        // while the device is locked (docs/Platforms.md, "Data Protection").
        _ = archivist_allow_access_after_first_unlock(fd)
        return fd
    }

    /// Reads from `fd`'s position into `buffer` until it is full or the file ends, retrying
    /// `EINTR`: the one read loop of the storage layer and the stores.
    ///
    /// - Returns: How many bytes were read (fewer than `buffer.count` when the file ended
    ///   first, e.g. it shrank under the reader, whose own checks then catch it).
    /// - Throws: ``StorageError`` for `read` at `path` with the failure's `errno`.
    package func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var count = 0
        while count < buffer.count {
            let n = read(fd, base + count, buffer.count - count)
            if n > 0 {
                count += n
            } else if n == 0 {
                break
            } else if errno != EINTR {
                throw StorageError.posix("read", path: path, errno: errno)
            }
        }
        return count
    }

    /// Syncs `fd` as `durability` asks (``fullFsync`` for ``Durability/fullSync``, else
    /// ``fsync``); 0 when it asks for nothing.
    package func sync(_ fd: Int32, for durability: Durability) -> Int32 {
        switch durability {
        case .none: 0
        case .file, .fileAndFolder: fsync(fd)
        case .fullSync: fullFsync(fd)
        }
    }

    /// Opens a folder — from `root` when one is given, else by its whole path — and flushes
    /// it, so that a rename inside it survives a power loss.
    ///
    /// - Complexity: Blocking file I/O.
    package func syncDirectory(
        _ path: String,
        below root: AtomicFile.Root? = nil,
        durability: Durability = .fileAndFolder
    ) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC, 0, below: root)
        guard fd >= 0 else { throw StorageError.posix("open folder", path: path, errno: errno) }
        defer { _ = close(fd) }
        if sync(fd, for: durability) != 0 {
            let code = errno
            // Some file systems cannot sync a folder; that is not a failed write.
            if code != EINVAL && code != ENOTSUP { throw StorageError.posix("fsync folder", path: path, errno: code) }
        }
    }
}

/// The real system calls behind ``FileSystem/posix``. Declared outside the type so that each
/// name below resolves to the C function of Glibc or Darwin, not to the `FileSystem` property
/// of the same name.
///
/// Paths go in through `withCString`: a `String` passed straight to a C parameter is converted
/// through `utf8CString`, a fresh array copy of the path each call (one for `open`, two for
/// `rename`), while `withCString` hands over a native string's own nul-terminated storage
/// (the `cache-manager` suite's 1 KB set and get guard it).
private let posixFileSystem = FileSystem(
    open: { path, flags, mode in path.withCString { open($0, flags, mode) } },
    close: { fd in close(fd) },
    write: { fd, buffer, count in write(fd, buffer, count) },
    writev: { fd, vectors, count in writev(fd, vectors, count) },
    pwrite: { fd, buffer, count, offset in pwrite(fd, buffer, count, offset) },
    read: { fd, buffer, count in read(fd, buffer, count) },
    pread: { fd, buffer, count, offset in pread(fd, buffer, count, offset) },
    fsync: { fd in
        #if canImport(Darwin)
        // fsync on Apple platforms only reaches the drive's cache, which may write out of
        // order; a barrier keeps this file's data ahead of the rename that follows. Some file
        // systems refuse it, so fall back to fsync.
        fcntl(fd, F_BARRIERFSYNC) == 0 ? 0 : fsync(fd)
        #else
        fsync(fd)
        #endif
    },
    fullFsync: { fd in
        #if canImport(Darwin)
        // F_FULLFSYNC asks the drive to write its cache out before it answers.
        fcntl(fd, F_FULLFSYNC) == 0 ? 0 : fsync(fd)
        #else
        fsync(fd)
        #endif
    },
    fstat: { fd, status in fstat(fd, &status) },
    statusWithoutTimes: { fd in
        var status = archivist_file_sizes()
        guard archivist_fstat_sizes(fd, &status) == 0 else { return nil }
        return FileStatus(
            sizes: AtomicFile.Sizes(logical: status.size, allocated: status.blocks &* 512),
            mode: mode_t(status.mode),
            device: status.device,
            inode: status.inode
        )
    },
    fchmod: { fd, mode in fchmod(fd, mode) },
    rename: { from, to in from.withCString { from in to.withCString { rename(from, $0) } } },
    renameExclusive: { fromFolder, from, toFolder, to in
        from.withCString { from in to.withCString { archivist_rename_exclusive(fromFolder, from, toFolder, $0) } }
    },
    removeDirectory: { path in path.withCString { rmdir($0) } },
    unlink: { path in path.withCString { unlink($0) } },
    linkAt: { fromFolder, existing, toFolder, new in
        existing.withCString { existing in new.withCString { linkat(fromFolder, existing, toFolder, $0, 0) } }
    },
    ftruncate: { fd, length in ftruncate(fd, length) },
    mkdir: { path, mode in path.withCString { mkdir($0, mode) } },
    chmod: { path, mode in path.withCString { chmod($0, mode) } },
    openAt: { folder, path, flags, mode in path.withCString { openat(folder, $0, flags, mode) } },
    renameAt: { fromFolder, from, toFolder, to in
        from.withCString { from in to.withCString { renameat(fromFolder, from, toFolder, $0) } }
    },
    unlinkAt: { folder, path, flags in path.withCString { unlinkat(folder, $0, flags) } },
    mkdirAt: { folder, path, mode in path.withCString { mkdirat(folder, $0, mode) } },
    chmodAt: { folder, path, mode in path.withCString { fchmodat(folder, $0, mode, 0) } },
    accessAt: { folder, path, mode in path.withCString { faccessat(folder, $0, mode, 0) } },
    flock: { fd, operation in flock(fd, operation) }
)

/// What ``FileSystem/statusWithoutTimes`` reports of an open file.
package struct FileStatus: Sendable {
    /// Its logical and allocated sizes.
    package var sizes: AtomicFile.Sizes
    /// `st_mode`: its type and permission bits.
    package var mode: mode_t
    /// `st_dev`: the device holding it.
    package var device: UInt64
    /// `st_ino`: its inode number.
    package var inode: UInt64
}
