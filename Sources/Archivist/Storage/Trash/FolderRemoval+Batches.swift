#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension FolderRemoval {
    /// How many entries a removal in ``Batches`` reads (and deletes, enters or keeps) per
    /// batch: what one hold of the trash lock covers, whatever the trash holds. A few
    /// milliseconds of `unlink`s on a phone; guarded by `LockHoldTests`.
    static let batchSize = 256

    /// The folder size (`st_size`) past which ``Batches`` sets an emptied folder aside rather
    /// than remove it inside the batch: removing a folder costs with the names it once held
    /// (ext4 frees its blocks then), too long a lock hold for a folder that held many, so the
    /// caller removes it once its lock is released. Guarded by `LockHoldTests`.
    static let largeFolderSize: Int64 = 64 << 10

    /// Deletes everything inside a folder as ``removeContents(of:below:keeping:)`` does, a
    /// batch of at most ``batchSize`` entries at a time, so that a lock taken around each batch
    /// is held for a bounded time whatever the folder holds, and released between batches.
    ///
    /// Between batches the walk keeps its folders open, and another walk may run meanwhile —
    /// one that keeps emptied folders as spares, which a write may then fill with new entries.
    /// So each batch after the first starts with ``resume()``: a folder the walk holds open is
    /// only used again if it is still where the walk found it, below the folder being emptied;
    /// else the walk starts over from the top, where everything left still is.
    ///
    /// ```swift
    /// var removal = try FolderRemoval.Batches(of: trashPath)
    /// defer { removal.close() }
    /// while try !lock.withExclusive({ removal.resume(); return try removal.next(keeping: nil) }) {}
    /// ```
    struct Batches {
        private var walk: RemovalWalk

        /// A removal of what is inside `path` (opened from `root` when given); a missing folder
        /// is already empty.
        ///
        /// - Throws: ``StorageError`` when `path` exists but cannot be opened.
        init(
            of path: String,
            below root: AtomicFile.Root? = nil,
            willRemoveFolder: ((String) -> Void)? = nil
        ) throws {
            walk = try RemovalWalk(root: path, below: root, willRemoveFolder: willRemoveFolder)
        }

        /// How many entries the removal deleted (or kept as spares) so far.
        var removed: Int { walk.removed }

        /// Before a batch after the first, with the same exclusion as the batches: goes on
        /// where the last batch stopped if every folder the walk holds open is still where it
        /// found it, else starts over — from the top when the folder being emptied is another
        /// one now.
        ///
        /// - Throws: ``StorageError`` when the folder now at the path cannot be opened.
        /// - Complexity: An `fstatat` per level of the walk's depth, and an `openat` of `..` per
        ///   level past ``openLevels``.
        mutating func resume() throws {
            switch walk.placement() {
            case .inPlace:
                return
            case .moved:
                walk.restart()
            case .rootReplaced:
                walk.closeAll()
                walk = try RemovalWalk(
                    root: walk.rootPath,
                    below: walk.below,
                    willRemoveFolder: walk.willRemoveFolder,
                    carrying: walk
                )
            }
        }

        /// Runs one batch: up to ``batchSize`` entries, folders worth keeping offered to
        /// `spares` (``removeContents(of:below:keeping:)``; `nil` keeps none, as a walk that is
        /// not alone must). An emptied folder larger than ``largeFolderSize`` that is not kept
        /// goes to `setAside` (with the descriptor of the folder holding it, and its name),
        /// which moves it out of the way for its removal after the batch and says whether it did;
        /// else it is removed in the batch.
        ///
        /// - Returns: Whether the folder is now empty (or the walk could do no more); the
        ///   folders it holds are closed then.
        /// - Throws: Once the walk is done, as ``removeContents(of:below:keeping:)``.
        mutating func next(
            keeping spares: SpareFolders?,
            settingAside setAside: ((_ folder: Int32, _ name: String) -> Bool)? = nil
        ) throws -> Bool {
            walk.spares = spares
            walk.setAside = setAside
            defer { walk.setAside = nil }
            return try walk.run(steps: FolderRemoval.batchSize)
        }

        /// Closes what the removal holds open (a removal given up before its end).
        mutating func close() { walk.closeAll() }
    }
}

extension RemovalWalk {
    /// Where the folders the walk holds open are now (see ``placement()``).
    enum Placement {
        /// Each is still the entry of its name in the folder above it, up to the walked folder,
        /// which is still the one at its path.
        case inPlace
        /// The walked folder is, but a folder below it is no longer where the walk found it.
        case moved
        /// Another folder (or nothing) is at the walked folder's path now.
        case rootReplaced
    }

    /// Where the folders the walk holds open are now: checked, between two batches, before the
    /// walk deletes anything through them again. A folder another walk emptied and kept as a
    /// spare (and a write may have filled since) is no longer in the folder above it.
    ///
    /// - Complexity: An `lstat`, and an `fstatat` per level below the root, plus an `openat` of
    ///   `..` per level whose folder the walk closed (past ``FolderRemoval/openLevels``).
    func placement() -> Placement {
        guard let first = levels.first else { return .inPlace }  // nothing left open
        var status = stat()
        guard lstat(rootPath, below: below, &status) == 0, status.st_mode & S_IFMT == S_IFDIR,
            RemovalFolderID(status) == first.id
        else { return .rootReplaced }
        guard levels.count > 1 else { return .inPlace }
        // From the deepest level (always open) up: each folder is the entry of its name in the
        // one above; a folder above that the walk closed is reached through `..` and must be
        // the one it left.
        var folder = levels[levels.count - 1].fd
        var opened: Int32 = -1  // a folder above, opened here: closed once past it
        defer { if opened >= 0 { _ = close(opened) } }
        for depth in stride(from: levels.count - 1, through: 1, by: -1) {
            let parent: Int32
            if levels[depth - 1].stream != nil {
                parent = levels[depth - 1].fd
            } else {
                let fd = openat(folder, "..", Self.folderFlags)
                guard fd >= 0 else { return .moved }
                if opened >= 0 { _ = close(opened) }
                opened = fd
                guard fstat(fd, &status) == 0, RemovalFolderID(status) == levels[depth - 1].id else { return .moved }
                parent = fd
            }
            let found = levels[depth].name.withUnsafeBufferPointer {
                fstatat(parent, $0.baseAddress!, &status, AT_SYMLINK_NOFOLLOW) == 0
            }
            guard found, status.st_mode & S_IFMT == S_IFDIR, RemovalFolderID(status) == levels[depth].id else {
                return .moved
            }
            folder = parent
        }
        return .inPlace
    }
}
