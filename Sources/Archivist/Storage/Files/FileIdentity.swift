#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file a path named when it was read — device, inode and type — so that a later change
/// under the store's lock can tell whether the path still names that very file, or whether
/// another process replaced it meanwhile (a rename over it, or an unlink and a new file).
///
/// A file opened for the read stays open (``pin``) until its reader calls ``unpin(_:)``, after
/// any removal judged on the identity, so its inode number cannot be handed to a new file in
/// the meantime (an open inode is never freed). A symbolic link is identified by `lstat`
/// alone; a replacement entry is a regular file, so its type tells it apart even if it reused
/// the link's inode.
///
/// A value, not an object: every cache read makes one, and an object (with the file system
/// it closes its descriptor through) costs an allocation and a train of retains and releases
/// (the `cache-manager` suite's 1 KB get guards it).
package struct FileIdentity {
    private var device: UInt64
    private var inode: UInt64
    private var type: mode_t
    /// The descriptor pinning the inode (-1 for none); its owner closes it with ``unpin(_:)``.
    private(set) var pin: Int32
    /// Whether `device`, `inode` and `type` are known; a file read without an `fstat` (see
    /// ``init(pinningUnexamined:)``) is examined only when a caller needs them.
    private(set) var isExamined = true

    /// The identity of the file open as `fd`, which stays open until ``unpin(_:)``.
    init(pinning fd: Int32, status: FileStatus) {
        self.init(device: status.device, inode: status.inode, type: status.mode & S_IFMT, pin: fd)
    }

    /// The identity of the file open as `fd`, which stays open until ``unpin(_:)``, not yet
    /// examined: a read that knew the file's size skipped the `fstat` (the `cache-shapes`
    /// suite's 100 KB gets and the `cache-manager` suite's 1 KB gets guard it). ``examine(_:)``
    /// makes it up before the identity is compared; unexamined, it is the same as no other.
    init(pinningUnexamined fd: Int32) {
        self.init(device: 0, inode: 0, type: 0, pin: fd)
        isExamined = false
    }

    private init(device: UInt64, inode: UInt64, type: mode_t, pin: Int32) {
        (self.device, self.inode, self.type, self.pin) = (device, inode, type, pin)
    }

    /// Reads the pinned file's status through `fileSystem` if it is not known yet; returns it
    /// when it was read now, `nil` when it was known already or cannot be read.
    @discardableResult
    mutating func examine(_ fileSystem: FileSystem) -> FileStatus? {
        guard !isExamined, pin >= 0, let status = fileSystem.statusWithoutTimes(pin) else { return nil }
        (device, inode, type, isExamined) = (status.device, status.inode, status.mode & S_IFMT, true)
        return status
    }

    /// The identity of what is at `path` now (a final symbolic link not followed), looked up
    /// from `root` when given; `nil` when there is nothing, or when it is not of `type`
    /// (`S_IFLNK`, …) if one is given.
    static func lstatting(_ path: String, below root: AtomicFile.Root? = nil, type: mode_t? = nil) -> FileIdentity? {
        var status = stat()
        guard lstat(path, below: root, &status) == 0, type.map({ status.st_mode & S_IFMT == $0 }) ?? true else {
            return nil
        }
        return FileIdentity(
            device: UInt64(truncatingIfNeeded: status.st_dev),
            inode: UInt64(truncatingIfNeeded: status.st_ino),
            type: status.st_mode & S_IFMT,
            pin: -1
        )
    }

    /// The identity of what `path` names now, a final symbolic link followed (as opening it
    /// would); `nil` when there is nothing.
    static func statting(_ path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileIdentity(
            device: UInt64(truncatingIfNeeded: status.st_dev),
            inode: UInt64(truncatingIfNeeded: status.st_ino),
            type: status.st_mode & S_IFMT,
            pin: -1
        )
    }

    /// The device and inode numbers: what a table of files keys them by, so that every
    /// spelling of one file's path — a symbolic link, another case or Unicode normalization
    /// on a volume that ignores them — finds one entry.
    struct Key: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    /// This file's ``Key``.
    var key: Key { Key(device: device, inode: inode) }

    /// Closes the pinning descriptor, if any, through `fileSystem` (the one that opened it).
    mutating func unpin(_ fileSystem: FileSystem) {
        if pin >= 0 { _ = fileSystem.close(pin) }
        pin = -1
    }

    /// Whether `other` is the same file.
    func isSame(as other: FileIdentity) -> Bool {
        isExamined && other.isExamined && device == other.device && inode == other.inode && type == other.type
    }
}
