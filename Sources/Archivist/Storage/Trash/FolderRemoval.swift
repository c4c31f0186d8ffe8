#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Deletes everything inside a folder with a walk of our own over POSIX calls (`openat`,
/// `fdopendir`, `readdir`, `unlinkat`), the trash's deletion.
///
/// Why not `FileManager`: a worker process that exits while its trash queue deletes (as the
/// flush tests' no-flush child does on purpose) left FoundationEssentials' `FileManager` alive
/// at exit, whose weak-reference side table LeakSanitizer reports; and its recursive walk
/// follows each folder's descent on the thread's stack, where this walk keeps its levels in an
/// array, so any depth fits a 512 KiB thread stack.
///
/// The walk:
/// - never follows a symbolic link: a link (to a file or a folder, inside or outside the
///   folder) is unlinked, its target untouched; folders are opened with `O_NOFOLLOW`, the
///   folder itself included (given with or without a trailing slash);
/// - stays on the folder's device: a file system mounted inside is not entered (`EXDEV`);
/// - takes an entry that vanishes under it (`ENOENT`: another process emptying the same trash)
///   as deleted;
/// - reads a folder again only when entries may be left: deleting while reading may make
///   `readdir` skip entries (APFS, some NFS and FreeBSD file systems), so a subfolder whose
///   removal says `ENOTEMPTY` is opened by name and read again, while its last pass deleted
///   something (the walk's own deletions) and at most ``maximumRereads`` times; the folder
///   itself, which stays and so never says it, is read once more after a pass that deleted in
///   it (again while that deletes something). Where nothing is skipped (ext4) a subfolder is
///   read once;
/// - keeps going past an entry it cannot delete (remembering it, so no entry is tried twice and
///   the walk ends) and throws the first such failure once everything else is gone;
/// - with spares given (``removeContents(of:below:keeping:)``), moves an emptied folder worth keeping
///   into the spare area rather than remove it, after reading it empty once more through its
///   still-open descriptor (one descriptor more than below while it is judged);
/// - keeps at most ``openLevels`` folders open: deeper, it returns to a folder through the
///   `..` of its child, checked to be the folder it left (device and inode), and starts over
///   from the top when it is not (a folder deleted or moved under the walk).
///
/// <!-- snippet: skip the trash path is internal to the module -->
/// ```swift
/// try FolderRemoval.removeContents(of: store.trash.path)   // the trash folder stays, empty
/// ```
package enum FolderRemoval {
    /// How many folders, from the top, keep their descriptor (and reading position) open while
    /// the walk is below them.
    static let openLevels = 32

    /// How many times the walk reads one folder again from its start: a process that keeps
    /// adding entries to a folder being emptied does not keep the walk going. A file system that
    /// skips entries still lists some in every pass, so each pass deletes some of what is left.
    static let maximumRereads = 1_000

    /// Deletes every file, link and folder inside `path`, leaving `path` itself.
    ///
    /// With `spares` given, offers each emptied subfolder (at any depth) to `spares`
    /// before removing it: one that ``SpareFolders/wantsToKeep(_:inTrashItem:)`` accepts is
    /// read once more from its start and, found empty, moved into a free slot of the spare
    /// area (``SpareFolders/keep(_:in:)``) instead of removed. Any other is removed as always.
    /// Only for a walk alone in `path`: another walk may hold a kept folder open and delete
    /// what is later written into it (``SpareFolders/emptyTrash(shouldStop:)`` locks).
    ///
    /// - Parameters:
    ///   - path: The folder to empty; a missing folder is already empty. A symbolic link
    ///     there is not followed (the call throws: `ENOTDIR` on Linux, `ELOOP` elsewhere).
    ///   - root: A folder `path` is below, opened (``AtomicFile/Root``): `path` is opened from
    ///     it, and kept folders go to the spare area below it; `nil`: by the whole path.
    ///   - spares: Where emptied folders worth keeping go; `nil` removes every folder.
    /// - Throws: ``StorageError`` (`permissionDenied`, `readOnlyFileSystem`, `fileSystem`) for the
    ///   first entry that could not be read or deleted, after deleting all the others it could.
    /// - Complexity: Blocking file I/O: one `unlinkat` per file or link, an `openat`,
    ///   `fstat` and `unlinkat` per folder, plus an `openat` of `..` and an `fstat` on the way
    ///   back up from each folder deeper than ``openLevels``; one more read of `path` after a
    ///   pass that deleted in it, and of a subfolder only when removing it says `ENOTEMPTY`;
    ///   with `spares`, an `fstat` per emptied subfolder, and a read and up to
    ///   ``SpareFolders/slots`` renames per one worth keeping.
    package static func removeContents(
        of path: String,
        below root: AtomicFile.Root? = nil,
        keeping spares: SpareFolders? = nil
    ) throws {
        try removeContents(of: path, below: root, keeping: spares, willRemoveFolder: nil)
    }

    /// ``removeContents(of:below:keeping:)`` calling `willRemoveFolder` with a subfolder's name just
    /// before each attempt to remove it (read to its end): the tests' way to add an entry the
    /// pass did not see.
    static func removeContents(
        of path: String,
        below root: AtomicFile.Root? = nil,
        keeping spares: SpareFolders? = nil,
        willRemoveFolder: ((String) -> Void)?
    ) throws {
        var walk = try RemovalWalk(root: path, below: root, spares: spares, willRemoveFolder: willRemoveFolder)
        defer { walk.closeAll() }
        _ = try walk.run()
    }
}

/// A folder's identity: a folder reached again through `..` must be the one left.
struct RemovalFolderID: Hashable {
    var device: UInt64
    var inode: UInt64

    init(_ status: stat) {
        device = UInt64(truncatingIfNeeded: status.st_dev)
        inode = UInt64(truncatingIfNeeded: status.st_ino)
    }
}

/// An entry the walk failed to delete: the folder holding it and its name's bytes.
struct RemovalEntryID: Hashable {
    var folder: RemovalFolderID
    var name: [CChar]
}

/// One folder on the walk's path from the root down.
struct RemovalLevel {
    /// The open folder, or `nil` while the walk is below it and it is past ``FolderRemoval/openLevels``.
    var stream: DirectoryStream?
    /// The name in the folder above (NUL-terminated; empty for the root).
    var name: [CChar]
    var id: RemovalFolderID
    /// Whether the walk deleted an entry of this folder in this pass (since it was opened or
    /// last read from its start): deleting while reading may make `readdir` skip entries (APFS,
    /// NFS, FreeBSD), so only then is a folder read again (a subfolder when its removal says
    /// `ENOTEMPTY`, the root after the pass). Only the walk's own deletions count, so a name
    /// listed but never found (`ENOENT` each time) cannot keep it reading.
    var changed = false
    /// How many times this folder was read again from its start (at most
    /// ``FolderRemoval/maximumRereads``).
    var rereads = 0
    var fd: Int32 { stream.map { dirfd($0) } ?? -1 }
}

/// The state of one ``FolderRemoval/removeContents(of:below:keeping:)``: the levels from the root down to the
/// folder being read, and what could not be deleted.
struct RemovalWalk {
    let rootPath: String
    var levels: [RemovalLevel] = []
    var failed: Set<RemovalEntryID> = []
    var firstError: StorageError?
    /// How many times the walk started over from the top: bounded, so that a folder that
    /// never leads back to the one above (moved under the walk, again and again) ends it.
    var restarts = 0
    /// The tests' hook, called with a subfolder's name before removing it.
    let willRemoveFolder: ((String) -> Void)?
    /// Where emptied subfolders worth keeping go instead of being removed (set per batch: only
    /// a batch alone in the folder keeps any).
    var spares: SpareFolders?
    /// Where a large emptied folder goes to be removed later (see ``FolderRemoval/Batches/next(keeping:settingAside:)``).
    var setAside: ((_ folder: Int32, _ name: String) -> Bool)?
    /// How many entries the walk deleted, kept or set aside.
    var removed = 0
    /// The folder the walked folder was opened from, and the spare area is reached from.
    let below: AtomicFile.Root?

    private static let maximumRestarts = 1_000

    static let folderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC

    /// Opens the root; a missing root leaves the walk with nothing to do. A walk started over
    /// on another folder at the same path (see ``FolderRemoval/Batches/resume()``) carries the
    /// first error and the count of what the earlier one deleted.
    init(
        root: String,
        below: AtomicFile.Root?,
        spares: SpareFolders? = nil,
        willRemoveFolder: ((String) -> Void)? = nil,
        carrying earlier: RemovalWalk? = nil
    ) throws {
        self.willRemoveFolder = willRemoveFolder
        firstError = earlier?.firstError
        removed = earlier?.removed ?? 0
        self.spares = spares
        self.below = below
        // A trailing slash makes the kernel follow a link there despite O_NOFOLLOW ("trash/"
        // opens the link's target): drop it, so a link in the folder's place is refused.
        var root = root
        while root.utf8.count > 1 && root.hasSuffix("/") { root.removeLast() }
        rootPath = root
        let fd = openFolder(root, below: below, noFollow: true)
        if fd < 0 {
            if errno == ENOENT { return }
            throw StorageError.posix("open folder", path: root, errno: errno)
        }
        guard let level = Self.level(fd: fd, name: []) else {
            let code = errno
            _ = close(fd)
            throw StorageError.posix("open folder", path: root, errno: code)
        }
        levels = [level]
    }

    /// A level for the open folder `fd` (which it then owns), or `nil` with `errno` set.
    private static func level(fd: Int32, name: [CChar], rereads: Int = 0) -> RemovalLevel? {
        var status = stat()
        guard fstat(fd, &status) == 0, let stream = fdopendir(fd) else { return nil }
        return RemovalLevel(stream: stream, name: name, id: RemovalFolderID(status), rereads: rereads)
    }

    /// Reads the deepest level's next entry until the root is read to its end: a file or link
    /// is unlinked, a folder descended into, a folder read to its end removed from the one above
    /// (or read again, see ``ascend()``); the root is read again after a pass that deleted in it.
    /// With `limit`, stops after that many steps (each an entry read, or a folder's end),
    /// everything left open to go on from.
    ///
    /// - Returns: Whether the walk ended: `false` when it stopped at `limit`.
    mutating func run(steps limit: Int? = nil) throws -> Bool {
        var steps = 0
        while let top = levels.last {
            if let limit, steps >= limit { return false }
            steps += 1
            guard let stream = top.stream else { preconditionFailure("the deepest level is always open") }
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 && errno != ENOENT {
                    record("read folder", errno, at: top.name, in: levels.count - 1, parent: false)
                } else if levels.count == 1 {
                    // The root stays, so no ENOTEMPTY tells whether readdir skipped an entry
                    // deleted under it: one more pass after deleting (cheap: a trash holds few
                    // entries) finds any.
                    guard top.changed && top.rereads < FolderRemoval.maximumRereads else { break }
                    levels[0].changed = false
                    levels[0].rereads += 1
                    rewinddir(stream)
                    continue
                }
                if levels.count == 1 { break }
                ascend()
                continue
            }
            let name = DirectoryEntries.name(of: entry)
            if DirectoryEntries.isDotOrDotDot(name) { continue }
            let type = Int32(entry.pointee.d_type)
            if type == Int32(DT_DIR) {
                descend(into: name)
                continue
            }
            if !failed.isEmpty && failed.contains(RemovalEntryID(folder: top.id, name: Self.bytes(name))) { continue }
            if unlinkat(top.fd, name, 0) == 0 {
                levels[levels.count - 1].changed = true
                removed += 1
                continue
            }
            let code = errno
            if code == ENOENT { continue }
            // Linux says EISDIR for a folder, Apple platforms EPERM; d_type may be DT_UNKNOWN.
            var status = stat()
            if code == EISDIR || code == EPERM || type == Int32(DT_UNKNOWN),
                fstatat(top.fd, name, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFDIR
            {
                descend(into: name)
            } else {
                fail("unlink", code, name: name)
            }
        }
        if let firstError { throw firstError }
        return true
    }

    /// Opens the folder `name` of the deepest level and makes it the deepest, counting
    /// `rereads` passes over it already.
    private mutating func descend(into name: UnsafePointer<CChar>, rereads: Int = 0) {
        let parent = levels.count - 1
        if !failed.isEmpty && failed.contains(RemovalEntryID(folder: levels[parent].id, name: Self.bytes(name))) {
            return
        }
        let fd = openat(levels[parent].fd, name, Self.folderFlags)
        if fd < 0 {
            let code = errno
            switch code {
            case ENOENT:
                return
            case ENOTDIR, ELOOP:
                // Replaced by a file or a link since it was listed: not followed, unlinked.
                if unlinkat(levels[parent].fd, name, 0) == 0 {
                    levels[parent].changed = true
                    removed += 1
                    return
                }
                if errno == ENOENT { return }
                fail("unlink", errno, name: name)
            default:
                fail("open folder", code, name: name)
            }
            return
        }
        guard let level = Self.level(fd: fd, name: Self.bytes(name), rereads: rereads) else {
            let code = errno
            _ = close(fd)
            fail("open folder", code, name: name)
            return
        }
        // Never enter another file system mounted here: nothing the store moves into the trash
        // is on another device (rename cannot cross one), and FileManager's walk (FTS_XDEV)
        // and removefile(3), which deleted the trash before, stay on one device too.
        if level.id.device != levels[0].id.device {
            _ = closedir(level.stream!)
            fail("enter folder", EXDEV, name: name)
            return
        }
        if parent >= FolderRemoval.openLevels, let stream = levels[parent].stream {
            _ = closedir(stream)
            levels[parent].stream = nil
        }
        levels.append(level)
    }

    /// Closes the deepest level (read to its end), returns to the one above and deletes it there;
    /// when that says it is not empty after a pass that deleted in it (`readdir` skipped entries
    /// deleted under it, or they were added since it was read), opens and reads it again.
    private mutating func ascend() {
        let child = levels.removeLast()
        let parent = levels.count - 1
        if levels[parent].stream == nil {
            let fd = openat(child.fd, "..", Self.folderFlags)
            let openError = fd < 0 ? errno : 0
            var status = stat()
            guard fd >= 0, fstat(fd, &status) == 0, RemovalFolderID(status) == levels[parent].id,
                let stream = fdopendir(fd)
            else {
                // The folder above was deleted (another process emptying the same trash) or
                // moved: start over from the top, which is still open.
                _ = closedir(child.stream!)
                if fd >= 0 { _ = close(fd) }
                if openError != 0 && openError != ENOENT {
                    // The child is there but its `..` cannot be opened (a folder readable but
                    // not searchable, mode r--; out of descriptors): starting over would come
                    // back to it every time until the restarts run out and the walk stops with
                    // the rest undeleted. Remember it, so the walk passes it by from now on.
                    failed.insert(RemovalEntryID(folder: levels[parent].id, name: child.name))
                    record("return from folder", openError, at: child.name, in: parent, parent: true)
                }
                restarts += 1
                guard restarts <= Self.maximumRestarts else {
                    record("return to folder", ELOOP, at: child.name, in: parent, parent: true)
                    closeAll()
                    return
                }
                restart()
                return
            }
            levels[parent].stream = stream
        }
        let kept = spares.map { keep(child, in: parent, spares: $0) } ?? false
        var large = false
        if !kept && setAside != nil {
            var status = stat()
            large = fstat(child.fd, &status) == 0 && Int64(status.st_size) > FolderRemoval.largeFolderSize
        }
        _ = closedir(child.stream!)
        if kept || (large && setAside(child.name, in: parent)) {
            levels[parent].changed = true
            removed += 1
            return
        }
        if let willRemoveFolder { willRemoveFolder(Self.string(child.name)) }
        if unlinkat(levels[parent].fd, child.name, AT_REMOVEDIR) == 0 {
            levels[parent].changed = true
            removed += 1
            return
        }
        let code = errno
        if code == ENOENT { return }
        // POSIX lets rmdir say EEXIST for a folder not empty. Opened again by name (O_NOFOLLOW,
        // on this device), as if first listed, but with its passes counted: a folder that
        // another process keeps filling ends the walk after maximumRereads.
        if (code == ENOTEMPTY || code == EEXIST) && child.changed && child.rereads < FolderRemoval.maximumRereads {
            child.name.withUnsafeBufferPointer { descend(into: $0.baseAddress!, rereads: child.rereads + 1) }
            return
        }
        child.name.withUnsafeBufferPointer { fail("remove folder", code, name: $0.baseAddress!) }
    }

    /// Hands the emptied folder `name` of level `parent` to ``setAside``, if its name is valid
    /// UTF-8 (a repaired name could be another folder's): whether it was moved away.
    private func setAside(_ name: [CChar], in parent: Int) -> Bool {
        guard let setAside, let string = name.withUnsafeBufferPointer({ String(validatingCString: $0.baseAddress!) })
        else { return false }
        return setAside(levels[parent].fd, string)
    }

    /// Offers the folder `child` of level `parent`, read to its end, to `spares`: kept when
    /// its size is worth keeping, its name is valid UTF-8 (a repaired name could be another
    /// folder's), a second read from its start finds nothing in it, and a slot is free.
    private func keep(_ child: RemovalLevel, in parent: Int, spares: SpareFolders) -> Bool {
        var status = stat()
        let item = parent == 0 ? child.name : levels[1].name  // the trash's item holding it
        guard let stream = child.stream, fstat(child.fd, &status) == 0,
            item.withUnsafeBufferPointer({ spares.wantsToKeep(status, inTrashItem: $0.baseAddress!) }),
            let name = child.name.withUnsafeBufferPointer({ String(validatingCString: $0.baseAddress!) })
        else { return false }
        // Deleting while reading may make `readdir` skip entries (see the type's discussion):
        // only a folder read empty from its start is kept.
        rewinddir(stream)
        guard DirectoryEntries.readsEmpty(stream) else { return false }
        return spares.keep(name, in: levels[parent].fd, below: below)
    }

    /// Closes every level below the root and reads the root again from its start; what the
    /// walk failed to delete stays skipped.
    mutating func restart() {
        while levels.count > 1 {
            if let stream = levels.removeLast().stream { _ = closedir(stream) }
        }
        rewinddir(levels[0].stream!)
    }

    /// Remembers that `name` in the deepest level could not be deleted, so the walk skips it
    /// from now on, and the error if it is the first.
    private mutating func fail(_ operation: String, _ code: Int32, name: UnsafePointer<CChar>) {
        let bytes = Self.bytes(name)
        failed.insert(RemovalEntryID(folder: levels[levels.count - 1].id, name: bytes))
        record(operation, code, at: bytes, in: levels.count - 1, parent: true)
    }

    /// Keeps the first error, with the path of `name` in level `depth` (`parent`), or of level
    /// `depth` itself.
    private mutating func record(_ operation: String, _ code: Int32, at name: [CChar], in depth: Int, parent: Bool) {
        guard firstError == nil else { return }
        var path = rootPath
        for level in levels.dropFirst().prefix(depth) { path += "/" + Self.string(level.name) }
        if parent { path += "/" + Self.string(name) }
        firstError = StorageError.posix("\(operation) in trash", path: path, errno: code)
    }

    /// Closes what is still open (after a throw or the end).
    mutating func closeAll() {
        while let level = levels.popLast() {
            if let stream = level.stream { _ = closedir(stream) }
        }
    }

    /// The NUL-terminated bytes of `name`.
    private static func bytes(_ name: UnsafePointer<CChar>) -> [CChar] {
        Array(UnsafeBufferPointer(start: name, count: strlen(name) + 1))
    }

    /// `name` for a message: invalid UTF-8 repaired.
    private static func string(_ name: [CChar]) -> String {
        name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
