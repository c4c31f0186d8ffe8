import CArchivistSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A root that refuses writes — a prepopulated cache shipped read-only, a read-only container
/// mount, a folder the process may read but not write — opens for reading: entries are read
/// and checked, sizes come from the saved index (or a scan held in memory only), and only a
/// write, removal or clear throws, with the error that refused the open for writing
/// (`readOnlyFileSystem` for `EROFS`, `permissionDenied` for `EACCES`/`EPERM`).
extension DiskStore {
    /// Creates `.archivist/trash` (and the root, if needed), and keeps `.archivist` — the trash
    /// inside it — and `.archivist-temporaries`, if it exists yet, out of device backups
    /// (``BackupExclusion``; the temporaries' folder is excluded again whenever a write makes
    /// it). Marked at every open, so that a root made before the mark existed gets it too.
    ///
    /// - Returns: `nil`, or the error every write will throw when the root exists but refuses
    ///   writes.
    /// - Throws: ``StorageError`` when the root cannot be used at all.
    /// - Complexity: Blocking file I/O: a few `mkdir` calls.
    static func makeInternalFolder(rootPath: String, fileSystem: FileSystem) throws -> StorageError? {
        do {
            try fileSystem.makeDirectories(rootPath + "/.archivist/trash")
            allowAccessAfterFirstUnlock(folder: rootPath + "/.archivist", fileSystem: fileSystem)
            BackupExclusion.exclude(folder: rootPath + "/.archivist")
            BackupExclusion.exclude(folder: rootPath + "/" + temporariesFolderName)  // no-op while missing
            return nil
        } catch let error as StorageError where refusesWrites(error) && isFolder(rootPath) {
            return error
        }
    }

    /// Opens the marker, below `root` when given, for writing; when the root refuses writes
    /// (`refusal`, or the open's own error) but exists, opens it (if there is one) for reading
    /// instead.
    ///
    /// - Returns: The marker's descriptor (-1 when a read-only root has none) and, for a
    ///   read-only root, the error every write will throw.
    /// - Throws: ``StorageError`` when the marker cannot be opened at all.
    /// - Complexity: Blocking file I/O: an `open` or two.
    static func openMarker(
        rootPath: String,
        refusal: StorageError?,
        fileSystem: FileSystem,
        below root: AtomicFile.Root?
    ) throws -> (fd: Int32, writeRefusal: StorageError?) {
        let marker = rootPath + "/.archivist/dirty"
        var refusal = refusal
        if refusal == nil {
            let fd = fileSystem.openCreatingPrivately(marker, O_RDWR | O_CLOEXEC, below: root)
            if fd >= 0 { return (fd, nil) }
            let error = StorageError.posix("open index marker", path: marker, errno: errno)
            guard refusesWrites(error) else { throw error }
            refusal = error
        }
        // A root without a marker was never written by a crashed process: its index (if any)
        // is as good as a clean one.
        let fd = fileSystem.open(marker, O_RDONLY | O_CLOEXEC, 0, below: root)
        if fd < 0 && errno != ENOENT { throw StorageError.posix("open index marker", path: marker, errno: errno) }
        var readOnly = refusal!
        readOnly.message = "the cache root refuses writes, so it was opened for reading only (\(readOnly.message))"
        return (fd, readOnly)
    }

    /// Gives the internal folder Data Protection class C where the platform has classes, so
    /// the index and the temporaries made in it stay readable to the app's extensions while
    /// the device is locked, whatever class the creating process runs with.
    private static func allowAccessAfterFirstUnlock(folder: String, fileSystem: FileSystem) {
        #if canImport(Darwin)
        let fd = fileSystem.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0)
        guard fd >= 0 else { return }
        _ = archivist_allow_access_after_first_unlock(fd)
        _ = fileSystem.close(fd)
        #endif
    }

    private static func refusesWrites(_ error: StorageError) -> Bool {
        error.code == .readOnlyFileSystem || error.code == .permissionDenied
    }

    private static func isFolder(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }
}
