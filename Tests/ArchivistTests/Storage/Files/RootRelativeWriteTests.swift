import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes that create and rename their temporary relative to a descriptor of the store's root
/// (`openat` / `renameat`, ``AtomicFile/Root``): same files, same failures, and a test's own
/// `open` or `rename` still sees every call.
@Suite struct RootRelativeWriteTests {

    @Test func replacingOpenOrRenameTurnsRootRelativeCallsOff() {
        #expect(FileSystem.posix.allowsRootRelativeCalls)
        var other = FileSystem.posix
        other.writev = { _, _, _ in -1 }
        other.flock = { _, _ in 0 }
        #expect(other.allowsRootRelativeCalls)
        var opening = FileSystem.posix
        opening.open = { _, _, _ in -1 }
        #expect(!opening.allowsRootRelativeCalls)
        var renaming = FileSystem.posix
        renaming.rename = { _, _ in -1 }
        #expect(!renaming.allowsRootRelativeCalls)
    }

    @Test func aWriteBelowTheRootReplacesTheFileAndLeavesNoTemporary() throws {
        try withTemporaryDirectory { dir throws in
            try FileManager.default.createDirectory(
                at: dir.appendingPathComponent("a/b"),
                withIntermediateDirectories: true
            )
            let fd = try openFolder(dir)
            defer { close(fd) }
            let root = AtomicFile.Root(descriptor: fd, path: dir.path)
            let path = dir.path + "/a/b/file"
            for text in ["first", "second"] {
                let prepared = try Data(text.utf8).withUnsafeBytes {
                    try AtomicFile.prepare([$0], toPath: path, durability: .none, below: root)
                }
                #expect(prepared.root != nil)
                #expect(try prepared.rename(.posix))
                #expect(prepared.sizes.logical == Int64(text.utf8.count))
            }
            #expect(try AtomicFile.read(path: path) == Array("second".utf8))
            #expect(allPaths(under: dir).sorted() == ["a", "a/b", "a/b/file"])
            #expect(permissions(path) == 0o600)
        }
    }

    /// A missing folder is created from the root (mode 0700), and the temporary stays below
    /// it, rename included.
    @Test func aMissingFolderIsCreatedFromTheRoot() throws {
        try withTemporaryDirectory { dir throws in
            let fd = try openFolder(dir)
            defer { close(fd) }
            let path = dir.path + "/x/y/file"
            let prepared = try Data("v".utf8).withUnsafeBytes {
                try AtomicFile.prepare(
                    [$0],
                    toPath: path,
                    durability: .none,
                    below: AtomicFile.Root(descriptor: fd, path: dir.path)
                )
            }
            #expect(prepared.root != nil)
            #expect(try prepared.rename(.posix))
            #expect(try AtomicFile.read(path: path) == Array("v".utf8))
            #expect(permissions(dir.path + "/x") == 0o700)
            #expect(permissions(dir.path + "/x/y") == 0o700)
        }
    }

    /// Another process's clear moving the folder away between the two halves: the rename
    /// reports the temporary gone, as it does by path, so the store writes again.
    @Test func aRenameAfterTheFolderMovedAwayReportsTheTemporaryGone() throws {
        try withTemporaryDirectory { dir throws in
            try FileManager.default.createDirectory(
                at: dir.appendingPathComponent("t"),
                withIntermediateDirectories: true
            )
            let fd = try openFolder(dir)
            defer { close(fd) }
            let prepared = try Data("v".utf8).withUnsafeBytes {
                try AtomicFile.prepare(
                    [$0],
                    toPath: dir.path + "/t/file",
                    durability: .none,
                    below: AtomicFile.Root(descriptor: fd, path: dir.path)
                )
            }
            try FileManager.default.moveItem(
                at: dir.appendingPathComponent("t"),
                to: dir.appendingPathComponent("trash")
            )
            #expect(try prepared.rename(.posix) == false)
        }
    }

    /// A failing rename below the root throws with its errno and keeps the old file.
    @Test func aFailingRenameBelowTheRootThrowsAndKeepsTheOldFile() throws {
        try withTemporaryDirectory { dir throws in
            let fd = try openFolder(dir)
            defer { close(fd) }
            let path = dir.path + "/file"
            try AtomicFile.write(Data("old".utf8), to: URL(fileURLWithPath: path), durability: .none)
            let prepared = try Data("new".utf8).withUnsafeBytes {
                try AtomicFile.prepare(
                    [$0],
                    toPath: path,
                    durability: .none,
                    below: AtomicFile.Root(descriptor: fd, path: dir.path)
                )
            }
            // A folder in the way of the destination's name: rename(2) refuses a file over it.
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path + "/inside", withIntermediateDirectories: true)
            let error = #expect(throws: StorageError.self) { try prepared.rename(.posix) }
            #expect(error?.errno == EISDIR)
            prepared.discard(.posix)
            #expect(allPaths(under: dir).sorted() == ["file", "file/inside"])
        }
    }

    /// A test's `open` sees the temporary's creation even when the store has a root
    /// descriptor to offer.
    @Test func aReplacedOpenSeesTheTemporarysCreation() throws {
        try withTemporaryDirectory { dir throws in
            let fd = try openFolder(dir)
            defer { close(fd) }
            let opened = Locked<[String]>([])
            var fs = FileSystem.posix
            fs.open = { path, flags, mode in
                opened.withLock { $0.append(path) }
                return path.withCString { open($0, flags, mode) }
            }
            try Data("v".utf8).withUnsafeBytes {
                let prepared = try AtomicFile.prepare(
                    [$0],
                    toPath: dir.path + "/file",
                    durability: .none,
                    fileSystem: fs,
                    below: AtomicFile.Root(descriptor: fd, path: dir.path)
                )
                #expect(prepared.root == nil)
                #expect(try prepared.rename(.posix))
            }
            #expect(opened.withLock { $0.count } == 1)
            #expect(opened.withLock { $0.first?.hasPrefix(dir.path + "/.tmp-") } == true)
        }
    }

    /// The root removed (and its path made again) under an open store: the write cannot
    /// create its temporary in the removed folder, so it goes by the path.
    @Test func aWriteAfterTheRootWasRemovedLandsAtItsPath() throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            let store = try DiskStore.open(at: rootURL)
            #expect(store.root != nil)
            let key = DiskKey(
                folder: FolderPath(["shared-caches", MD5.hexDigest(of: "t")]),
                name: EntryName(parameter: "p")
            )
            try store.write(
                Data(repeating: 1, count: 10),
                to: key,
                typeName: "t",
                parameter: "p",
                expiry: nil,
                durability: .none
            )
            try FileManager.default.removeItem(at: rootURL)
            try store.write(
                Data(repeating: 2, count: 20),
                to: key,
                typeName: "t",
                parameter: "p",
                expiry: nil,
                durability: .none
            )
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == Data(repeating: 2, count: 20))
            #expect(FileManager.default.fileExists(atPath: store.path(of: key)))
        }
    }

    /// Replacing any path call the store has a root-relative twin for turns the twins off, so
    /// the replacement sees every call; replacing a twin does not, and a store's folder
    /// creation, remove and clear go through the twins, relative to its root.
    @Test func theRootRelativeTwinsAreTheSeamBelowTheRoot() throws {
        for replace in ["unlink", "mkdir", "chmod", "removeDirectory"] {
            var fs = FileSystem.posix
            switch replace {
            case "unlink": fs.unlink = { _ in -1 }
            case "mkdir": fs.mkdir = { _, _ in -1 }
            case "chmod": fs.chmod = { _, _ in -1 }
            default: fs.removeDirectory = { _ in -1 }
            }
            #expect(!fs.allowsRootRelativeCalls, "\(replace)")
        }
        try withTemporaryDirectory { dir throws in
            let calls = Locked<[String]>([])
            var fs = FileSystem.posix
            let (mkdirAt, unlinkAt, renameAt) = (fs.mkdirAt, fs.unlinkAt, fs.renameAt)
            fs.mkdirAt = { folder, path, mode in
                calls.withLock { $0.append("mkdirat " + path) }
                return mkdirAt(folder, path, mode)
            }
            fs.unlinkAt = { folder, path, flags in
                calls.withLock { $0.append("unlinkat " + path) }
                return unlinkAt(folder, path, flags)
            }
            fs.renameAt = { fromFolder, from, toFolder, to in
                calls.withLock { $0.append("renameat " + from) }
                return renameAt(fromFolder, from, toFolder, to)
            }
            #expect(fs.allowsRootRelativeCalls)
            let store = try DiskStore.open(at: dir.appendingPathComponent("root"), fileSystem: fs)
            try #require(store.root != nil)
            let key = DiskKey(folder: FolderPath(["a", "b"]), name: EntryName(parameter: "p"))
            try store.write(Data("v".utf8), to: key, typeName: "t", parameter: "p", expiry: nil, durability: .none)
            #expect(try store.remove(key))
            try store.clear([FolderPath(["a"])])
            store.waitForTrash()
            let seen = calls.withLock { $0 }
            #expect(seen.contains("mkdirat a") && seen.contains("mkdirat a/b"), "\(seen)")
            #expect(seen.contains("unlinkat a/b/" + key.name.fileName), "\(seen)")
            #expect(seen.contains("renameat a"), "\(seen)")
            #expect(!seen.contains { $0.contains(dir.path) }, "\(seen)")
        }
    }

    /// The root's descriptor outlives the store while work it queued holds it: a walk of the
    /// trash may run after the store is gone, and a closed descriptor's number could be another
    /// folder's by then. (That it closes afterwards is not checked here: another test running
    /// beside this one may be given the number again at once.)
    @Test func theRootsDescriptorStaysOpenForQueuedWork() throws {
        try withTemporaryDirectory { dir throws in
            var spares: SpareFolders?
            do {
                let store = try DiskStore.open(at: dir)
                store.waitForTrash()
                spares = store.trash.spares
            }
            let fd = try #require(spares?.openRoot?.root.descriptor)
            var status = stat()
            #expect(fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
            try spares?.emptyTrash()  // what a walk queued before the store went does
            #expect(fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
        }
    }
}
