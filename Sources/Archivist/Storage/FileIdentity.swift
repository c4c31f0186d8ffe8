#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file a path named when it was read — device, inode and type — so that a later change
/// under the store's lock can tell whether the path still names that very file, or whether
/// another process replaced it meanwhile (a rename over it, or an unlink and a new file).
///
/// A file opened for the read stays open as long as its identity lives, so its inode number
/// cannot be handed to a new file in the meantime (an open inode is never freed). A symbolic
/// link is identified by `lstat` alone; a replacement entry is a regular file, so its type
/// tells it apart even if it reused the link's inode.
package final class FileIdentity {
    private let device: UInt64
    private let inode: UInt64
    private let type: mode_t
    /// The descriptor pinning the inode (-1 for none), closed with the identity.
    private let pin: Int32
    private let fileSystem: FileSystem

    /// The identity of the file open as `fd`, which the identity now owns and closes.
    init(owning fd: Int32, status: stat, fileSystem: FileSystem) {
        device = UInt64(truncatingIfNeeded: status.st_dev)
        inode = UInt64(truncatingIfNeeded: status.st_ino)
        type = status.st_mode & S_IFMT
        pin = fd
        self.fileSystem = fileSystem
    }

    /// The identity of what is at `path` now (a final symbolic link not followed); `nil`
    /// when there is nothing, or when it is not of `type` (`S_IFLNK`, …) if one is given.
    static func lstatting(_ path: String, type: mode_t? = nil) -> FileIdentity? {
        var status = stat()
        guard lstat(path, &status) == 0, type.map({ status.st_mode & S_IFMT == $0 }) ?? true else { return nil }
        return FileIdentity(owning: -1, status: status, fileSystem: .posix)
    }

    deinit {
        if pin >= 0 { _ = fileSystem.close(pin) }
    }

    /// Whether `other` is the same file.
    func isSame(as other: FileIdentity) -> Bool {
        device == other.device && inode == other.inode && type == other.type
    }
}
