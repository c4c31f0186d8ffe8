import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checking a root from outside its processes (`archivist verify`), and repairing what the
/// check found while they keep working: the same locks and the same one-file-at-a-time
/// discards as the store's own reads.
extension DiskStore {
    /// How a root's size index compares with its files.
    package struct IndexComparison: Sendable {
        /// Why the index could not be read, if it could not (then nothing else is filled in).
        package var unreadable: String?
        /// How many entries, and logical bytes, the index records.
        package var indexedEntries = 0
        package var indexedBytes: Int64 = 0
        /// Entry files (relative paths) the index does not record.
        package var unindexed: [String] = []
        /// Index records (relative paths) with no entry file.
        package var missing: [String] = []
        /// Entries whose recorded logical size is not the file's: path, recorded, on disk.
        package var wrongSize: [(path: String, indexed: Int64, onDisk: Int64)] = []

        /// Whether the index agrees with the files.
        package var agrees: Bool { unreadable == nil && unindexed.isEmpty && missing.isEmpty && wrongSize.isEmpty }
    }

    /// Compares the size index of the root at `rootPath` — the saved snapshot plus the shared
    /// journal, what every process of the root starts from — with `files` (relative path of
    /// each entry file to its logical size, from a walk made before this call).
    ///
    /// Reads under the root's lock held shared, so no write lands meanwhile; a difference that
    /// a write made after the walk explains (the file written or removed since) is checked
    /// again on the disk under the lock, and only one that stays is reported. Nothing is
    /// created but the lock file, if missing; nothing is changed.
    ///
    /// - Throws: ``StorageError`` when the lock cannot be taken.
    /// - Complexity: Blocking file I/O: reads the index and journal, O(entries); one `lstat`
    ///   per difference.
    package static func compareIndex(rootPath: String, files: [String: Int64]) throws -> IndexComparison {
        let lock = FileLock(path: rootPath + "/.archivist/lock")
        return try lock.withShared {
            var comparison = IndexComparison()
            guard let index = savedIndex(rootPath: rootPath, reason: &comparison.unreadable) else { return comparison }
            var indexed: [String: Int64] = [:]
            for folder in index.snapshot().folders {
                let path = folder.components.joined(separator: "/")
                let whole = folder.forEach { name, record in indexed[path + "/" + name.fileName] = record.logical }
                guard whole else {
                    comparison.unreadable =
                        "a page of the index snapshot (.archivist/index) is damaged; the next process to write rescans"
                    return comparison
                }
            }
            comparison.indexedEntries = indexed.count
            comparison.indexedBytes = indexed.values.reduce(0, +)
            func onDisk(_ path: String) -> Int64? {
                var status = stat()
                guard lstat(rootPath + "/" + path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
                return Int64(status.st_size)
            }
            for (path, size) in files where indexed[path] != size {
                let now = onDisk(path)
                let recorded = indexed[path]
                guard now != recorded else { continue }  // written or removed since the walk
                switch (recorded, now) {
                case (let recorded?, let now?): comparison.wrongSize.append((path, recorded, now))
                case (nil, .some): comparison.unindexed.append(path)
                case (.some, nil): comparison.missing.append(path)
                case (nil, nil): break
                }
            }
            for (path, recorded) in indexed where files[path] == nil {
                let now = onDisk(path)
                guard now != recorded else { continue }  // written since the walk
                if let now {
                    comparison.wrongSize.append((path, recorded, now))
                } else {
                    comparison.missing.append(path)
                }
            }
            comparison.unindexed.sort()
            comparison.missing.sort()
            comparison.wrongSize.sort { $0.path < $1.path }
            return comparison
        }
    }

    /// The index the root's processes share: the snapshot, if it is of the shared counters'
    /// epoch, with the journal applied; `nil` (and `reason`) when a rescan is due instead.
    private static func savedIndex(rootPath: String, reason: inout String?) -> PersistentIndex.SizeIndex? {
        let internalPath = rootPath + "/.archivist"
        // Stable under the lock held shared: the epoch and intent word change only under the
        // exclusive lock.
        guard let words = try? AtomicFile.read(path: internalPath + "/shared", limit: 64), words.count >= 32 else {
            reason = "no shared counters file (.archivist/shared)"
            return nil
        }
        func word(_ index: Int) -> UInt64 {
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(words[8 * index + $1]) << (8 * UInt64($1)) }
        }
        guard word(0) == SharedCounters.magic else {
            reason = "the shared counters file is of another layout; the next open reinitialises it and rescans"
            return nil
        }
        guard word(3) == 0 else {
            reason = "a writer stopped between a change and its journal record; the next process to write rescans"
            return nil
        }
        guard let bytes = try? AtomicFile.read(path: internalPath + "/index"),
            let (snapshot, epoch) = PersistentIndex.SizeIndex.deserialize(
                bytes,
                base: { epoch in
                    // An older layer the snapshot stacks on (``PersistentIndex/layerPath(of:)``).
                    let hex = String(epoch, radix: 16)
                    let name = "index." + String(repeating: "0", count: max(0, 16 - hex.count)) + hex
                    return try? AtomicFile.read(path: internalPath + "/" + name)
                }
            )
        else {
            reason = "no readable index snapshot (.archivist/index)"
            return nil
        }
        guard epoch == word(2) else {
            reason = "the index snapshot is of epoch \(epoch), the processes are at \(word(2)); the next open rescans"
            return nil
        }
        var index = snapshot
        let journal = (try? AtomicFile.read(path: internalPath + "/journal")) ?? []
        let decoded = PersistentIndex.decodeJournal(journal[...])
        guard !decoded.damaged else {
            reason = "the journal is damaged at byte \(decoded.consumed); the next process to write rescans"
            return nil
        }
        decoded.apply(to: &index)
        return index
    }

    /// What ``repairEntry(relativePath:)`` found.
    package enum EntryRepair: Sendable, Equatable {
        /// The entry is sound (it may have been replaced since it was found damaged).
        case sound
        /// Nothing is there any more.
        case gone
        /// The damaged file (or folder) was removed, for this reason.
        case removed(String)
    }

    /// Checks the entry at `relativePath` again, under its key's lock, and removes it if it is
    /// damaged: a bad header or checksum, names whose hashes are not its path's, or no regular
    /// file at all. Only the very file found damaged is removed, under the store's lock: an
    /// entry another process wrote since stays (as a read's discard does).
    ///
    /// - Throws: ``StorageError`` when the path is not an entry's, or the file cannot be read.
    /// - Complexity: Blocking file I/O: reads the entry, O(its size).
    package func repairEntry(relativePath: String) throws -> EntryRepair {
        let parts = relativePath.split(separator: "/")
        guard parts.count >= 2, parts.dropLast().allSatisfy({ $0.utf8.allSatisfy(FolderPath.isAllowed) }),
            let last = parts.last, let name = EntryName(fileName: last)
        else {
            throw StorageError(.fileSystem, "\(relativePath) is not an entry's path")
        }
        let key = DiskKey(folder: FolderPath(parts.dropLast().map(String.init)), name: name)
        let path = path(of: key)
        return try keyLocks.withLock(path) {
            var identity: FileIdentity?
            defer { identity?.unpin(fileSystem) }
            do {
                guard
                    let file = try AtomicFile.readBuffer(
                        path: path,
                        fileSystem: fileSystem,
                        below: root,
                        identity: &identity
                    )
                else { return .gone }
                let (header, _) = try EntryHeader.decode(
                    file.bytes,
                    payloadIncluded: true,
                    path: path,
                    fileChecksum: file.checksum
                )
                guard let problem = Self.keyProblem(header: header, key: key) else { return .sound }
                discard(key, path: path, identity: identity)
                return .removed(problem)
            } catch let error as StorageError where error.code == .corruptEntry {
                discard(key, path: path, identity: identity)
                return .removed(error.message)
            }
        }
    }

    /// Why an entry whose header records `header` does not belong at `key`, or `nil` when it
    /// does: its folder must be the MD5 of the type's name and its file name that of the
    /// parameter (or `value`).
    package static func keyProblem(header: EntryHeader, key: DiskKey) -> String? {
        if key.folder.components.last != MD5.hexDigest(of: header.typeName) {
            return "its folder is not the MD5 of its type name \"\(header.typeName)\""
        }
        if EntryName(parameter: header.parameter) != key.name {
            return "its file name is not the MD5 of its parameter"
        }
        return nil
    }

    /// Removes the temporary at `relativePath` if it is abandoned (its writer is dead, or it is
    /// older than ``TemporaryName/abandonAge``); a live writer's stays.
    ///
    /// - Returns: Whether it was removed.
    /// - Complexity: An `lstat`, at most one `kill(pid, 0)` and an `unlink`.
    package func removeAbandonedTemporary(relativePath: String) -> Bool {
        let path = rootPath + "/" + relativePath
        let name = relativePath.split(separator: "/").last ?? ""
        var status = stat()
        guard AtomicFile.isTemporary(name), lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
            TemporaryName.isAbandoned(name, modified: TemporaryName.modificationTime(status))
        else { return false }
        return fileSystem.unlink(path, below: workingRoot) == 0
    }

    /// Rebuilds the size index from the files, for every process, as a process that found a
    /// writer dead mid-change would: the intent word is set under a short exclusive hold, and
    /// the next catch-up — this flush's — repairs (a scan without the lock, a new snapshot and
    /// journal epoch installed under a short hold; the other processes reload it).
    ///
    /// - Throws: ``StorageError`` when the root refuses writes or the snapshot cannot be saved.
    /// - Complexity: Blocking file I/O: O(entries) for the scan, which holds no lock.
    package func rebuildIndex() throws {
        try index.rebuildByScan()
    }

    /// Deletes what is in the trash now and waits for it.
    ///
    /// - Complexity: Blocking: O(files in the trash).
    package func emptyTrashNow() {
        trash.empty(completion: nil)
        trash.waitUntilEmptied()
    }
}
