import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A descriptor of the folder at `url` (`O_RDONLY | O_DIRECTORY`), as a store holds its root's;
/// the caller closes it.
func openFolder(_ url: URL) throws -> Int32 {
    let fd = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    try #require(fd >= 0)
    return fd
}

/// The key of `parameter`'s entry in a folder named, as a cache type's, by the MD5 of `folder`.
func hashedKey(_ folder: String, _ parameter: String) -> DiskKey {
    DiskKey(folder: FolderPath([MD5.hexDigest(of: folder)]), name: EntryName(parameter: parameter))
}

/// A symbolic link `<dir>-<name>` beside `dir`, pointing at it (made again if it exists), kept
/// apart (``DiskStore/keepApart(_:)``): a store opened through it is apart from the process's
/// other stores of `dir`, which the library otherwise shares per folder, so it acts as another
/// process's as far as the lock, the shared counters and the journal go.
func linkedFolder(_ dir: URL, _ name: String) throws -> URL {
    let link = dir.deletingLastPathComponent().appendingPathComponent(dir.lastPathComponent + "-" + name)
    try? FileManager.default.removeItem(at: link)
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: dir)
    DiskStore.keepApart(link)
    return link
}

/// A store of `dir` apart from the process's others (see ``linkedFolder(_:_:)``).
func storeThroughLink(_ dir: URL, _ name: String, fileSystem: FileSystem = .posix) throws -> DiskStore {
    try DiskStore.open(at: linkedFolder(dir, name), fileSystem: fileSystem)
}

/// The permission bits of the file or folder at `path`.
func permissions(_ path: String) -> mode_t {
    var status = stat()
    return lstat(path, &status) == 0 ? status.st_mode & 0o777 : 0
}

/// Makes `url` refuse new files: `chmod 0500` when not root; as root on Linux (where chmod
/// does not bind), the immutable attribute. Returns a closure that undoes it.
func makeReadOnly(_ url: URL) throws -> () -> Void {
    #if os(Linux)
    if geteuid() == 0 {
        let fd = open(url.path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw StorageError.posix("open", path: url.path, errno: errno) }
        defer { close(fd) }
        var flags: Int = 0
        let getFlags: UInt = 0x8008_6601  // FS_IOC_GETFLAGS
        let setFlags: UInt = 0x4008_6602  // FS_IOC_SETFLAGS
        guard ioctl(fd, getFlags, &flags) == 0 else {
            throw StorageError.posix("FS_IOC_GETFLAGS", path: url.path, errno: errno)
        }
        var immutable = flags | 0x10  // FS_IMMUTABLE_FL
        guard ioctl(fd, setFlags, &immutable) == 0 else {
            throw StorageError.posix("FS_IOC_SETFLAGS", path: url.path, errno: errno)
        }
        let path = url.path
        return {
            let fd = open(path, O_RDONLY | O_DIRECTORY)
            var restored = flags
            _ = ioctl(fd, setFlags, &restored)
            close(fd)
        }
    }
    #endif
    chmod(url.path, 0o500)
    let path = url.path
    return { chmod(path, 0o700) }
}

/// Whether a new file can be created in `url` right now.
func canCreateFile(in url: URL) -> Bool {
    let probe = url.path + "/probe-\(UUID().uuidString)"
    let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    guard fd >= 0 else { return false }
    close(fd)
    unlink(probe)
    return true
}
