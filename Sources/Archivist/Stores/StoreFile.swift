import Foundation

/// The stores' file access: the storage layer's ``AtomicFile`` primitives, with its
/// ``StorageError``s translated into ``StoreError``s that name the same file.
enum StoreFile {
    /// Reads the whole file at `url`, or returns `nil` when it does not exist.
    ///
    /// - Throws: ``StoreError`` (`permissionDenied`, `ioFailed`) naming the file.
    /// - Complexity: O(n) blocking file I/O.
    static func contents(of url: URL) throws -> Data? {
        do {
            return try AtomicFile.read(path: url.path).map { Data($0) }
        } catch {
            throw storeError(error, "cannot read", url)
        }
    }

    /// Reads the whole file at `url` with the ``FileStamp`` of the version read, or returns
    /// `nil` when it does not exist. The stamp is `nil` when the file changed while it was
    /// read (the stamps before and after differ), so a caller never pairs contents with the
    /// stamp of another version.
    ///
    /// - Throws: ``StoreError`` (`permissionDenied`, `ioFailed`) naming the file.
    /// - Complexity: O(n) blocking file I/O, plus two `stat`s.
    static func stampedContents(of url: URL) throws -> (data: Data, stamp: FileStamp?)? {
        let before = try FileStamp.of(url)
        guard let data = try contents(of: url) else { return nil }
        let after = try FileStamp.of(url)
        return (data, before == after ? after : nil)
    }

    /// Replaces the file at `url` with `data` atomically through ``AtomicFile``: a temporary
    /// file (0600) in the same folder, `fsync`, rename, and a sync of the folder (fewer or
    /// stronger syncs when `durability` says so), so a reader
    /// sees the old contents or the new even if the process dies midway, and the new file
    /// survives a power loss. A missing folder is created 0700.
    ///
    /// - Throws: ``StoreError`` (`permissionDenied`, `noSpace`, `ioFailed`) naming the file.
    /// - Complexity: O(n) blocking file I/O plus two syncs.
    static func writeAtomically(
        _ data: Data,
        to url: URL,
        durability: Durability = .fileAndFolder,
        fileSystem: FileSystem = .posix
    ) throws {
        do {
            try AtomicFile.write(data, to: url, durability: durability, fileSystem: fileSystem)
        } catch {
            throw storeError(error, "cannot write", url)
        }
    }

    /// The first half of ``writeAtomically(_:to:fileSystem:)``: writes `data` to a fresh temporary
    /// (0600) beside the file at `url` and syncs it as `durability` asks (``Durability``;
    /// `.fileAndFolder` by default), making the folder (0700) when it is missing. A plist's
    /// writers call it
    /// before taking the file's lock, so no hold of the lock waits for the disk; the rename
    /// (``rename(_:for:fileSystem:)``) follows under the lock, and the folder's sync
    /// (``syncFolder(_:for:fileSystem:)``) after it.
    ///
    /// - Throws: ``StoreError`` (`permissionDenied`, `noSpace`, `ioFailed`) naming the file; no
    ///   temporary is left then.
    /// - Complexity: O(n) blocking file I/O plus a sync.
    static func prepareReplacement(
        _ data: Data,
        for url: URL,
        durability: Durability = .fileAndFolder,
        fileSystem: FileSystem
    ) throws -> AtomicFile.Prepared {
        do {
            return try data.withUnsafeBytes { raw in
                try AtomicFile.prepare([raw], toPath: url.path, durability: durability, fileSystem: fileSystem)
            }
        } catch {
            throw storeError(error, "cannot write", url)
        }
    }

    /// Renames a temporary from ``prepareReplacement(_:for:fileSystem:)`` over the file at
    /// `url`: a reader sees the old contents or the new.
    ///
    /// - Throws: ``StoreError`` naming the file; the temporary stays then (the caller discards it).
    /// - Complexity: One `rename`.
    static func rename(_ prepared: AtomicFile.Prepared, for url: URL, fileSystem: FileSystem) throws {
        let renamed: Bool
        do {
            renamed = try prepared.rename(fileSystem)
        } catch {
            throw storeError(error, "cannot write", url)
        }
        guard renamed else {
            throw StoreError(.ioFailed, "cannot write: the temporary file vanished before its rename", fileURL: url)
        }
    }

    /// Syncs the folder of a file renamed into place (``rename(_:for:fileSystem:)``), so the
    /// new version survives a power loss.
    ///
    /// - Throws: ``StoreError`` naming the file, whose message says the new contents are in
    ///   place (they are, whatever the sync said).
    /// - Complexity: One `open`, a sync and a `close`.
    static func syncFolder(_ prepared: AtomicFile.Prepared, for url: URL, fileSystem: FileSystem) throws {
        if let failure = prepared.syncFolderIfAsked(fileSystem) { throw storeError(failure, "cannot write", url) }
    }

    /// Deletes temporary files left in `folder` by writes that died before their rename;
    /// temporaries of live writers, in this process or another, stay (see ``TemporaryName``).
    ///
    /// - Complexity: O(n) in the folder's entries; blocking file I/O. Errors are ignored.
    static func sweepTemporaries(in folder: URL) {
        TemporaryName.sweepAbandoned(inFolder: folder.path)
    }

    /// `error` as a ``StoreError`` naming `url`: a ``StorageError`` in the store's words
    /// (``StoreError/init(_:_:fileURL:)``), anything else as `ioFailed`.
    static func storeError(_ error: any Error, _ message: String, _ url: URL) -> StoreError {
        guard let storage = error as? StorageError else {
            return StoreError(.ioFailed, message, fileURL: url, underlyingError: error)
        }
        return StoreError(storage, message, fileURL: url)
    }
}
