import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads that open the entry file relative to a descriptor of the store's root (`openat`,
/// ``AtomicFile/Root``): what the descriptor finds is read, and a miss in a root still linked
/// is a miss; anything else is decided by the whole path, so a root removed and made again at
/// its path is read there, as writes go there; a test's own `open` still sees every read.
@Suite struct RootRelativeReadTests {

    /// The bytes of the file at `path` read through `root` (`nil`: a miss).
    private func read(
        _ path: String,
        below root: AtomicFile.Root?,
        fileSystem fs: FileSystem = .posix
    ) throws -> [UInt8]? {
        var identity: FileIdentity?
        defer { identity?.unpin(fs) }
        return try AtomicFile.readBuffer(path: path, fileSystem: fs, below: root, identity: &identity).map {
            Array($0.bytes)
        }
    }

    private let key = DiskKey(
        folder: FolderPath(["shared-caches", MD5.hexDigest(of: "t")]),
        name: EntryName(parameter: "p")
    )

    /// The descriptor is what is read: handed the descriptor of one folder with the path of
    /// another, the read finds the first one's file.
    @Test func aReadGoesThroughTheRootsDescriptor() throws {
        try withTemporaryDirectory { dir throws in
            for (name, text) in [("a", "through the descriptor"), ("b", "by the path")] {
                try FileManager.default.createDirectory(
                    at: dir.appendingPathComponent(name + "/x"),
                    withIntermediateDirectories: true
                )
                try AtomicFile.write(
                    Data(text.utf8),
                    to: dir.appendingPathComponent(name + "/x/file"),
                    durability: .none
                )
            }
            let fd = try openFolder(dir.appendingPathComponent("a"))
            defer { close(fd) }
            let root = AtomicFile.Root(descriptor: fd, path: dir.path + "/b")
            #expect(try read(dir.path + "/b/x/file", below: root) == Array("through the descriptor".utf8))
            #expect(try read(dir.path + "/b/x/file", below: nil) == Array("by the path".utf8))
        }
    }

    /// A store reads its entries through its root: renamed away under the store, the root
    /// still serves the store's reads (as it receives its writes, journal and marker).
    @Test func aStoreReadsThroughItsRoot() throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            let store = try DiskStore.open(at: rootURL)
            #expect(store.root != nil)
            try store.write(
                Data(repeating: 1, count: 10),
                to: key,
                typeName: "t",
                parameter: "p",
                expiry: nil,
                durability: .none
            )
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == Data(repeating: 1, count: 10))
            try FileManager.default.moveItem(at: rootURL, to: dir.appendingPathComponent("moved"))
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == Data(repeating: 1, count: 10))
        }
    }

    /// No file, or no folder of it: a miss through the descriptor is a miss by the path too.
    @Test func aMissIsAMiss() throws {
        try withTemporaryDirectory { dir throws in
            try FileManager.default.createDirectory(
                at: dir.appendingPathComponent("x"),
                withIntermediateDirectories: true
            )
            let fd = try openFolder(dir)
            defer { close(fd) }
            let root = AtomicFile.Root(descriptor: fd, path: dir.path)
            #expect(try read(dir.path + "/x/missing", below: root) == nil)
            #expect(try read(dir.path + "/nowhere/missing", below: root) == nil)
            let store = try DiskStore.open(at: dir.appendingPathComponent("root"))
            #expect(store.root != nil)
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == nil)
        }
    }

    /// The root removed and made again at its path while its descriptor is open: the old,
    /// removed folder holds nothing, so the read goes by the path and sees the new root's file.
    @Test func aRootRemadeAtItsPathIsReadThere() throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            let file = rootURL.appendingPathComponent("x/file")
            try FileManager.default.createDirectory(
                at: rootURL.appendingPathComponent("x"),
                withIntermediateDirectories: true
            )
            try AtomicFile.write(Data("old".utf8), to: file, durability: .none)
            let fd = try openFolder(rootURL)
            defer { close(fd) }
            let root = AtomicFile.Root(descriptor: fd, path: rootURL.path)
            try FileManager.default.removeItem(at: rootURL)
            #if os(Linux)
            #expect(!root.isLinked)
            #endif
            #expect(try read(file.path, below: root) == nil)
            try FileManager.default.createDirectory(
                at: rootURL.appendingPathComponent("x"),
                withIntermediateDirectories: true
            )
            try AtomicFile.write(Data("new".utf8), to: file, durability: .none)
            #expect(try read(file.path, below: root) == Array("new".utf8))
        }
    }

    #if os(Linux)
    /// The root renamed away and a folder made at its path: the descriptor's folder, still
    /// linked, decides — a file only the new folder holds is a miss, as the store's writes
    /// still go to the renamed one.
    @Test func aRootRenamedAwayStillDecidesAMiss() throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            try FileManager.default.createDirectory(
                at: rootURL.appendingPathComponent("x"),
                withIntermediateDirectories: true
            )
            let fd = try openFolder(rootURL)
            defer { close(fd) }
            let root = AtomicFile.Root(descriptor: fd, path: rootURL.path)
            try FileManager.default.moveItem(at: rootURL, to: dir.appendingPathComponent("moved"))
            try FileManager.default.createDirectory(
                at: rootURL.appendingPathComponent("x"),
                withIntermediateDirectories: true
            )
            try AtomicFile.write(Data("new".utf8), to: rootURL.appendingPathComponent("x/file"), durability: .none)
            #expect(root.isLinked)
            #expect(try read(rootURL.path + "/x/file", below: root) == nil)
        }
    }
    #endif

    /// The same under an open store: its entry written before the removal is gone (a miss,
    /// not an error), and one written after it is read back from the path.
    @Test func aStoreReadsItsRemadeRootByPath() throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            let store = try DiskStore.open(at: rootURL)
            try store.write(
                Data(repeating: 1, count: 10),
                to: key,
                typeName: "t",
                parameter: "p",
                expiry: nil,
                durability: .none
            )
            try FileManager.default.removeItem(at: rootURL)
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == nil)
            try store.write(
                Data(repeating: 2, count: 20),
                to: key,
                typeName: "t",
                parameter: "p",
                expiry: nil,
                durability: .none
            )
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == Data(repeating: 2, count: 20))
        }
    }

    /// A test's `open` sees every read, by its whole path, even when a root is offered; a
    /// store over such a file system keeps no root.
    @Test func aReplacedOpenSeesEveryRead() throws {
        try withTemporaryDirectory { dir throws in
            let opened = Locked<[String]>([])
            var fs = FileSystem.posix
            fs.open = { path, flags, mode in
                opened.withLock { $0.append(path) }
                return path.withCString { open($0, flags, mode) }
            }
            let path = dir.path + "/file"
            try AtomicFile.write(Data("v".utf8), to: URL(fileURLWithPath: path), durability: .none)
            let fd = try openFolder(dir)
            defer { close(fd) }
            #expect(
                try read(path, below: AtomicFile.Root(descriptor: fd, path: dir.path), fileSystem: fs)
                    == Array("v".utf8)
            )
            #expect(
                try read(dir.path + "/missing", below: AtomicFile.Root(descriptor: fd, path: dir.path), fileSystem: fs)
                    == nil
            )
            #expect(opened.withLock { $0 } == [path, dir.path + "/missing"])

            let store = try DiskStore.open(at: dir.appendingPathComponent("root"), fileSystem: fs)
            #expect(store.root == nil)
            try store.write(
                Data(repeating: 1, count: 10),
                to: key,
                typeName: "t",
                parameter: "p",
                expiry: nil,
                durability: .none
            )
            store.waitForTrash()  // the open's walk opens the trash lock through `open` too
            opened.withLock { $0.removeAll() }
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == Data(repeating: 1, count: 10))
            #expect(opened.withLock { $0 } == [store.path(of: key)])
        }
    }

    /// A root that refuses writes is opened for reading only, still with its descriptor:
    /// reads go through it, and writes are refused.
    @Test func aReadOnlyRootReadsThroughItsDescriptor() throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            do {
                let writer = try DiskStore.open(at: rootURL)
                try writer.write(
                    Data(repeating: 1, count: 10),
                    to: key,
                    typeName: "t",
                    parameter: "p",
                    expiry: nil,
                    durability: .none
                )
            }
            // The store's own trash folder missing, and its folder refusing it now.
            let internals = rootURL.appendingPathComponent(".archivist")
            try FileManager.default.removeItem(at: internals.appendingPathComponent("trash"))
            let undo = try makeReadOnly(internals)
            defer { undo() }
            let store = try DiskStore.open(at: rootURL)
            #expect(store.writeRefusal != nil)
            #expect(store.root != nil)
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == Data(repeating: 1, count: 10))
            #expect(throws: StorageError.self) {
                try store.write(
                    Data(repeating: 2, count: 10),
                    to: key,
                    typeName: "t",
                    parameter: "p",
                    expiry: nil,
                    durability: .none
                )
            }
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == Data(repeating: 1, count: 10))
        }
    }

    #if os(Linux)
    /// A read through the root leaves the file's access time alone, where a plain read on
    /// the same file system would move it (the first read after a write, under `relatime`).
    @Test(
        .enabled(
            if: RootRelativeReadTests.plainReadsUpdateAccessTimes(),
            "the temporary folder's file system does not update access times on reads"
        )
    )
    func aReadThroughTheRootLeavesTheAccessTime() throws {
        try withTemporaryDirectory { dir throws in
            try FileManager.default.createDirectory(
                at: dir.appendingPathComponent("x"),
                withIntermediateDirectories: true
            )
            let path = dir.path + "/x/file"
            try AtomicFile.write(Data(repeating: 7, count: 5_000), to: URL(fileURLWithPath: path), durability: .none)
            let before = try #require(Self.backdateAccessTime(path))
            let fd = try openFolder(dir)
            defer { close(fd) }
            #expect(
                try read(path, below: AtomicFile.Root(descriptor: fd, path: dir.path))
                    == Array(repeating: 7, count: 5_000)
            )
            #expect(Self.accessTime(path) == before)
        }
    }

    /// Whether a plain `open` and `read` of a file whose access time is older than its
    /// modification time moves the access time in the temporary folder.
    static func plainReadsUpdateAccessTimes() -> Bool {
        let path = FileManager.default.temporaryDirectory.path + "/archivist-atime-\(getpid())-\(UUID().uuidString)"
        defer { unlink(path) }
        guard FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3])),
            let before = backdateAccessTime(path)
        else { return false }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        var byte: UInt8 = 0
        _ = Glibc.read(fd, &byte, 1)
        close(fd)
        return accessTime(path) != before
    }

    /// Sets the access time of `path` an hour before its modification time; returns it.
    static func backdateAccessTime(_ path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        var times = [timespec(tv_sec: status.st_mtim.tv_sec - 3_600, tv_nsec: 0), status.st_mtim]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else { return nil }
        return accessTime(path)
    }

    /// The access time of `path` in seconds, `nil` when it cannot be read.
    static func accessTime(_ path: String) -> Int? {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_atim.tv_sec) : nil
    }
    #endif
}
