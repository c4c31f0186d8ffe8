import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension AtomicFile {
    /// An open descriptor of a folder that the paths handed to ``prepare(_:toPath:durability:createFolders:spares:fileSystem:below:)``
    /// start with (a store's root), so the temporary is created and renamed with `openat` and
    /// `renameat` from it: the kernel then walks only the path's components below the folder
    /// instead of every component from `/` — three walks a write (the temporary's creation,
    /// both names of the rename), each component above the folder a lookup saved (the
    /// `cache-manager` suite's 1 KB set guards it). The other calls below the folder take it
    /// too (``FileSystem/open(_:_:_:below:)`` and its siblings), so they all reach the same
    /// folder, wherever it was moved.
    package struct Root: Sendable {
        /// The folder's descriptor, open for as long as this value is used.
        package let descriptor: Int32
        /// How many bytes of a path come before its part below the folder: the folder's path
        /// and the `/` after it.
        package let prefixLength: Int

        /// A root for the folder open as `descriptor` at `path` (no trailing `/` but for `/`
        /// itself; every path handed over with it must start with `path` and a `/`).
        package init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.prefixLength = path.utf8.count + 1
        }

        /// Whether the folder still has a name: a removed folder's link count is 0 (Linux; on
        /// other systems this is not relied on, and the answer is `false`, so that a caller
        /// asks the path instead).
        var isLinked: Bool {
            #if os(Linux)
            var status = stat()
            return fstat(descriptor, &status) == 0 && status.st_nlink > 0
            #else
            return false
            #endif
        }
    }

    /// A temporary file written and synced, waiting to be renamed over its destination: the
    /// two halves of a replacement, so a store can do the slow half (writing) outside its
    /// cross-process lock and only the rename inside it.
    ///
    /// Its methods take the file system it was prepared with: held here, the seam's closures
    /// would be copied into every write's value and released after it, retain and release
    /// traffic that buys nothing (the `cache-manager` suite's 1 KB set guards it).
    ///
    /// ```swift
    /// let prepared = try AtomicFile.prepare([raw], toPath: path, durability: .file)
    /// guard try prepared.rename(.posix) else { return }   // another process moved the folder away
    /// if let failure = prepared.syncFolderIfAsked(.posix) { throw failure }
    /// ```
    package struct Prepared {
        /// The temporary's path.
        package let temporary: String
        /// The destination's path.
        package let path: String
        /// The destination's folder (made when asked: a set needs it only to sync the folder).
        package var folder: String { AtomicFile.folder(of: path) ?? "" }
        /// The sizes of the file written.
        package let sizes: Sizes
        let durability: Durability
        /// The folder the temporary was created from (then renamed, discarded and synced from
        /// it too), or `nil` when it was created by its whole path.
        let root: Root?

        /// Renames the temporary over the destination.
        ///
        /// - Returns: `false` when the temporary is gone — another process cleared (moved away)
        ///   the folder it was in; the caller may prepare it again.
        /// - Throws: ``StorageError`` when the rename fails otherwise, or fails with `ENOENT` and
        ///   the check for the temporary fails too (it may still be there); the temporary stays
        ///   (the caller may clear the way and retry, or ``discard(_:)`` it).
        /// - Complexity: One `rename`.
        package func rename(_ fileSystem: FileSystem) throws -> Bool {
            guard let root else {
                if fileSystem.rename(temporary, path) == 0 { return true }
                let code = errno
                if code == ENOENT, Self.isGone(access(temporary, F_OK)) { return false }
                throw StorageError.posix("rename", path: path, errno: code)
            }
            guard fileSystem.makesEntryCallsDirectly else {  // a test's `renameAt` and `accessAt`
                if fileSystem.rename(temporary, path, below: root) == 0 { return true }
                let code = errno
                if code == ENOENT, Self.isGone(fileSystem.accessAt(root.descriptor, root.relative(temporary), F_OK)) {
                    return false
                }
                throw StorageError.posix("rename", path: path, errno: code)
            }
            // Closures capturing only integers: capturing `self` or `root` copied this value
            // (its strings retained and released) around each call.
            let folder = root.descriptor
            let skip = root.prefixLength
            let renamed = temporary.withCString { from in
                path.withCString { to in renameat(folder, from + skip, folder, to + skip) }
            }
            if renamed == 0 { return true }
            let code = errno
            if code == ENOENT, Self.isGone(temporary.withCString { faccessat(folder, $0 + skip, F_OK, 0) }) {
                return false
            }
            throw StorageError.posix("rename", path: path, errno: code)
        }

        /// Whether the result of an `access` / `faccessat` of the temporary says it is gone:
        /// `ENOENT` or `ENOTDIR`, not a failure to tell (`EACCES`, `EIO`, …), after which a
        /// write prepared again would leave the temporary behind.
        private static func isGone(_ result: Int32) -> Bool {
            result != 0 && (errno == ENOENT || errno == ENOTDIR)
        }

        /// Deletes the temporary (a replacement given up), from the folder it was created from.
        package func discard(_ fileSystem: FileSystem) { _ = fileSystem.unlink(temporary, below: root) }

        /// Syncs the destination's folder when the durability asks for it (`.fileAndFolder`,
        /// `.fullSync`), after the rename; returns the failure (the new contents are in place
        /// by then) rather than throwing it, so a caller keeping an index counts the file first.
        package func syncFolderIfAsked(_ fileSystem: FileSystem) -> StorageError? {
            guard durability.syncsFolder else { return nil }
            do {
                try fileSystem.syncDirectory(folder, below: root, durability: durability)
                return nil
            } catch var failure as StorageError {
                failure.message += " after the rename: the new contents are in place but may not survive a power loss"
                return failure
            } catch {
                return StorageError(.fileSystem, "folder sync failed after the rename", underlyingError: error)
            }
        }
    }

    /// The folder of the file at `path`: everything before its last `/`; `nil` without one.
    ///
    /// Over the contiguous UTF-8 bytes: `String.lastIndex(of:)` walks grapheme clusters, and
    /// even the UTF-8 view's costs many times a plain scan, a visible part of a small write
    /// (the `cache-manager` suite's 1 KB set guards it).
    static func folder(of path: String) -> String? {
        var path = path
        return path.withUTF8 { bytes in
            guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<slash]), as: UTF8.self)
        }
    }

    /// Writes the concatenation of `chunks` to a fresh temporary beside `path` (named by
    /// ``TemporaryName``, created 0600), syncing it as `durability` asks; missing folders are
    /// created 0700 unless `createFolders` is false, the file's own folder from `spares` when
    /// given (a kept emptied folder, see ``SpareFolders``).
    ///
    /// With `temporaries`, the temporary is made in that folder instead (on the same file
    /// system as `path`), and only that folder is created when missing: `path`'s own folders
    /// are then the caller's to make when the rename finds them missing (it throws `ENOENT`
    /// with the temporary still there). A store keeps its entries' temporaries in one folder,
    /// so a writer's leftovers are found by listing it rather than every folder of the store.
    ///
    /// With `root` (a folder `path` is below) and a file system that
    /// ``FileSystem/allowsRootRelativeCalls``, the temporary is created and later renamed
    /// relative to the root's descriptor, and missing folders are made from it too (so a root
    /// renamed away keeps receiving every write); only when the root's own first folder cannot
    /// be made there — the root was removed — does the write go by the whole path (the root
    /// made again at it, as without a root), and so does the rename.
    ///
    /// - Throws: ``StorageError`` (`permissionDenied`, `readOnlyFileSystem`, `diskFull`,
    ///   `fileSystem`); no temporary is left then.
    /// - Complexity: Blocking file I/O, O(total bytes).
    package static func prepare(
        _ chunks: [UnsafeRawBufferPointer],
        toPath path: String,
        durability: Durability,
        createFolders: Bool = true,
        spares: SpareFolders? = nil,
        temporaries: String? = nil,
        fileSystem fs: FileSystem = .posix,
        below root: Root? = nil
    ) throws -> Prepared {
        // The temporary's path straight from the destination's bytes: the folder's own string
        // is made only when a folder must be created (or synced).
        func freshTemporary() -> String? {
            if let temporaries { return TemporaryName.path(inFolder: temporaries) }
            return TemporaryName.path(besideFileAt: path)
        }
        guard var temporary = freshTemporary() else {
            throw StorageError(.fileSystem, "not an absolute path", fileURL: URL(fileURLWithPath: path))
        }
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
        var root = fs.allowsRootRelativeCalls ? root : nil
        var fd: Int32
        if let root, fs.makesEntryCallsDirectly {
            let folder = root.descriptor
            let skip = root.prefixLength
            fd = temporary.withCString { openat(folder, $0 + skip, flags, 0o600) }
        } else if let root {
            fd = fs.open(temporary, flags, 0o600, below: root)  // a test's `openAt`
        } else {
            fd = fs.open(temporary, flags, 0o600)
        }
        if fd < 0 && errno == ENOENT && createFolders, let folder = temporaries ?? folder(of: path) {
            // The temporaries' folder is made as it is, never from a spare: a spare is an
            // entry folder kept for reuse.
            let spares = temporaries == nil ? spares : nil
            do {
                if let spares {
                    try spares.makeFolder(folder, below: root)
                } else {
                    try fs.makeDirectories(folder, below: root)
                }
            } catch let error as StorageError where root != nil && error.errno == ENOENT {
                // The root was removed (even its first folder cannot be made in it): by the
                // whole path, where a root made again is used (and made when missing).
                root = nil
                if let spares { try spares.makeFolder(folder, below: nil) } else { try fs.makeDirectories(folder) }
            }
            // A store's temporaries' folder stays out of device backups, as `.archivist` does.
            if temporaries != nil { BackupExclusion.exclude(folder: folder) }
            fd = fs.open(temporary, flags, 0o600, below: root)
        }
        // A leftover of a dead process that had our PID and, by chance, our counter: skip it.
        var attempts = 0
        while fd < 0 && errno == EEXIST && attempts < 8, let next = freshTemporary() {
            attempts += 1
            temporary = next
            fd = fs.open(temporary, flags, 0o600, below: root)
        }
        guard fd >= 0 else { throw StorageError.posix("create temporary file", path: temporary, errno: errno) }
        var open = true
        do {
            defer { if open { _ = fs.close(fd) } }
            try writeAll(chunks, to: fd, path: temporary, fileSystem: fs)
            // The allocated size a rescan's `lstat` would see (ext4 counts its delayed
            // allocation), and the mode: a umask that stripped owner bits is repaired. Without
            // the time stamps: see ``FileSystem/statusWithoutTimes``.
            guard let status = fs.statusWithoutTimes(fd) else {
                throw StorageError.posix("fstat", path: temporary, errno: errno)
            }
            let sizes = status.sizes
            if status.mode & 0o777 != 0o600 { _ = fs.fchmod(fd, 0o600) }  // umask stripped bits
            if durability.syncsFile && fs.sync(fd, for: durability) != 0 {
                throw StorageError.posix("fsync", path: temporary, errno: errno)
            }
            open = false
            if fs.close(fd) != 0 { throw StorageError.posix("close", path: temporary, errno: errno) }
            return Prepared(temporary: temporary, path: path, sizes: sizes, durability: durability, root: root)
        } catch {
            _ = fs.unlink(temporary, below: root)
            throw error
        }
    }
}
