import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Spare folders (`SpareFolders`): the trash keeps large emptied folders, and a write needing a
/// new entry folder claims one instead of `mkdir` — never one with anything in it, never a
/// link, a file or another user's folder, at most `SpareFolders.slots` of them, never counted;
/// every failure of the new calls falls back to `mkdir`; two processes claiming at once and a
/// process killed while keeping or claiming leave a correct store.
///
/// Keeping needs a file system whose folders stay grown once emptied (ext4, the test machine's);
/// elsewhere (btrfs, tmpfs, APFS) nothing is kept, and the tests that need a spare say so and stop.
@Suite struct SpareFolderTests {
    /// Writes `count` small entries into `folder`, so that it grows past one block.
    func fill(_ store: DiskStore, _ folder: String, count: Int = 300) throws {
        for i in 0..<count {
            try store.write(
                Data(repeating: UInt8(truncatingIfNeeded: i), count: 100),
                to: key(folder, "\(i)"),
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
        }
    }

    func key(_ folder: String, _ name: String) -> DiskKey {
        DiskKey(folder: FolderPath(folder.split(separator: "/").map(String.init)), name: EntryName(parameter: name))
    }

    func inode(_ path: String) -> UInt64? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return UInt64(status.st_ino)
    }

    /// The names in the spare area.
    func spareNames(_ store: DiskStore) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: store.trash.spares.path)) ?? []).sorted()
    }

    /// The inodes of the kept spares.
    func spareInodes(_ store: DiskStore) -> Set<UInt64> {
        Set(spareNames(store).compactMap { inode(store.trash.spares.path + "/" + $0) })
    }

    /// Whether this file system keeps an emptied folder's size (else nothing is ever kept).
    /// Whether a folder keeps its grown size after its files are removed on the file system
    /// of the temporary folder (ext4 and XFS keep it; tmpfs, APFS and btrfs shrink it), which
    /// is what makes an emptied folder worth keeping as a spare. Probed once.
    static let foldersStayGrownHere: Bool = {
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("spare-probe-\(getpid())").path
        guard mkdir(probe, 0o700) == 0 else { return false }
        defer { _ = rmdir(probe) }
        let names = (0..<300).map { probe + "/" + String(repeating: "x", count: 32) + String($0) }
        for name in names { _ = close(open(name, O_WRONLY | O_CREAT, 0o600)) }
        for name in names { _ = unlink(name) }
        var status = stat()
        return stat(probe, &status) == 0 && Int64(status.st_size) > Int64(status.st_blksize)
    }()

    static let shrinkingFolders: Comment =
        "folders shrink back when emptied on this file system (tmpfs, APFS, btrfs): nothing is kept as a spare"

    func read(_ store: DiskStore, _ key: DiskKey) throws -> Data? {
        try store.read(key, typeName: "t", parameter: nil) { $0.payload }
    }

    func write(_ store: DiskStore, _ key: DiskKey, _ text: String) throws {
        try store.write(Data(text.utf8), to: key, typeName: "t", parameter: nil, expiry: nil, durability: .none)
    }

    /// A store on `dir` with `fileSystem`, its folder `a` (300 entries) cleared and the trash
    /// emptied: one spare, the old `a`, whose inode is returned.
    func storeWithASpare(_ dir: URL, fileSystem: FileSystem = .posix) throws -> (DiskStore, UInt64) {
        let store = try DiskStore.open(at: dir, fileSystem: fileSystem)
        try fill(store, "a")
        let old = try #require(inode(dir.path + "/a"))
        try store.clear([FolderPath(["a"])])
        store.waitForTrash()
        #expect(spareInodes(store) == [old])
        return (store, old)
    }

    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders)) func clearThenSetReusesTheEmptiedFolder() throws {
        try withTemporaryDirectory { dir throws in
            let (store, old) = try storeWithASpare(dir)
            #expect(spareNames(store) == ["0"])
            try write(store, key("a", "x"), "hello")
            #expect(inode(dir.path + "/a") == old)
            #expect(permissions(dir.path + "/a") == 0o700)
            #expect(try read(store, key("a", "x")) == Data("hello".utf8))
            #expect(spareNames(store).isEmpty)
            #expect(store.usage(of: FolderPath([])).entryCount == 1)
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(entryFiles(under: dir).values.reduce(0, +)))
        }
    }

    /// The benchmark's order through a `CacheManager`: `clear()` (all) moves the location
    /// folder into the trash with the type folder inside it; the type folder, emptied, is kept,
    /// and the next store's type folder is that very folder; `totalSize` counts only the value.
    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders)) func aCacheManagersTypeFolderIsReusedAfterClearingAll()
        throws
    {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(
                root: CacheRoot(directory: dir),
                configuration: .init(memoryCountLimit: 0)
            )
            for i in 0..<300 { try cache.store(Product(id: i, name: "p\(i)", price: 1), for: .hots, parameter: "\(i)") }
            let folder = dir.path + "/" + CacheLocation.sharedCaches.folderName + "/" + MD5.hexDigest(of: "hots")
            let old = try #require(inode(folder))
            try cache.clear()
            try cache.flush()
            try cache.store(Product(id: 1, name: "again", price: 2), for: .hots, parameter: "x")
            #expect(inode(folder) == old)
            #expect(
                try cache.value(Product.self, for: .hots, parameter: "x") == Product(id: 1, name: "again", price: 2)
            )
            #expect(cache.totalSize == entryFiles(under: dir).values.reduce(0, +))
            #expect(entryFiles(under: dir).count == 1)
        }
    }

    /// A spare whose parents are missing too (a folder two levels down, its parent cleared):
    /// the parents are made, the spare goes into place.
    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders)) func aSpareGoesUnderParentsMadeForIt() throws {
        try withTemporaryDirectory { dir throws in
            let (store, old) = try storeWithASpare(dir)
            try write(store, key("p/q", "x"), "deep")
            #expect(inode(dir.path + "/p/q") == old)
            #expect(try read(store, key("p/q", "x")) == Data("deep".utf8))
        }
    }

    /// A file planted in a spare: the set makes a clean folder, the value and the sizes are
    /// right, and the planted spare is deleted with the trash.
    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders)) func aSpareWithAFileNeverBecomesLive() throws {
        try withTemporaryDirectory { dir throws in
            let (store, _) = try storeWithASpare(dir)
            try Data("planted".utf8).write(to: URL(fileURLWithPath: store.trash.spares.path + "/0/planted"))
            try write(store, key("a", "x"), "hello")
            // Not by inode: the planted spare may be deleted before the clean folder is made,
            // and the file system may hand its inode number to the new folder.
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/a/planted"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/a").count == 1)
            #expect(try read(store, key("a", "x")) == Data("hello".utf8))
            #expect(store.usage(of: FolderPath([])).entryCount == 1)
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(entryFiles(under: dir).values.reduce(0, +)))
            store.waitForTrash()
            #expect(!allPaths(under: dir.appendingPathComponent(".archivist")).contains { $0.hasSuffix("planted") })
            #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
        }
    }

    /// In the trash: a link to a grown folder, a file, a small folder, a grown folder not put
    /// there by a clear (a foreign folder moved out of an entry's way), a grown folder of
    /// another user (as root) and one grown folder of ours a clear put there: only that one is
    /// kept; the link's target is untouched.
    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders)) func onlyLargeRealFoldersOfOursAreKept() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            try fill(store, "outside")
            try fill(store, "mine")
            let mine = try #require(inode(dir.path + "/mine"))
            let trash = store.trash.path
            try store.clear([FolderPath(["mine"])], completion: nil)
            store.waitForTrash()
            #expect(spareInodes(store) == [mine])
            // Empty the area again, then put each kind into the trash by hand.
            #expect(rename(store.trash.spares.path + "/0", trash + "/" + SpareFolders.clearedPrefix + "back") == 0)
            #expect(symlink(dir.path + "/outside", trash + "/" + SpareFolders.clearedPrefix + "link") == 0)
            try fill(store, "foreign")
            let foreignFolder = try #require(inode(dir.path + "/foreign"))
            #expect(rename(dir.path + "/foreign", trash + "/foreign") == 0)
            try Data("file".utf8).write(to: URL(fileURLWithPath: trash + "/" + SpareFolders.clearedPrefix + "file"))
            #expect(mkdir(trash + "/" + SpareFolders.clearedPrefix + "small", 0o700) == 0)
            var foreign: UInt64?
            if geteuid() == 0 {
                try fill(store, "theirs")
                foreign = inode(dir.path + "/theirs")
                #expect(rename(dir.path + "/theirs", trash + "/" + SpareFolders.clearedPrefix + "theirs") == 0)
                #expect(chown(trash + "/" + SpareFolders.clearedPrefix + "theirs", 65534, 65534) == 0)
            }
            try store.trash.spares.emptyTrash()
            #expect(spareInodes(store) == [mine])
            #expect(!spareInodes(store).contains(foreign ?? 0))
            #expect(!spareInodes(store).contains(foreignFolder))
            #expect(allPaths(under: URL(fileURLWithPath: trash)).isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/outside").count == 300)
            #expect(store.usage(of: FolderPath(["outside"])).entryCount == 300)
        }
    }

    /// A grown foreign folder at an entry's path, moved into the trash by the write that
    /// replaces it: deleted, never kept.
    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders)) func aForeignFolderOutOfAnEntrysWayIsNotKept() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let path = store.path(of: key("f", "x"))
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for i in 0..<300 {
                try Data().write(to: URL(fileURLWithPath: path + "/" + String(repeating: "y", count: 32) + String(i)))
            }
            for i in 0..<300 { _ = unlink(path + "/" + String(repeating: "y", count: 32) + String(i)) }
            try write(store, key("f", "x"), "entry")
            store.waitForTrash()
            #expect(spareNames(store).isEmpty)
            #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
            #expect(try read(store, key("f", "x")) == Data("entry".utf8))
        }
    }

    /// Six grown folders cleared: four spares, the rest removed; none is counted; they stay
    /// across a reopening and a rescan does not count them either.
    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders)) func theCapHoldsAndSparesAreNeverCounted() throws {
        try withTemporaryDirectory { dir throws in
            do {
                let store = try DiskStore.open(at: dir)
                for i in 0..<6 { try fill(store, "f\(i)") }
                try write(store, key("kept", "x"), "kept")
                try store.clear((0..<6).map { FolderPath(["f\($0)"]) })
                store.waitForTrash()
                #expect(spareNames(store) == ["0", "1", "2", "3"])
                #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
                #expect(store.usage(of: FolderPath([])).entryCount == 1)
                // One more grown folder: the area is full, it is removed.
                try fill(store, "g")
                try store.clear([FolderPath(["g"])])
                store.waitForTrash()
                #expect(spareNames(store).count == SpareFolders.slots)
                #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
            }
            let reopened = try DiskStore.open(at: dir)
            reopened.waitForTrash()
            #expect(spareNames(reopened).count == SpareFolders.slots)
            #expect(reopened.usage(of: FolderPath([])).entryCount == 1)
            #expect(try reopened.index.scan().usage(of: FolderPath([])).entryCount == 1)
            #expect(try read(reopened, key("kept", "x")) == Data("kept".utf8))
        }
    }

    /// Another process makes the entry folder between the claim and the rename into place
    /// (`EEXIST`): the set uses that folder and the spare goes back to the area.
    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders)) func aFolderMadeByAnotherProcessMeanwhileIsUsed() throws
    {
        try withTemporaryDirectory { dir throws in
            var fileSystem = FileSystem.posix
            let real = fileSystem.renameExclusive
            let target = dir.path + "/b"
            fileSystem.renameExclusive = { fromFolder, from, toFolder, to in
                // `to` is below the store's root descriptor (or, without one, a whole path).
                if to == "b" || to == target { _ = mkdir(target, 0o700) }  // another process, just before
                return real(fromFolder, from, toFolder, to)
            }
            let (store, old) = try storeWithASpare(dir, fileSystem: fileSystem)
            try write(store, key("b", "x"), "theirs")
            #expect(inode(target) != old)
            #expect(try read(store, key("b", "x")) == Data("theirs".utf8))
            #expect(spareInodes(store) == [old])
            #expect(!spareNames(store).contains { $0.hasPrefix(AtomicFile.temporaryPrefix) })
        }
    }

    /// Each new call failing: the set still succeeds through `mkdir`, no error reaches the
    /// caller, and nothing is left claimed.
    @Test(
        .enabled(if: foldersStayGrownHere, shrinkingFolders),
        arguments: ["unsupported", "claim fails", "placing fails", "give back fails", "trash refused"]
    )
    func failuresOfTheNewCallsFallBackToMkdir(_ fault: String) throws {
        try withTemporaryDirectory { dir throws in
            let armed = Locked(false)
            var fileSystem = FileSystem.posix
            let realRename = fileSystem.renameExclusive
            let realRemove = fileSystem.removeDirectory
            let plainRename = fileSystem.rename
            fileSystem.renameExclusive = { fromFolder, from, toFolder, to in
                if armed.withLock({ $0 }) {
                    let claiming = to.contains("/spare/" + AtomicFile.temporaryPrefix)
                    switch fault {
                    case "unsupported":
                        errno = EINVAL
                        return -1
                    case "claim fails" where claiming:
                        errno = EIO
                        return -1
                    // `to` is a whole path: this file system's `rename` is replaced, so the store
                    // makes no call below its root's descriptor.
                    case "placing fails" where !claiming && !to.contains("/.archivist/"):
                        errno = EACCES
                        return -1
                    case "give back fails" where !claiming:
                        if !to.contains("/.archivist/") {
                            _ = mkdir(to, 0o700)
                        }  // EEXIST, then no slot
                        else {
                            errno = EIO
                            return -1
                        }
                    default: break
                    }
                }
                return realRename(fromFolder, from, toFolder, to)
            }
            fileSystem.removeDirectory = { path in
                if armed.withLock({ $0 }) && fault == "give back fails" {
                    errno = EBUSY
                    return -1
                }
                return realRemove(path)
            }
            fileSystem.rename = { from, to in
                if armed.withLock({ $0 }) && fault == "trash refused" && to.contains("/.archivist/trash/") {
                    errno = EIO
                    return -1
                }
                return plainRename(from, to)
            }
            let (store, _) = try storeWithASpare(dir, fileSystem: fileSystem)
            if fault == "trash refused" {  // a spare that must not be used, which cannot be trashed
                try Data("planted".utf8).write(to: URL(fileURLWithPath: store.trash.spares.path + "/0/planted"))
            }
            armed.withLock { $0 = true }
            try write(store, key("c", "x"), "value")
            #expect(try read(store, key("c", "x")) == Data("value".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/c").count == 1)
            #expect(store.usage(of: FolderPath([])).entryCount == 1)
            // Nothing is kept while the exclusive rename is unsupported.
            if fault == "unsupported" {
                try fill(store, "d")
                try store.clear([FolderPath(["d"])])
                store.waitForTrash()
                #expect(spareNames(store) == ["0"])
                #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
            }
            armed.withLock { $0 = false }
            // A claim left by "give back fails" / "trash refused" is this live process's: kept
            // until it is dead or old; the next set still works.
            try write(store, key("e", "x"), "again")
            #expect(try read(store, key("e", "x")) == Data("again".utf8))
        }
    }

    // Starts worker processes: macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// Two processes writing into the same new folders while four spares wait: every entry
    /// lands and reads back, and each spare ends in one place at most.
    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders)) func twoProcessesClaimingAtOnceLoseNothing() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        try withTemporaryDirectory { dir throws in
            var spares: Set<UInt64> = []
            do {
                let store = try DiskStore.open(at: dir)
                for i in 0..<4 { try fill(store, "g\(i)") }
                try store.clear((0..<4).map { FolderPath(["g\($0)"]) })
                store.waitForTrash()
                spares = spareInodes(store)
                #expect(spares.count == 4)
            }
            let folders = 8
            let entries = 20
            let children = try ["w1", "w2"].map {
                try ChildProcess(worker, ["spare-claims", dir.path, $0, String(folders), String(entries)])
            }
            ChildProcess.waitForAll(children)
            let store = try DiskStore.open(at: dir)
            store.waitForTrash()
            for writer in ["w1", "w2"] {
                for folder in 0..<folders {
                    for i in 0..<entries {
                        #expect(
                            try read(store, key("s/\(folder)", "\(writer)-\(i)"))
                                == Data("\(writer) \(folder) \(i)".utf8)
                        )
                    }
                }
            }
            #expect(store.usage(of: FolderPath([])).entryCount == 2 * folders * entries)
            #expect(entryFiles(under: dir).count == 2 * folders * entries)
            let live = (0..<folders).compactMap { inode(dir.path + "/s/\($0)") }
            let places = live + Array(spareInodes(store))
            for spare in spares { #expect(places.filter { $0 == spare }.count <= 1) }
            #expect(live.filter { spares.contains($0) }.count >= 1)  // some folders came from spares
            #expect(!spareNames(store).contains { $0.hasPrefix(AtomicFile.temporaryPrefix) })
        }
    }

    /// A process killed while keeping (its emptied folder in the trash, about to move into the
    /// area), then one killed while claiming (the spare under its claim name): each time the
    /// store reopens with the right entries and sizes, and the leftover becomes a spare again.
    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders))
    func aProcessKilledWhileKeepingOrClaimingLeavesACorrectStore() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        try withTemporaryDirectory { dir throws in
            do {
                let store = try DiskStore.open(at: dir)
                try write(store, key("other", "x"), "other")
            }
            func run(_ point: String) throws {
                let ready = dir.path + "-ready"
                _ = unlink(ready)
                defer { _ = unlink(ready) }
                let child = try ChildProcess(worker, ["spare-stop", dir.path, ready, point])
                let deadline = ContinuousClock.now + .seconds(120)
                while access(ready, F_OK) != 0 && ContinuousClock.now < deadline { usleep(1_000) }
                let status = child.kill()
                try #require(status & 0x7F == SIGKILL, "the worker ended by itself, wait status \(status)")
            }
            try run("keep")
            var spare: UInt64?
            do {
                let store = try DiskStore.open(at: dir)
                store.waitForTrash()
                #expect(spareNames(store) == ["0"])  // kept by the reopening's emptying
                spare = inode(store.trash.spares.path + "/0")
                #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
                #expect(try read(store, key("other", "x")) == Data("other".utf8))
                #expect(store.usage(of: FolderPath([])).entryCount == 1)
            }
            try run("claim")
            let store = try DiskStore.open(at: dir)
            store.waitForTrash()
            #expect(!spareNames(store).contains { $0.hasPrefix(AtomicFile.temporaryPrefix) })
            #expect(spareInodes(store) == [spare ?? 0])  // the dead claim is a spare again
            #expect(try read(store, key("other", "x")) == Data("other".utf8))
            #expect(try read(store, key("n", "x")) == nil)
            #expect(store.usage(of: FolderPath([])).entryCount == entryFiles(under: dir).count)
            try write(store, key("n", "x"), "new")
            #expect(inode(dir.path + "/n") == spare)
            #expect(try read(store, key("n", "x")) == Data("new".utf8))
        }
    }
    #endif

    /// Another process's walk of the trash (holding the trash lock shared) may have any folder
    /// of the trash open and goes on deleting what it reads there: a folder kept meanwhile, then
    /// claimed as an entry folder, would lose new entries to that walk. So nothing is kept while
    /// another walk is under way; the folders are removed, and keeping resumes afterwards.
    @Test(.enabled(if: foldersStayGrownHere, shrinkingFolders)) func nothingIsKeptWhileAnotherWalkIsInTheTrash() throws
    {
        try withTemporaryDirectory { dir in
            let store = try DiskStore.open(at: dir)
            store.waitForTrash()
            try fill(store, "a")
            let lock = open(dir.path + "/.archivist/trash.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            try #require(lock >= 0 && flock(lock, LOCK_SH) == 0)
            try store.clear([FolderPath(["a"])])
            store.waitForTrash()
            #expect(spareNames(store).isEmpty)
            #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
            _ = close(lock)  // the other walk ends
            try fill(store, "b")
            let old = try #require(inode(dir.path + "/b"))
            try store.clear([FolderPath(["b"])])
            store.waitForTrash()
            #expect(spareInodes(store) == [old])
        }
    }

    /// A walk that cannot open the trash lock for want of descriptors (`EMFILE`) cannot tell
    /// whether a keeping walk is under way: it leaves the trash to the next emptying rather than
    /// walk it unlocked (it could hold open a folder the other walk keeps, see above).
    @Test func aWalkThatCannotLockLeavesTheTrash() throws {
        try withTemporaryDirectory { dir in
            var fileSystem = FileSystem.posix
            let real = fileSystem.open
            fileSystem.open = { path, flags, mode in
                if path.hasSuffix("/.archivist/trash.lock") {
                    errno = EMFILE
                    return -1
                }
                return real(path, flags, mode)
            }
            let store = try DiskStore.open(at: dir, fileSystem: fileSystem)
            store.waitForTrash()
            try write(store, key("a", "x"), "old")
            try store.clear([FolderPath(["a"])])
            store.waitForTrash()
            #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).count == 2)  // the item and its entry
            #expect(try read(store, key("a", "x")) == nil)
            #expect(spareNames(store).isEmpty)
            // The next emptying (another process's, say) can lock.
            try SpareFolders(
                internalPath: dir.path + "/.archivist",
                fileSystem: .posix,
                queue: DispatchQueue(label: "t")
            )
            .emptyTrash()
            #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
        }
    }

    /// The trash lock is made by the open, beside the journal, so that no file appears in the
    /// root behind the open's background walk. A walk that finds it gone makes it again and
    /// locks it as usual (a walk without it would remove unlocked, while another
    /// process's walk, having made the file, could lock it alone and keep a folder the first
    /// walk still had open).
    @Test func theTrashLockIsMadeAtOpenAndAgainByAWalkThatFindsItGone() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let lock = dir.path + "/.archivist/trash.lock"
            var status = stat()
            #expect(lstat(lock, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_mode & 0o777 == 0o600)
            store.waitForTrash()
            #expect(unlink(lock) == 0)
            try fill(store, "a")
            try store.clear([FolderPath(["a"])])
            store.waitForTrash()
            #expect(lstat(lock, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_mode & 0o777 == 0o600)
            #expect(spareNames(store).count == 1)  // locked alone: kept, as with the lock made at open
            #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
        }
    }
}
