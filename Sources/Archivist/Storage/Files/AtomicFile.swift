import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Atomic file replacement and whole-file reads with plain POSIX calls — the one place in the
/// package that replaces files.
///
/// A write goes to a temporary file (named by ``TemporaryName``: `.tmp-`, then its owner
/// process and a counter) in the destination's folder,
/// created 0600 whatever the umask, is written, synced as ``Durability`` asks, and renamed
/// over the destination. A reader sees the old contents or the new ones, even if the process
/// dies mid-write; a crash can leave a temporary behind, which ``isTemporary(_:)`` recognizes
/// and ``TemporaryName/sweepAbandoned(inFolder:fileSystem:)`` deletes once its owner is dead,
/// never while another process may still be writing it. Missing folders are created 0700.
///
/// Foundation's `Data.write(to:options: .atomic)` does the same job without ever syncing the
/// folder, and at a greater cost per small file (the `stores` suite's plist writes set the
/// two side by side).
///
/// ```swift
/// try AtomicFile.write(Data("hello".utf8), to: url, durability: .file)
/// let bytes = try AtomicFile.read(path: url.path)   // nil when the file does not exist
/// ```
package enum AtomicFile {
    /// The size of a file just written.
    package struct Sizes: Sendable, Hashable {
        /// `st_size`: the bytes the file holds.
        package var logical: Int64
        /// `st_blocks * 512`: the bytes the file system allocated for it.
        package var allocated: Int64
    }

    /// The prefix of temporary file names.
    package static let temporaryPrefix = ".tmp-"

    /// Whether a file name is one of our temporaries.
    package static func isTemporary(_ name: Substring) -> Bool { name.hasPrefix(temporaryPrefix) }

    /// Atomically replaces the file at `url` with `bytes`.
    ///
    /// - Throws: ``StorageError`` with `permissionDenied`, `readOnlyFileSystem`, `diskFull` or
    ///   `fileSystem`, the URL and `errno`; the old file is untouched.
    /// - Complexity: Blocking file I/O: O(n) to write, plus the syncs `durability` asks for.
    @discardableResult
    package static func write(
        _ bytes: Data,
        to url: URL,
        durability: Durability,
        fileSystem: FileSystem = .posix
    ) throws -> Sizes {
        try bytes.withUnsafeBytes { raw in
            try write([raw], toPath: url.path, durability: durability, fileSystem: fileSystem)
        }
    }

    /// Atomically replaces the file at `path` with the concatenation of `chunks`; missing
    /// folders are created 0700 unless `createFolders` is false. With `root`, as
    /// ``prepare(_:toPath:durability:createFolders:spares:fileSystem:below:)`` says.
    ///
    /// - Throws: ``StorageError`` as ``write(_:to:durability:fileSystem:)``. A failed folder
    ///   sync (`.fileAndFolder`) comes after the rename: the new contents are in place then.
    /// - Complexity: Blocking file I/O, O(total bytes).
    package static func write(
        _ chunks: [UnsafeRawBufferPointer],
        toPath path: String,
        durability: Durability,
        createFolders: Bool = true,
        fileSystem fs: FileSystem = .posix,
        below root: Root? = nil
    ) throws -> Sizes {
        let (sizes, folderSyncFailure) = try replace(
            chunks,
            toPath: path,
            durability: durability,
            createFolders: createFolders,
            fileSystem: fs,
            below: root
        )
        if let folderSyncFailure { throw folderSyncFailure }
        return sizes
    }

    /// As ``write(_:toPath:durability:createFolders:fileSystem:)``, but a failure of the folder
    /// sync after the rename is returned, not thrown: the new file is in place by then, so a
    /// caller keeping an index must count it before reporting the error.
    ///
    /// - Returns: The new file's sizes, and the folder sync's error if it failed (its message
    ///   says the new contents are in place).
    /// - Throws: ``StorageError`` for any failure before the rename; the old file is untouched.
    /// - Complexity: Blocking file I/O, O(total bytes).
    package static func replace(
        _ chunks: [UnsafeRawBufferPointer],
        toPath path: String,
        durability: Durability,
        createFolders: Bool = true,
        fileSystem fs: FileSystem = .posix,
        below root: Root? = nil
    ) throws -> (sizes: Sizes, folderSyncFailure: StorageError?) {
        let prepared = try prepare(
            chunks,
            toPath: path,
            durability: durability,
            createFolders: createFolders,
            fileSystem: fs,
            below: root
        )
        let renamed: Bool
        do {
            renamed = try prepared.rename(fs)
        } catch {
            prepared.discard(fs)
            throw error
        }
        guard renamed else { throw StorageError.posix("rename", path: path, errno: ENOENT) }
        return (prepared.sizes, prepared.syncFolderIfAsked(fs))
    }

    /// Reads the whole file at `path`, or at most `limit` bytes of it; opened from `root`
    /// when one is given and the file system ``FileSystem/allowsRootRelativeCalls``.
    ///
    /// - Returns: The bytes, or `nil` when there is no file at `path`.
    /// - Throws: ``StorageError`` with `permissionDenied` or `fileSystem` and `errno`.
    /// - Complexity: Blocking file I/O, O(n).
    package static func read(
        path: String,
        limit: Int = .max,
        fileSystem fs: FileSystem = .posix,
        below root: Root? = nil
    ) throws -> [UInt8]? {
        // O_NONBLOCK: opening a FIFO someone left here must not wait for a writer (it is
        // refused below); it changes nothing for a regular file.
        let fd = fs.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0, below: fs.allowsRootRelativeCalls ? root : nil)
        if fd < 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw StorageError.posix("open", path: path, errno: code)
        }
        defer { _ = fs.close(fd) }
        var status = stat()
        guard fs.fstat(fd, &status) == 0 else { throw StorageError.posix("fstat", path: path, errno: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw StorageError(.corruptEntry, "not a regular file", fileURL: URL(fileURLWithPath: path))
        }
        let capacity = Int(min(Int64(limit), Int64(status.st_size)))
        return try [UInt8].uninitialized(capacity: capacity) { buffer in
            try fs.readFully(fd, into: UnsafeMutableRawBufferPointer(buffer), path: path)
        }
    }

    /// Reads the whole file at `path` straight into a `Data`, with no intermediate copy.
    ///
    /// A symbolic link at `path` is not followed: a cache entry is always a regular file, so
    /// a link (even a dangling one) is reported as not one, like a folder or a FIFO.
    ///
    /// - Returns: The bytes, or `nil` when there is nothing at `path`.
    /// - Throws: ``StorageError`` with `permissionDenied` or `fileSystem` and `errno`;
    ///   `corruptEntry` when the path is not a regular file.
    /// - Complexity: Blocking file I/O, O(n).
    package static func readData(path: String, fileSystem fs: FileSystem = .posix) throws -> Data? {
        var identity: FileIdentity?
        defer { identity?.unpin(fs) }
        return try readBuffer(path: path, fileSystem: fs, identity: &identity).map { $0.data(0..<$0.bytes.count) }
    }

    /// Reads the whole file at `path` straight into a ``FileBuffer`` (no zero-fill, no copy),
    /// also setting `identity` to the file read (or the thing found at `path`) as soon as it is
    /// known — before any `corruptEntry` error — so the caller can later remove exactly what it
    /// judged bad and not a file another process put there since. The file stays open until
    /// the caller calls `identity?.unpin(fs)`, which it must do on every path once `identity`
    /// is set (even when this throws).
    ///
    /// A file of ``checksummedReadThreshold`` bytes or more is read a piece at a time and
    /// checksummed as it is read: its CRC32C comes with it, as ``FileBuffer/checksum``.
    ///
    /// With `root` (a folder `path` is below) and a file system that
    /// ``FileSystem/allowsRootRelativeCalls``, the file is opened with `openat` from the root's
    /// descriptor, so the kernel walks only the components below it. Whatever that open
    /// finds is read (a symbolic link is reported there too), and its failure is final while
    /// the root is still linked (``Root/isLinked``, one `fstat`): `ENOENT` and `ENOTDIR` a
    /// miss, any other a thrown error; a failure in a root that was
    /// removed (even if a new folder was made at its path since: the removed one holds nothing)
    /// is decided by the whole path, as without a root — so reads see what writes wrote, whose
    /// creation in a removed root fails and goes by the path. A root renamed away keeps
    /// serving reads, as a store keeps making every change in it (`DiskStore+RootRelative.swift`,
    /// `RootRenamedAwayTests`).
    ///
    /// - Returns: The bytes, or `nil` when there is nothing at `path`.
    /// - Throws: as ``readData(path:fileSystem:)``.
    /// - Complexity: Blocking file I/O, O(n).
    package static func readBuffer(
        path: String,
        fileSystem fs: FileSystem = .posix,
        below root: Root? = nil,
        identity: inout FileIdentity?,
        sizeHint: Int? = nil
    ) throws -> FileBuffer? {
        let flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        var fd: Int32 = -1
        if let root, fs.allowsRootRelativeCalls {
            if fs.makesEntryCallsDirectly {
                let folder = root.descriptor
                let skip = root.prefixLength
                fd = path.withCString { openat(folder, $0 + skip, flags | noAccessTime, 0) }
                // Only a file of another owner refuses `O_NOATIME` (an entry is its writer's, mode 0600).
                if fd < 0 && errno == EPERM && noAccessTime != 0 {
                    fd = path.withCString { openat(folder, $0 + skip, flags, 0) }
                }
            } else {
                fd = fs.open(path, flags, 0, below: root)  // a test's `openAt`
            }
            if fd < 0 {
                let code = errno
                if code == ELOOP {  // a symbolic link in the root's folder, moved or not
                    identity = FileIdentity.lstatting(path, below: root, type: S_IFLNK)
                    throw StorageError(
                        .corruptEntry,
                        "a symbolic link, not a regular file",
                        fileURL: URL(fileURLWithPath: path)
                    )
                }
                // The folder the store opened, moved or not: its answer is final, as every
                // change goes there; at the path another folder may stand now.
                if root.isLinked {
                    if code == ENOENT || code == ENOTDIR { return nil }
                    throw StorageError.posix("open", path: path, errno: code)
                }
            }
        }
        if fd < 0 { fd = fs.open(path, flags, 0) }
        if fd < 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            if code == ELOOP {  // what O_NOFOLLOW reports for a symbolic link
                identity = FileIdentity.lstatting(path, type: S_IFLNK)
                throw StorageError(
                    .corruptEntry,
                    "a symbolic link, not a regular file",
                    fileURL: URL(fileURLWithPath: path)
                )
            }
            throw StorageError.posix("open", path: path, errno: code)
        }
        if let sizeHint, sizeHint > 0, sizeHint < checksummedReadThreshold,
            let read = try readKnownSize(fd, sizeHint, path: path, fileSystem: fs, identity: &identity)
        {
            return read
        }
        // Without the time stamps, as the write path: a file whose times were read makes its
        // next change (its replacement) move the clock the journal's next append sees.
        guard let status = fs.statusWithoutTimes(fd) else {
            let code = errno
            _ = fs.close(fd)
            throw StorageError.posix("fstat", path: path, errno: code)
        }
        identity = FileIdentity(pinning: fd, status: status)  // the caller closes `fd` with `unpin`
        guard status.mode & S_IFMT == S_IFREG else {
            throw StorageError(.corruptEntry, "not a regular file", fileURL: URL(fileURLWithPath: path))
        }
        let size = Int(clamping: status.sizes.logical)
        guard size > 0 else { return FileBuffer(taking: nil, count: 0, allocation: nil) }
        guard let (memory, allocation) = FileBuffer.allocate(count: size) else {
            throw StorageError(
                .fileSystem,
                "cannot allocate \(size) bytes to read the file",
                fileURL: URL(fileURLWithPath: path)
            )
        }
        let count: Int
        var checksum: UInt32?
        do {
            let buffer = UnsafeMutableRawBufferPointer(start: memory, count: size)
            if size >= checksummedReadThreshold {
                (count, checksum) = try readChecksumming(fd, into: buffer, path: path, fileSystem: fs)
            } else {
                count = try fs.readFully(fd, into: buffer, path: path)
            }
        } catch {
            free(allocation)
            throw error
        }
        // Fewer bytes when the file shrank meanwhile; the reader's checks catch that.
        return FileBuffer(taking: memory, count: count, allocation: allocation, checksum: checksum)
    }

    /// `O_NOATIME` where the system has it (Linux, the value of every architecture Swift runs
    /// on there; Glibc's module does not export it), else 0: the flag an entry is opened with
    /// for reading when the store opens it relative to its root's folder.
    ///
    /// With `relatime` (the usual mount option) the first read of a file written since its
    /// last read updates its access time: the inode is marked dirty and written back later,
    /// ~1 µs of a 100 KB get that follows a set (6–9% measured, the `cache-shapes` suite's
    /// 100 KB gets guard it, which read each entry once after writing it). Nothing reads an
    /// entry's access time: eviction by last access goes by the store's index.
    #if os(Linux)
    static let noAccessTime: Int32 = 0o1_000_000
    #else
    static let noAccessTime: Int32 = 0
    #endif

    /// Reads the file open as `fd` in one `read` of one byte more than `size`, with no
    /// `fstat`: the file's buffer when it holds exactly `size` bytes (``FileBuffer/sizeWasAssumed``),
    /// `nil` when it holds more or less, or is no regular file (the caller then examines it as
    /// without a hint, from the start). Pins `fd` unexamined (``FileIdentity/init(pinningUnexamined:)``).
    ///
    /// The store knows an entry's size from its index: the `fstat` a read otherwise begins with
    /// is a sizable share of a warm get (the `cache-shapes` suite's 100 KB gets and the
    /// `cache-manager` suite's 1 KB gets guard it).
    private static func readKnownSize(
        _ fd: Int32,
        _ size: Int,
        path: String,
        fileSystem fs: FileSystem,
        identity: inout FileIdentity?
    ) throws -> FileBuffer? {
        identity = FileIdentity(pinningUnexamined: fd)
        guard let (memory, allocation) = FileBuffer.allocate(count: size + 1) else { return nil }
        var n: Int
        repeat { n = fs.read(fd, memory, size + 1) } while n < 0 && errno == EINTR
        guard n == size else {
            free(allocation)
            // Back to the start for the read without a hint; a descriptor that cannot seek
            // (a FIFO) is no entry, which the `fstat` that follows reports.
            if n > 0 { _ = lseek(fd, 0, SEEK_SET) }
            identity = nil
            return nil
        }
        return FileBuffer(taking: memory, count: n, allocation: allocation, sizeWasAssumed: true)
    }

    /// The smallest file ``readBuffer(path:fileSystem:below:identity:)`` checksums as it reads
    /// it (``FileBuffer/checksum``). A large entry's checksum, computed after one read of the
    /// whole file, reads it from memory again; computed a ``checksummedReadChunk`` at a time
    /// right after each piece is read, it reads the piece from cache. A smaller file still fits
    /// the last-level cache whole, so checksumming it after one read costs next to nothing
    /// more (the `cache-manager` suite's 10 MB get guards the threshold).
    package static let checksummedReadThreshold = 8 << 20
    /// The bytes read, then checksummed, at a time: small enough that a piece is still in cache
    /// when it is checksummed, large enough that the reads stay few (the `cache-manager`
    /// suite's 10 MB get guards it).
    package static let checksummedReadChunk = 1 << 20

    /// Reads from `fd` into `buffer` as ``FileSystem/readFully(_:into:path:)`` does, a
    /// ``checksummedReadChunk`` at a time, checksumming each piece right after it is read.
    ///
    /// - Returns: How many bytes were read, and their CRC32C.
    /// - Throws: ``StorageError`` for `read` at `path` with the failure's `errno`.
    static func readChecksumming(
        _ fd: Int32,
        into buffer: UnsafeMutableRawBufferPointer,
        path: String,
        fileSystem fs: FileSystem
    ) throws -> (count: Int, checksum: UInt32) {
        var count = 0
        var sum: UInt32 = 0
        while count < buffer.count {
            let piece = UnsafeMutableRawBufferPointer(
                rebasing: buffer[count..<min(count + checksummedReadChunk, buffer.count)]
            )
            let n = try fs.readFully(fd, into: piece, path: path)
            sum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: piece[..<n]), seed: sum)
            count += n
            if n < piece.count { break }  // the file ended early (it shrank)
        }
        return (count, sum)
    }

    /// `IOV_MAX` on Linux and Darwin: the most buffers one `writev` takes.
    private static let maxVectors = 1024

    /// Writes all of `chunks`, in order, with as few `writev` calls as the kernel allows (one
    /// for a file's worth of bytes), retrying short writes and `EINTR`.
    ///
    /// - Throws: ``StorageError`` for `write` at `path` with the failure's `errno`.
    package static func writeAll(
        _ chunks: [UnsafeRawBufferPointer],
        to fd: Int32,
        path: String,
        fileSystem fs: FileSystem
    ) throws {
        if chunks.count == 1 { return try writeAll(chunks[0], to: fd, path: path, fileSystem: fs) }
        try withUnsafeTemporaryAllocation(of: iovec.self, capacity: chunks.count) { vectors in
            var count = 0
            for chunk in chunks where chunk.count > 0 {
                vectors[count] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: chunk.baseAddress),
                    iov_len: chunk.count
                )
                count += 1
            }
            var first = 0
            while first < count {
                let n = fs.writev(fd, vectors.baseAddress! + first, Int32(min(count - first, maxVectors)))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw StorageError.posix("write", path: path, errno: n < 0 ? errno : EIO) }
                var done = n
                while done > 0 {  // skip what was written: whole vectors, then part of one
                    if done >= vectors[first].iov_len {
                        done -= vectors[first].iov_len
                        first += 1
                    } else {
                        vectors[first].iov_base = vectors[first].iov_base.map { $0 + done }
                        vectors[first].iov_len -= done
                        done = 0
                    }
                }
            }
        }
    }

    /// Writes all of `chunk`, retrying short writes and `EINTR`.
    package static func writeAll(
        _ chunk: UnsafeRawBufferPointer,
        to fd: Int32,
        path: String,
        fileSystem fs: FileSystem
    ) throws {
        guard var p = chunk.baseAddress else { return }
        var left = chunk.count
        while left > 0 {
            let n = fs.write(fd, p, left)
            if n > 0 {
                p += n
                left -= n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                throw StorageError.posix("write", path: path, errno: n < 0 ? errno : EIO)
            }
        }
    }
}
