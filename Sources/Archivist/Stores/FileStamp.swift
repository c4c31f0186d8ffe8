import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What tells one version of a file from another without reading it: the file's identity
/// (device and inode), size and modification time to the nanosecond — one `stat`.
///
/// Every write of a ``PlistStore`` file replaces it by a rename, so a new version is a new
/// inode; but a file system may hand a freed inode number straight to the next file, and it
/// stamps times from a clock that ticks only every few milliseconds, so two versions written
/// within one tick could share a stamp. Writers therefore make the modification times of the
/// versions they write strictly increasing (``PlistStore``'s writes call
/// ``makeNewer(path:than:)`` under the file's lock): a stamp never comes back, and a reader
/// that sees its remembered stamp has the current version.
struct FileStamp: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var seconds: Int64
    var nanoseconds: Int64

    init(_ status: stat) {
        device = UInt64(truncatingIfNeeded: status.st_dev)
        inode = UInt64(truncatingIfNeeded: status.st_ino)
        size = Int64(status.st_size)
        #if canImport(Darwin)
        seconds = Int64(status.st_mtimespec.tv_sec)
        nanoseconds = Int64(status.st_mtimespec.tv_nsec)
        #else
        seconds = Int64(status.st_mtim.tv_sec)
        nanoseconds = Int64(status.st_mtim.tv_nsec)
        #endif
    }

    /// Whether this version was modified later than `other` was.
    func isModified(after other: FileStamp) -> Bool {
        (seconds, nanoseconds) > (other.seconds, other.nanoseconds)
    }

    /// The stamp of the file at `url`, or `nil` when there is none.
    ///
    /// - Throws: ``StoreError`` (`permissionDenied`, `ioFailed`) naming the file.
    /// - Complexity: O(1): one `stat`.
    static func of(_ url: URL) throws -> FileStamp? {
        var status = stat()
        guard stat(url.path, &status) != 0 else { return FileStamp(status) }
        let code = errno
        if code == ENOENT || code == ENOTDIR { return nil }
        throw StoreFile.storeError(StorageError.posix("stat", path: url.path, errno: code), "cannot read", url)
    }

    /// Gives the file at `url`, just written under its lock, a modification time later than
    /// `previous` (the version it replaced) if the clock did not, and returns its stamp, or
    /// `nil` when the file cannot be examined or stamped (the write itself stands; the caller
    /// then remembers no stamp, so nothing trusts one).
    ///
    /// - Complexity: O(1): one or two `stat`s, and a `utimensat` when the clock lagged.
    static func makeNewer(_ url: URL, than previous: FileStamp?) -> FileStamp? {
        guard let written = try? of(url) else { return nil }
        guard let previous, !written.isModified(after: previous) else { return written }
        var later = previous
        later.nanoseconds += 1
        if later.nanoseconds == 1_000_000_000 {
            later.seconds += 1
            later.nanoseconds = 0
        }
        // Access and modification time both (the access time of a plist means nothing here,
        // and `UTIME_OMIT` is a macro Swift does not import on Linux).
        let time = timespec(tv_sec: time_t(later.seconds), tv_nsec: Int(later.nanoseconds))
        var times = [time, time]
        guard utimensat(AT_FDCWD, url.path, &times, 0) == 0 else { return nil }
        return try? of(url)
    }
}
