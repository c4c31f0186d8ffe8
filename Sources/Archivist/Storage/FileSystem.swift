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
    /// `open(path, flags, mode)`.
    package var open: @Sendable (_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32
    /// `close(fd)`.
    package var close: @Sendable (_ fd: Int32) -> Int32
    /// `write(fd, buffer, count)`.
    package var write: @Sendable (_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int
    /// `pwrite(fd, buffer, count, offset)`.
    package var pwrite: @Sendable (_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, _ offset: off_t) -> Int
    /// `read(fd, buffer, count)`.
    package var read: @Sendable (_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int
    /// A full flush of the file to stable storage: `F_FULLFSYNC` on Darwin, `fsync` elsewhere.
    package var fsync: @Sendable (_ fd: Int32) -> Int32
    /// `fstat(fd, &st)`.
    package var fstat: @Sendable (_ fd: Int32, _ status: inout stat) -> Int32
    /// `fchmod(fd, mode)`.
    package var fchmod: @Sendable (_ fd: Int32, _ mode: mode_t) -> Int32
    /// `rename(from, to)`.
    package var rename: @Sendable (_ from: String, _ to: String) -> Int32
    /// `unlink(path)`.
    package var unlink: @Sendable (_ path: String) -> Int32
    /// `ftruncate(fd, length)`.
    package var ftruncate: @Sendable (_ fd: Int32, _ length: off_t) -> Int32
    /// `mkdir(path, mode)`.
    package var mkdir: @Sendable (_ path: String, _ mode: mode_t) -> Int32
    /// `chmod(path, mode)`.
    package var chmod: @Sendable (_ path: String, _ mode: mode_t) -> Int32

    /// The operating system's own calls.
    package static let posix = FileSystem(
        open: { path, flags, mode in
            #if canImport(Glibc)
            Glibc.open(path, flags, mode)
            #else
            Darwin.open(path, flags, mode)
            #endif
        },
        close: { fd in
            #if canImport(Glibc)
            Glibc.close(fd)
            #else
            Darwin.close(fd)
            #endif
        },
        write: { fd, buffer, count in
            #if canImport(Glibc)
            Glibc.write(fd, buffer, count)
            #else
            Darwin.write(fd, buffer, count)
            #endif
        },
        pwrite: { fd, buffer, count, offset in
            #if canImport(Glibc)
            Glibc.pwrite(fd, buffer, count, offset)
            #else
            Darwin.pwrite(fd, buffer, count, offset)
            #endif
        },
        read: { fd, buffer, count in
            #if canImport(Glibc)
            Glibc.read(fd, buffer, count)
            #else
            Darwin.read(fd, buffer, count)
            #endif
        },
        fsync: { fd in
            #if canImport(Glibc)
            Glibc.fsync(fd)
            #else
            // fsync on Apple platforms only reaches the drive's cache; F_FULLFSYNC asks the
            // drive to flush it. Some file systems refuse it, so fall back to fsync.
            Darwin.fcntl(fd, F_FULLFSYNC) == 0 ? 0 : Darwin.fsync(fd)
            #endif
        },
        fstat: { fd, status in
            #if canImport(Glibc)
            Glibc.fstat(fd, &status)
            #else
            Darwin.fstat(fd, &status)
            #endif
        },
        fchmod: { fd, mode in
            #if canImport(Glibc)
            Glibc.fchmod(fd, mode)
            #else
            Darwin.fchmod(fd, mode)
            #endif
        },
        rename: { from, to in
            #if canImport(Glibc)
            Glibc.rename(from, to)
            #else
            Darwin.rename(from, to)
            #endif
        },
        unlink: { path in
            #if canImport(Glibc)
            Glibc.unlink(path)
            #else
            Darwin.unlink(path)
            #endif
        },
        ftruncate: { fd, length in
            #if canImport(Glibc)
            Glibc.ftruncate(fd, length)
            #else
            Darwin.ftruncate(fd, length)
            #endif
        },
        mkdir: { path, mode in
            #if canImport(Glibc)
            Glibc.mkdir(path, mode)
            #else
            Darwin.mkdir(path, mode)
            #endif
        },
        chmod: { path, mode in
            #if canImport(Glibc)
            Glibc.chmod(path, mode)
            #else
            Darwin.chmod(path, mode)
            #endif
        }
    )
}

extension FileSystem {
    /// Creates `path` and any missing parents with mode 0700, whatever the umask.
    ///
    /// - Throws: ``CacheError`` (`permissionDenied`, `readOnlyFileSystem`, `diskFull`,
    ///   `fileSystem`) when a folder cannot be created.
    /// - Complexity: Blocking file I/O: one `mkdir` per missing component.
    package func makeDirectories(_ path: String) throws {
        if mkdir(path, 0o700) == 0 {
            _ = chmod(path, 0o700)   // the umask may have stripped owner bits
            return
        }
        let code = errno
        switch code {
        case EEXIST:
            return
        case ENOENT:
            guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else {
                throw CacheError.posix("mkdir", path: path, errno: code)
            }
            try makeDirectories(String(path[..<slash]))
            if mkdir(path, 0o700) == 0 {
                _ = chmod(path, 0o700)
            } else if errno != EEXIST {
                throw CacheError.posix("mkdir", path: path, errno: errno)
            }
        default:
            throw CacheError.posix("mkdir", path: path, errno: code)
        }
    }

    /// Opens a folder and flushes it, so that a rename inside it survives a power loss.
    ///
    /// - Complexity: Blocking file I/O.
    package func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC, 0)
        guard fd >= 0 else { throw CacheError.posix("open folder", path: path, errno: errno) }
        defer { _ = close(fd) }
        if fsync(fd) != 0 {
            let code = errno
            // Some file systems cannot sync a folder; that is not a failed write.
            if code != EINVAL && code != ENOTSUP { throw CacheError.posix("fsync folder", path: path, errno: code) }
        }
    }
}
