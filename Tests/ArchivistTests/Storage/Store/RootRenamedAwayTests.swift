import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store whose root is renamed away while it is open keeps working in the folder it opened,
/// wherever it went: reads, writes (into new folders too), removes, clears, sizes and scans
/// all go through the root's descriptor, so they agree with each other; nothing is made at
/// the old path. (A root *removed*, and perhaps made again at its path, is used at its path:
/// `RootRelativeReadTests`, `RootRelativeWriteTests`.)
@Suite struct RootRenamedAwayTests {
    private let key = DiskKey(
        folder: FolderPath(["shared-caches", MD5.hexDigest(of: "t")]),
        name: EntryName(parameter: "p")
    )

    /// Every key here has the parameter "p".
    private func write(_ store: DiskStore, _ key: DiskKey, _ count: Int, _ byte: UInt8 = 1) throws {
        try store.write(
            Data(repeating: byte, count: count),
            to: key,
            typeName: "t",
            parameter: "p",
            expiry: nil,
            durability: .none
        )
    }

    private func read(_ store: DiskStore, _ key: DiskKey) throws -> Data? {
        try store.read(key, typeName: "t", parameter: "p") { $0.payload }
    }

    private func sizeOnDisk(_ dir: URL) -> Int64 {
        Int64(entryFiles(under: dir).values.reduce(0, +))
    }

    /// Opens a store at `dir/root`, lets `prepare` fill it, renames the root to `dir/moved`
    /// and runs `body` with the store and the moved folder.
    private func withRenamedRoot(
        _ prepare: (DiskStore) throws -> Void = { _ in },
        _ body: (DiskStore, URL) throws -> Void
    ) throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            let moved = dir.appendingPathComponent("moved")
            let store = try DiskStore.open(at: rootURL)
            try #require(store.root != nil)
            try prepare(store)
            try FileManager.default.moveItem(at: rootURL, to: moved)
            try body(store, moved)
            store.waitForTrash()
            #expect(!FileManager.default.fileExists(atPath: rootURL.path), "something was made at the old path")
        }
    }

    /// A flush after the rename folds into a new snapshot layer in the moved root, the former
    /// snapshot kept there under its layer name — not a whole save under the lock, which a
    /// layer link by the old path (gone) would fall back to.
    @Test func aFlushStacksALayerInTheMovedRoot() throws {
        // Enough entries that the new layer stacks on this one rather than merging it.
        try withRenamedRoot { store in
            for i in 0..<400 {
                let entry = DiskKey(folder: key.folder, name: EntryName(parameter: "p\(i)"))
                try store.write(
                    Data(count: 10),
                    to: entry,
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
            }
            try store.flush()
        } _: { store, moved in
            let other = DiskKey(folder: key.folder, name: EntryName(parameter: "q"))
            try store.write(Data(count: 20), to: other, typeName: "t", parameter: "q", expiry: nil, durability: .none)
            let epoch = store.index.shared.epoch
            try store.flush()
            #expect(store.index.snapshotLayerCount == 2)
            let layer = moved.appendingPathComponent(
                ".archivist/" + URL(fileURLWithPath: store.index.layerPath(of: epoch)).lastPathComponent
            )
            #expect(FileManager.default.fileExists(atPath: layer.path))
            #expect(store.index.readIndex { $0.usage(of: key.folder).entryCount } == 401)
        }
    }

    @Test func aWriteToAFolderTheRenamedRootLacksIsRead() throws {
        try withRenamedRoot { store, moved throws in
            try write(store, key, 30, 3)
            #expect(try read(store, key) == Data(repeating: 3, count: 30))
            #expect(entryFiles(under: moved).count == 1)
            #expect(store.usage(of: FolderPath([])).logicalBytes == sizeOnDisk(moved))
        }
    }

    @Test func aRemovedEntryOfTheRenamedRootIsGone() throws {
        try withRenamedRoot({ try write($0, key, 10) }) { store, moved throws in
            #expect(try store.remove(key))
            #expect(try read(store, key) == nil)
            #expect(entryFiles(under: moved).isEmpty)
            #expect(store.usage(of: FolderPath([])) == DiskUsage())
            #expect(try store.remove(key) == false)
        }
    }

    /// A clear moves the folder into the moved root's trash, which the walk empties; the sizes
    /// and the files agree.
    @Test func aClearOfTheRenamedRootEmptiesItsFolder() throws {
        let other = DiskKey(
            folder: FolderPath(["shared-caches", MD5.hexDigest(of: "u")]),
            name: EntryName(parameter: "p")
        )
        try withRenamedRoot({ store throws in
            try write(store, key, 10)
            try write(store, other, 20)
        }) { store, moved throws in
            let cleared = store.usage(of: key.folder).logicalBytes
            #expect(cleared > 10)
            #expect(try store.clear([key.folder]) == cleared)
            #expect(try read(store, key) == nil)
            #expect(try read(store, other) == Data(repeating: 1, count: 20))
            store.waitForTrash()
            #expect(entryFiles(under: moved).count == 1)
            #expect(allPaths(under: moved.appendingPathComponent(".archivist/trash")).isEmpty)
            #expect(store.usage(of: FolderPath([])).entryCount == 1)
            #expect(store.usage(of: FolderPath([])).logicalBytes == sizeOnDisk(moved))
        }
    }

    /// A new type folder (under a location folder that does not exist yet either) is made in
    /// the moved root, and a scan — what a crash repair runs — counts what the index counts.
    @Test func aNewFolderAndAScanOfTheRenamedRootAgreeWithTheSizes() throws {
        let deep = DiskKey(
            folder: FolderPath(["user-caches", MD5.hexDigest(of: "me"), MD5.hexDigest(of: "v")]),
            name: EntryName(parameter: "p")
        )
        try withRenamedRoot({ try write($0, key, 10) }) { store, moved throws in
            try write(store, deep, 40, 4)
            #expect(try read(store, deep) == Data(repeating: 4, count: 40))
            var status = stat()
            #expect(lstat(moved.path + "/user-caches", &status) == 0 && status.st_mode & 0o777 == 0o700)
            let scanned = try store.index.scan()
            #expect(scanned.usage(of: FolderPath([])) == store.usage(of: FolderPath([])))
            #expect(store.usage(of: FolderPath([])).entryCount == 2)
            #expect(store.usage(of: FolderPath([])).logicalBytes == sizeOnDisk(moved))
            try store.flush()  // the snapshot is saved in the moved root
            #expect(FileManager.default.fileExists(atPath: moved.path + "/.archivist/index"))
        }
    }

    /// Eviction past a byte limit unlinks the evicted entries in the moved root.
    @Test func anEvictionInTheRenamedRootRemovesItsFiles() throws {
        try withRenamedRoot { store, moved throws in
            for i in 0..<5 {
                let key = DiskKey(folder: key.folder, name: EntryName(parameter: "e\(i)"))
                try store.write(
                    Data(repeating: 5, count: 100),
                    to: key,
                    typeName: "t",
                    parameter: "e\(i)",
                    expiry: nil,
                    durability: .none,
                    byteLimit: 300
                )
            }
            #expect(entryFiles(under: moved).count == store.usage(of: FolderPath([])).entryCount)
            #expect(store.usage(of: FolderPath([])).logicalBytes == sizeOnDisk(moved))
            #expect(store.usage(of: FolderPath([])).logicalBytes <= 300)
            #expect(store.usage(of: FolderPath([])).entryCount < 5)
        }
    }

    /// Another process's clear moving the entry's new parent folder away between its creation
    /// and the entry folder's (both made through the descriptor): the folders are made again in
    /// the moved root, not the whole write sent by the path to the old one, where the store
    /// would never read it (and its sizes would count a file in no folder of its own).
    @Test func aClearRacingFolderCreationInTheRenamedRootKeepsTheWriteThere() throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            let moved = dir.appendingPathComponent("moved")
            let parent = key.folder.components[0]
            let child = key.folder.relativePath
            let raced = Locked(false)
            var fs = FileSystem.posix
            let mkdirAt = fs.mkdirAt
            fs.mkdirAt = { folder, path, mode in
                var status = stat()
                if path == child, fstatat(folder, parent, &status, 0) == 0,
                    raced.withLock({ (done: inout Bool) -> Bool in
                        defer { done = true }
                        return !done
                    })
                {
                    _ = renameat(folder, parent, folder, ".archivist/trash/raced")  // the other process's clear
                }
                return mkdirAt(folder, path, mode)
            }
            let store = try DiskStore.open(at: rootURL, fileSystem: fs)
            try #require(store.root != nil)
            store.waitForTrash()
            try FileManager.default.moveItem(at: rootURL, to: moved)
            try write(store, key, 30, 3)
            #expect(raced.withLock { $0 })
            #expect(!FileManager.default.fileExists(atPath: rootURL.path), "the write went to the old path")
            #expect(try read(store, key) == Data(repeating: 3, count: 30))
            #expect(entryFiles(under: moved).count == 1)
            store.waitForTrash()
        }
    }

    /// Opening the old path again in the same process, once the store's root went elsewhere,
    /// gives a store of the folder now at that path — as another process opening it gets —
    /// not the store that followed its folder away (whose writes no one at the path would
    /// read). The old store keeps working in the moved folder.
    @Test func openingTheOldPathAgainGivesAStoreOfTheFolderThere() throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            let moved = dir.appendingPathComponent("moved")
            let store = try DiskStore.open(at: rootURL)
            try #require(store.root != nil)
            try write(store, key, 10, 1)
            store.waitForTrash()
            try FileManager.default.moveItem(at: rootURL, to: moved)
            let reopened = try DiskStore.open(at: rootURL)
            #expect(reopened !== store)
            try write(reopened, key, 20, 2)
            #expect(entryFiles(under: rootURL).count == 1)
            #expect(try read(reopened, key) == Data(repeating: 2, count: 20))
            #expect(try read(store, key) == Data(repeating: 1, count: 10))
            #expect(try DiskStore.open(at: rootURL) === reopened)  // at its path: shared
            store.waitForTrash()
            reopened.waitForTrash()
        }
    }

    /// Two stores of one root (each through its own link, as two processes: own descriptors,
    /// journal offsets and locks) keep agreeing once the folder is renamed away under both: a
    /// write into a new folder by one is read and counted by the other, and a clear by the
    /// other empties it for both.
    @Test func twoStoresOfTheRenamedRootAgree() throws {
        try withTemporaryDirectory { dir throws in
            let real = dir.appendingPathComponent("root")
            let moved = dir.appendingPathComponent("moved")
            try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
            let links = (0..<2).map { dir.appendingPathComponent("link\($0)") }
            for link in links {
                try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
                DiskStore.keepApart(link)
            }
            let (a, b) = (try DiskStore.open(at: links[0]), try DiskStore.open(at: links[1]))
            try #require(a.root != nil && b.root != nil)
            a.waitForTrash()
            b.waitForTrash()
            try FileManager.default.moveItem(at: real, to: moved)
            try write(a, key, 30, 3)
            #expect(try read(b, key) == Data(repeating: 3, count: 30))
            #expect(b.usage(of: FolderPath([])) == a.usage(of: FolderPath([])))
            #expect(b.usage(of: FolderPath([])).logicalBytes == sizeOnDisk(moved))
            try b.clear([key.folder])
            #expect(try read(a, key) == nil)
            #expect(a.usage(of: FolderPath([])) == DiskUsage())
            a.waitForTrash()
            b.waitForTrash()
            #expect(entryFiles(under: moved).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: real.path))
        }
    }

    /// A symbolic link at an entry's path in the moved root is reported as a corrupt entry and
    /// removed there, its target untouched, as in a root that stayed.
    /// A read that fails in the renamed root other than by a missing file — here `ENOTDIR`, a
    /// file where the entry's folder belongs — is decided there, not by the path, where
    /// another folder (another store's) may stand now.
    @Test func aReadBlockedInTheRenamedRootDoesNotGoToTheOldPath() throws {
        try withRenamedRoot { store, moved throws in
            let old = moved.deletingLastPathComponent().appendingPathComponent("root")
            let folder = moved.appendingPathComponent(key.folder.relativePath)
            try FileManager.default.createDirectory(
                at: folder.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data("not a folder".utf8).write(to: folder)
            let other = try DiskStore.open(at: old)
            try write(other, key, 20, 9)
            #expect(try read(store, key) == nil)
            other.waitForTrash()
            try FileManager.default.removeItem(at: old)
        }
    }

    @Test func aLinkInTheRenamedRootIsACorruptEntryAndRemoved() throws {
        try withRenamedRoot({ try write($0, key, 10) }) { store, moved in
            let target = moved.deletingLastPathComponent().appendingPathComponent("target")
            try Data("precious".utf8).write(to: target)
            let entry = moved.path + "/" + key.folder.relativePath + "/" + key.name.fileName
            #expect(unlink(entry) == 0 && symlink(target.path, entry) == 0)
            let error = #expect(throws: StorageError.self) { try read(store, key) }
            #expect(error?.code == .corruptEntry)
            var status = stat()
            #expect(lstat(entry, &status) != 0)
            #expect(try read(store, key) == nil)
            #expect(try Data(contentsOf: target) == Data("precious".utf8))
            #expect(store.usage(of: FolderPath([])) == DiskUsage())
        }
    }
}
