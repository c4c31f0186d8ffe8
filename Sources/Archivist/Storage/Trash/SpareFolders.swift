import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Emptied folders a store keeps for reuse, in `.archivist/spare`: the trash's walk moves a
/// large emptied folder there instead of removing it, and the next write that needs a new
/// entry folder moves a spare into place instead of making one with `mkdir`.
///
/// Why: ext4 never shrinks a folder, and inserting into a folder that once held many names is
/// much cheaper than into a new one filling densely. A hand-written cache that clears by
/// unlinking its files keeps that folder; ours moves the folder into the trash (O(1), atomic
/// across processes), so without spares every fill after a clear starts dense (the
/// `cache-shapes` suite's 100 KB fill, made after a clear, guards it).
///
/// Layout and rules, all of them safe with several processes and a kill at any instruction:
/// - Only folders of items a clear put in the trash are kept (``clearedPrefix``): never a
///   link, a file, a folder of another user, or a foreign folder moved out of an entry's way.
/// - A spare sits in one of ``slots`` slots, `.archivist/spare/0` … `3`. Keeping renames an
///   emptied folder into a free slot with a rename that never replaces (``FileSystem/renameExclusive``):
///   at most ``slots`` spares, each of at most ``maximumSize`` bytes of folder (`st_size`),
///   so the disk they hold is bounded. Only folders that grew past one block
///   (`st_blksize`) are kept: a fresh folder is as good as a small one, and a file system
///   that shrinks folders as they empty (btrfs, tmpfs, APFS) keeps none.
/// - Claiming renames a slot to a name of this process (``TemporaryName``), exclusively: of
///   two processes, one wins and the other finds the slot gone. The winner checks it is a
///   folder of its own user, repairs its mode to 0700, reads it empty from its start, and only
///   then renames it to the entry folder, again without replacing: a folder another process
///   made there first is used, and the spare goes back to a slot (or is removed). A spare with
///   anything in it is never used: it goes into the trash.
/// - Only a walk of the trash alone in it keeps folders (it holds `.archivist/trash.lock`
///   exclusively; a walk that finds another under way waits for it shared and keeps nothing):
///   a folder of the trash another walk has open must never become an entry folder, as that
///   walk would delete the entries written into it.
/// - A claim left by a killed process (its owner dead, or changed more than
///   ``TemporaryName/abandonAge`` ago) and anything else in the spare area that is not a
///   spare goes into the trash on the next emptying (``sweep(below:)``), where it is deleted, or
///   kept again once emptied.
/// - The spare area is under `.archivist`, which no scan, size or sweep of entries enters: a
///   spare is never counted and never read as an entry. It goes with the store's root.
///
/// Where the rename that never replaces is not supported (`EINVAL`, `ENOSYS`, `ENOTSUP`),
/// nothing is kept or claimed: emptied folders are removed, and new ones made with `mkdir`.
///
/// <!-- snippet: skip emptyTrash() is internal to the module -->
/// ```swift
/// try spares.emptyTrash()                                            // keeps large folders
/// try spares.makeFolder(rootPath + "/shared-caches/" + digest)        // a spare, or mkdir
/// ```
package final class SpareFolders: Sendable {
    /// How many spares the area holds at most.
    package static let slots = 4

    /// The largest folder kept (its `st_size`): 2 MiB, about 50,000 names of 32 characters on
    /// ext4. Larger ones are removed, so spares never hold much disk.
    package static let maximumSize: Int64 = 2 << 20

    /// The start of the name a clear gives a folder it moves into the trash: only folders
    /// in such an item are kept, never a foreign folder moved out of an entry's way, nor
    /// anything else put in the trash.
    package static let clearedPrefix = "cleared-"

    /// A fresh name for an item moved into the trash, starting with ``clearedPrefix`` when the
    /// folders in it may be kept once emptied.
    static func trashItemName(keepable: Bool) -> String {
        (keepable ? clearedPrefix : "") + String(UInt64.random(in: .min ... .max), radix: 16)
    }

    /// The spare area: `.archivist/spare`.
    package let path: String
    /// The store's trash, where a spare that cannot be used goes.
    let trashPath: String
    /// The file every walk of the trash locks (`.archivist/trash.lock`): exclusively to keep
    /// folders, shared otherwise (see ``emptyTrash(shouldStop:)``).
    let lockPath: String
    let fileSystem: FileSystem
    /// The store's trash queue, which empties the trash after a spare was put there.
    let queue: DispatchQueue
    /// The store's root (see ``AtomicFile/Root``), which every walk goes through while the
    /// folder it opened is still the store's (``AtomicFile/Root/holdsStore(internalPath:)``);
    /// `nil` when the store has none. Held here, so work queued on the trash queue keeps the
    /// descriptor open.
    let openRoot: OpenRoot?
    /// The store's internal folder, `.archivist`.
    let internalPath: String
    /// The slots' paths, made once.
    private let slotPaths: [String]
    /// See ``trashLockHolds``.
    let holds = Locked(TrashLockHolds())
    /// See ``trashFailures``.
    let failures = Locked(TrashFailures())

    /// The spares of the store whose internal folder is `internalPath`, below `openRoot` (its
    /// descriptor, when the store keeps one: the file system allows root-relative calls).
    init(internalPath: String, fileSystem: FileSystem, queue: DispatchQueue, openRoot: OpenRoot? = nil) {
        path = internalPath + "/spare"
        trashPath = internalPath + "/trash"
        lockPath = internalPath + "/trash.lock"
        self.internalPath = internalPath
        self.fileSystem = fileSystem
        self.queue = queue
        self.openRoot = fileSystem.allowsRootRelativeCalls ? openRoot : nil
        slotPaths = (0..<Self.slots).map { [path] in path + "/" + String($0) }
    }

    // MARK: Keeping

    /// Whether an emptied folder with `status`, in (or being) the trash's item `item`, is
    /// worth keeping: a folder of this process's user in an item a clear put in the trash,
    /// grown past one block and at most ``maximumSize``.
    func wantsToKeep(_ status: stat, inTrashItem item: UnsafePointer<CChar>) -> Bool {
        guard strncmp(item, Self.clearedPrefix, Self.clearedPrefix.utf8.count) == 0,
            status.st_mode & S_IFMT == S_IFDIR, status.st_uid == geteuid()
        else { return false }
        let size = Int64(status.st_size)
        return size > Int64(status.st_blksize) && size <= Self.maximumSize
    }

    /// Moves the emptied folder `name` of the open folder `parent` into a free slot, the spare
    /// area reached from `root` (by its path without one).
    ///
    /// - Returns: Whether it was moved; `false` when every slot is taken, the folder is gone,
    ///   or the rename is refused (the caller removes it then).
    /// - Complexity: Up to ``slots`` renames, and a `mkdir` when the area is missing.
    func keep(_ name: String, in parent: Int32, below root: AtomicFile.Root?) -> Bool {
        var madeArea = false
        var slot = 0
        while slot < Self.slots {
            let renamed =
                root.map { fileSystem.renameExclusive(parent, name, $0.descriptor, $0.relative(slotPaths[slot])) }
                ?? fileSystem.renameExclusive(parent, name, AT_FDCWD, slotPaths[slot])
            if renamed == 0 { return true }
            switch errno {
            case EEXIST, ENOTEMPTY:
                slot += 1
            case ENOENT where !madeArea:
                // The area is missing (or the folder is gone: the next try says so again).
                // Not `makeDirectories`: a root deleted meanwhile must stay deleted.
                madeArea = true
                guard fileSystem.makeDirectory(path, below: root) || errno == EEXIST else { return false }
            default:
                return false
            }
        }
        return false
    }

    /// Moves whatever in the spare area is not a spare into the trash, before the trash is
    /// emptied: claims of dead processes (or older than ``TemporaryName/abandonAge``),
    /// anything in a slot that is not a folder, and names that are neither.
    ///
    /// - Complexity: One read of the spare area (a few names) and an `lstat` per name.
    func sweep(below root: AtomicFile.Root?) {
        guard let dir = DirectoryEntries.open(path, below: root, noFollow: true) else { return }
        var names: [String] = []
        while let item = readdir(dir) {
            let name = DirectoryEntries.name(of: item)
            if !DirectoryEntries.isDotOrDotDot(name) { names.append(String(cString: name)) }
        }
        closedir(dir)
        let now = TemporaryName.currentTime()
        for name in names {
            let item = path + "/" + name
            var status = stat()
            guard lstat(item, below: root, &status) == 0 else { continue }
            if slotPaths.contains(item) {
                if status.st_mode & S_IFMT == S_IFDIR { continue }
            } else if AtomicFile.isTemporary(name[...]) && status.st_mode & S_IFMT == S_IFDIR {
                let dead = TemporaryName.Owner(name: name[...]).map(TemporaryName.isDead) ?? false
                guard dead || now - TemporaryName.changeTime(status) > TemporaryName.abandonAge else { continue }
            }
            // A claim was a spare: it may be kept again once emptied; a stray may not.
            _ = moveToTrash(item, keepable: AtomicFile.isTemporary(name[...]), below: root)
        }
    }

    // MARK: Claiming

    /// Makes the folder `folder` for an entry, its parents as needed: a spare moved into place
    /// when one is free, else `mkdir` (``FileSystem/makeDirectories(_:below:)``). A folder
    /// another process made meanwhile is used as is. With `root`, every call goes through the
    /// root's descriptor (the spare area and `folder` are both below it).
    ///
    /// - Throws: ``StorageError`` as ``FileSystem/makeDirectories(_:below:)`` (with `root`,
    ///   `ENOENT` when the root was removed); a failed claim is never an error, it falls back
    ///   to `mkdir`.
    /// - Complexity: Up to ``slots`` renames; when a spare is claimed, an `open`, `fstat`, a
    ///   read of the spare (its size, not its entries: it is empty) and a rename more.
    package func makeFolder(_ folder: String, below root: AtomicFile.Root? = nil) throws {
        let root = fileSystem.allowsRootRelativeCalls ? root : nil
        if claim(into: folder, below: root) { return }
        try fileSystem.makeDirectories(folder, below: root)
    }

    /// Claims a spare and moves it to `folder`.
    ///
    /// - Returns: Whether `folder` now exists (moved there, or made by another process).
    func claim(into folder: String, below root: AtomicFile.Root?) -> Bool {
        for slot in 0..<Self.slots {
            let claimed = path + "/" + TemporaryName.make()
            guard fileSystem.renameExclusive(slotPaths[slot], claimed, below: root) == 0 else {
                switch errno {
                case ENOENT, ENOTDIR, EEXIST: continue  // a free slot, or no spare area
                default: return false  // unsupported, or failing: mkdir
                }
            }
            guard isEmptyPrivateFolder(claimed, below: root) else {
                // Never used with anything in it, nor another user's: deleted with the trash.
                if moveToTrash(claimed, keepable: false, below: root) {
                    queue.async { [self] in emptyTrashInBackground() }
                }
                continue
            }
            switch place(claimed, at: folder, below: root) {
            case .placed:
                return true
            case .taken:
                giveBack(claimed, below: root)
                return true
            case .failed:
                giveBack(claimed, below: root)
                return false
            }
        }
        return false
    }

    private enum Placement { case placed, taken, failed }

    /// Renames the claimed spare to `folder` without replacing anything, making `folder`'s
    /// parents first when they are missing.
    private func place(_ claimed: String, at folder: String, below root: AtomicFile.Root?) -> Placement {
        var madeParents = false
        while true {
            if fileSystem.renameExclusive(claimed, folder, below: root) == 0 { return .placed }
            let code = errno
            switch code {
            case EEXIST, ENOTEMPTY:
                return .taken
            case ENOENT where !madeParents:
                madeParents = true
                guard let parent = AtomicFile.folder(of: folder), !parent.isEmpty,
                    (try? fileSystem.makeDirectories(parent, below: root)) != nil
                else { return .failed }
            default:
                return .failed
            }
        }
    }

    /// Returns a claimed spare not used to a free slot, or removes it.
    private func giveBack(_ claimed: String, below root: AtomicFile.Root?) {
        for slot in slotPaths where fileSystem.renameExclusive(claimed, slot, below: root) == 0 { return }
        if fileSystem.removeDirectory(claimed, below: root) != 0 {
            _ = moveToTrash(claimed, keepable: true, below: root)
        }
    }

    /// Whether the folder at `path` (opened from `root` when given) is a folder (not a link) of
    /// this process's user with nothing in it; its mode is made 0700 if it is not (as
    /// ``FileSystem/makeDirectories(_:)`` does for a folder it makes).
    func isEmptyPrivateFolder(_ path: String, below root: AtomicFile.Root?) -> Bool {
        let fd = openFolder(path, below: root, noFollow: true)
        guard fd >= 0 else { return false }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == geteuid(),
            status.st_mode & 0o7777 == 0o700 || fchmod(fd, 0o700) == 0,
            let dir = fdopendir(fd)
        else {
            _ = close(fd)
            return false
        }
        defer { closedir(dir) }
        return DirectoryEntries.readsEmpty(dir)
    }
}
