import Foundation

/// Replacing a plist file: its new version written and synced before the file's lock, renamed
/// under it (see ``replace(_:with:deciding:)``).
extension PlistStore {
    /// What ``replace(_:with:deciding:)`` does once it holds the file's lock.
    enum Replacement {
        /// Rename the new version over the file.
        case write
        /// Leave the file as it is (it is already what the caller wants).
        case keep
        /// Leave the file as it is: another writer changed it since the caller read it.
        case retry
    }

    /// Replaces the file at `url` with `root`, unless `decide` — run under the file's lock on
    /// the stamp of the file's current version (`nil`: there is no file) — says otherwise.
    /// Without `decide` the file is replaced whatever it holds (even a file that does not
    /// parse).
    ///
    /// The new version is encoded, written to a temporary and synced *before* the lock, so no
    /// hold of the lock waits for the disk (iOS terminates a suspended app that holds a file
    /// lock in a shared container, `0xdead10cc`); under it come only a `stat`, the rename and
    /// the time stamp — the file is never read there: the stamp alone tells whether another
    /// writer came first (see ``FileStamp``). The folder's sync follows the release. Lost
    /// updates are excluded: the rename happens only if `decide` accepted the stamp
    /// the lock found, which the caller compares with the one its change was made on. A
    /// temporary not renamed is deleted.
    ///
    /// - Returns: What `decide` said, and the file's root: as written, or (when not written)
    ///   as it is after the lock, read then.
    /// - Throws: ``StoreError`` naming the file; what `decide` throws. A failed folder sync
    ///   comes after the rename (the message says the new contents are in place).
    /// - Complexity: O(n) in `root`'s size, blocking file I/O with two syncs, neither under the
    ///   lock; under it, a `stat`, a `rename` and a `utimensat`.
    func replace(
        _ url: URL,
        with root: [String: PlistValue],
        durability: Durability = .fileAndFolder,
        deciding decide: ((FileStamp?) throws -> Replacement)? = nil
    ) throws -> (replacement: Replacement, snapshot: PlistSnapshot) {
        let data = try encode(root, for: url)
        // As a read will see it: XML keeps dates to the second, so an XML file is decoded
        // again; binary keeps every value exactly.
        let asRead = format == .binary ? root : try? Self.decodeRoot(data, from: url)
        let prepared = try StoreFile.prepareReplacement(data, for: url, durability: durability, fileSystem: fileSystem)
        var renamed = false
        defer { if !renamed { prepared.discard(fileSystem) } }
        let (replacement, written) = try PlistFileLock.withExclusive(forPlistAt: url) {
            () throws -> (Replacement, PlistSnapshot?) in
            let stamp = try FileStamp.of(url)
            let replacement = try decide?(stamp) ?? .write
            guard replacement == .write else { return (replacement, nil) }
            do {
                try StoreFile.rename(prepared, for: url, fileSystem: fileSystem)
            } catch {
                // The rename may have happened all the same: keep the stamps increasing.
                _ = FileStamp.makeNewer(url, than: stamp)
                forget(url)
                throw error
            }
            renamed = true
            return (.write, remember(asRead, writtenTo: url, replacing: stamp))
        }
        guard let written else {
            return (replacement, try currentSnapshot(at: url) ?? PlistSnapshot(stamp: nil, root: [:]))
        }
        defer { Self.signalChange(of: url) }
        do {
            try StoreFile.syncFolder(prepared, for: url, fileSystem: fileSystem)
        } catch {
            forget(url)
            throw error
        }
        return (.write, written)
    }

    /// Replaces the file with `data` (the encoding of `root`) and remembers the new version,
    /// every step under the file's lock, syncs included: for the last resort of
    /// ``modify(_:_:)`` only (see ``replace(_:with:deciding:)``, which every other write uses).
    /// Call holding the file's lock, with the stamp of the version being replaced.
    func write(
        _ data: Data,
        of root: [String: PlistValue],
        to url: URL,
        replacing previous: FileStamp?,
        durability: Durability = .fileAndFolder
    ) throws -> PlistSnapshot {
        defer { Self.signalChange(of: url) }
        do {
            try StoreFile.writeAtomically(data, to: url, durability: durability, fileSystem: fileSystem)
        } catch {
            // The rename may have happened (a failed folder sync): keep the stamps increasing.
            _ = FileStamp.makeNewer(url, than: previous)
            forget(url)
            throw error
        }
        return written(data, of: root, to: url, replacing: previous)
    }

    /// After the file was replaced with `data` (the encoding of `root`), under its lock: makes
    /// its stamp newer than `previous`'s and remembers the new version as a read will see it.
    private func written(
        _ data: Data,
        of root: [String: PlistValue],
        to url: URL,
        replacing previous: FileStamp?
    ) -> PlistSnapshot {
        remember(format == .binary ? root : try? Self.decodeRoot(data, from: url), writtenTo: url, replacing: previous)
    }

    /// After the file was replaced, under its lock: makes its stamp newer than `previous`'s and
    /// remembers `root` (`nil` when it cannot be known: the next read parses the file) as the
    /// new version's root.
    private func remember(
        _ root: [String: PlistValue]?,
        writtenTo url: URL,
        replacing previous: FileStamp?
    ) -> PlistSnapshot {
        let stamp = FileStamp.makeNewer(url, than: previous)
        guard let root else {
            forget(url)  // cannot happen for data just encoded; the next read parses the file
            return PlistSnapshot(stamp: nil, root: [:])
        }
        let snapshot = PlistSnapshot(stamp: stamp, root: root)
        remember(snapshot, for: url)
        return snapshot
    }

    /// Tells the processes observing the plist at `url` (``Preferences/changes(pollingInterval:)``)
    /// that it was replaced: a Darwin notification on Apple platforms (``ChangeSignal/post()``);
    /// nothing on Linux, where the rename itself raises the `inotify` event.
    ///
    /// - Complexity: On Apple platforms one `stat` and one message to `notifyd`.
    static func signalChange(of url: URL) {
        #if canImport(Darwin)
        changeSignal(of: url).post()
        #endif
    }

    /// The change signal of the plist at `url`, named as of now: writers post it after each
    /// write, ``Preferences`` change streams observe it (named once the folder exists, so
    /// that both sides use the folder's device and inode numbers).
    ///
    /// - Complexity: One `stat` of the folder.
    static func changeSignal(of url: URL) -> ChangeSignal {
        ChangeSignal(folder: url.deletingLastPathComponent().path, fileName: url.lastPathComponent)
    }
}
