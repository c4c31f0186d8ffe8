#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The path calls of the storage layer made below a store's root: through the root's
/// descriptor (the `*at` twins) when a ``AtomicFile/Root`` is given, by the whole path
/// otherwise. Every path handed over with a root starts with the root's path and a `/` (or is
/// the root's path itself).
///
/// The callers pass `nil` for a file system whose path calls a test replaced (see
/// ``FileSystem/allowsRootRelativeCalls``), and for a root that was removed: a root made again
/// at its path is then used at its path.
///
/// ```swift
/// let root = fileSystem.allowsRootRelativeCalls ? store.root : nil
/// _ = fileSystem.unlink(store.path(of: key), below: root)   // unlinkat(root, "folder/name", 0)
/// ```
extension FileSystem {
    /// `open(path)`, or `openat` from `root`.
    package func open(_ path: String, _ flags: Int32, _ mode: mode_t, below root: AtomicFile.Root?) -> Int32 {
        guard let root else { return open(path, flags, mode) }
        return openAt(root.descriptor, root.relative(path), flags, mode)
    }

    /// `rename(from, to)`, or `renameat` from `root`, both names below it.
    package func rename(_ from: String, _ to: String, below root: AtomicFile.Root?) -> Int32 {
        guard let root else { return rename(from, to) }
        return renameAt(root.descriptor, root.relative(from), root.descriptor, root.relative(to))
    }

    /// ``renameExclusive`` of two paths, from `root` or by the whole paths.
    package func renameExclusive(_ from: String, _ to: String, below root: AtomicFile.Root?) -> Int32 {
        guard let root else { return renameExclusive(AT_FDCWD, from, AT_FDCWD, to) }
        return renameExclusive(root.descriptor, root.relative(from), root.descriptor, root.relative(to))
    }

    /// `link(existing, new)`, or `linkat` from `root`, both names below it: a store renamed
    /// away while open keeps its snapshot layers in the folder it works in.
    package func link(_ existing: String, _ new: String, below root: AtomicFile.Root?) -> Int32 {
        guard let root else { return linkAt(AT_FDCWD, existing, AT_FDCWD, new) }
        return linkAt(root.descriptor, root.relative(existing), root.descriptor, root.relative(new))
    }

    /// `unlink(path)`, or `unlinkat` from `root`.
    package func unlink(_ path: String, below root: AtomicFile.Root?) -> Int32 {
        guard let root else { return unlink(path) }
        return unlinkAt(root.descriptor, root.relative(path), 0)
    }

    /// `rmdir(path)`, or `unlinkat(…, AT_REMOVEDIR)` from `root`.
    package func removeDirectory(_ path: String, below root: AtomicFile.Root?) -> Int32 {
        guard let root else { return removeDirectory(path) }
        return unlinkAt(root.descriptor, root.relative(path), AT_REMOVEDIR)
    }

    /// ``makeDirectory(_:)`` from `root`: the one folder `path`, mode 0700 whatever the umask.
    ///
    /// - Returns: Whether it was made; else `errno` says why.
    package func makeDirectory(_ path: String, below root: AtomicFile.Root?) -> Bool {
        guard let root else { return makeDirectory(path) }
        let relative = root.relative(path)
        guard mkdirAt(root.descriptor, relative, 0o700) == 0 else { return false }
        _ = chmodAt(root.descriptor, relative, 0o700)  // the umask may have stripped owner bits
        return true
    }

    /// ``makeDirectories(_:)`` from `root`: `path` and its missing parents below the root, mode
    /// 0700. The root itself is never made: in a root that was removed, even its first folder
    /// cannot be made, and this throws `ENOENT` (the caller may then go by the whole path).
    /// A parent that vanishes again before its child is made (another process's clear moved
    /// it into the trash) is made again, up to ``folderRemakes`` times: that `ENOENT` is not a
    /// removed root, and sent by the path, the write would land in no folder of a root renamed
    /// away.
    ///
    /// - Throws: ``StorageError`` as ``makeDirectories(_:)``.
    /// - Complexity: One `mkdirat` per missing component (per attempt).
    package func makeDirectories(_ path: String, below root: AtomicFile.Root?) throws {
        guard let root else { return try makeDirectories(path) }
        if makeDirectory(path, below: root) { return }
        let code = errno
        switch code {
        case EEXIST:
            return
        case ENOENT:
            guard let parent = AtomicFile.folder(of: path), parent.utf8.count >= root.prefixLength else {
                throw StorageError.posix("mkdir", path: path, errno: code)  // the root itself is gone
            }
            var remakes = 0
            while true {
                try makeDirectories(parent, below: root)
                if makeDirectory(path, below: root) || errno == EEXIST { return }
                let code = errno
                guard code == ENOENT, remakes < Self.folderRemakes else {
                    throw StorageError.posix("mkdir", path: path, errno: code)
                }
                remakes += 1
            }
        default:
            throw StorageError.posix("mkdir", path: path, errno: code)
        }
    }

    /// How many times ``makeDirectories(_:below:)`` makes a folder's parent again after it
    /// vanished under it.
    static let folderRemakes = 8
}

extension AtomicFile.Root {
    /// `path`'s part below the folder (`.` for the folder's own path).
    package func relative(_ path: String) -> String {
        let bytes = path.utf8
        guard bytes.count > prefixLength else { return "." }
        return String(decoding: bytes.dropFirst(prefixLength), as: UTF8.self)
    }

    /// Whether the folder is still the store's whose internal folder is `internalPath`: it
    /// still has a name (``isLinked``), or — where a link count does not tell — it still holds
    /// that internal folder, which a removed folder cannot. A root renamed away is still the
    /// store's; a removed one is not, even when a new folder was made at its path.
    ///
    /// - Complexity: An `fstat`, and an `fstatat` where the first does not tell.
    func holdsStore(internalPath: String) -> Bool {
        if isLinked { return true }
        var status = stat()
        return lstat(internalPath, &status) == 0
    }

    /// This root while it is still the store's whose internal folder is `internalPath`
    /// (``holdsStore(internalPath:)``), else `nil`: the root every call below it goes through,
    /// or none once it was removed, so that the path decides.
    ///
    /// - Complexity: as ``holdsStore(internalPath:)``.
    func working(internalPath: String) -> AtomicFile.Root? {
        holdsStore(internalPath: internalPath) ? self : nil
    }

    /// `lstat` of `path` from the folder (a final symbolic link not followed).
    func lstat(_ path: String, _ status: inout stat) -> Int32 {
        relative(path).withCString { fstatat(descriptor, $0, &status, AT_SYMLINK_NOFOLLOW) }
    }
}

/// `lstat(path)`, from `root` when one is given.
func lstat(_ path: String, below root: AtomicFile.Root?, _ status: inout stat) -> Int32 {
    if let root { return root.lstat(path, &status) }
    return lstat(path, &status)
}

/// Opens the folder at `path` for reading its entries (`O_DIRECTORY`), from `root` when one
/// is given: the direct call the walks over folders make (not through ``FileSystem``, as their
/// `opendir` never was).
///
/// - Returns: The descriptor, or -1 with `errno` set.
func openFolder(_ path: String, below root: AtomicFile.Root?, noFollow: Bool = false) -> Int32 {
    let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (noFollow ? O_NOFOLLOW : 0)
    guard let root else { return open(path, flags) }
    return root.relative(path).withCString { openat(root.descriptor, $0, flags) }
}

/// Runs `body` below `root`; when it found nothing there (`false`) and the folder `root` opened
/// is no longer the store's (its `internalPath` gone: the root was removed), runs it again by
/// the whole path. Without a root, by the path alone.
///
/// - Returns: What the last run of `body` returned.
/// - Complexity: `body` once, or twice and an `fstat` when the first finds nothing.
func belowRootOrByPath(
    _ root: AtomicFile.Root?,
    internalPath: String,
    _ body: (AtomicFile.Root?) throws -> Bool
) rethrows -> Bool {
    guard let root else { return try body(nil) }
    if try body(root) { return true }
    return root.holdsStore(internalPath: internalPath) ? false : try body(nil)
}
