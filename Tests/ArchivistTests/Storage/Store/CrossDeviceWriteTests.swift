import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether this process may bind-mount a folder (root, and a kernel or container that allows
/// it), tried once on a scratch pair of folders.
private let canBindMount: Bool = {
    #if os(Linux)
    guard geteuid() == 0, let scratch = try? ScratchFolder() else { return false }
    let (source, target) = (scratch.file("source").path, scratch.file("target").path)
    guard mkdir(source, 0o700) == 0, mkdir(target, 0o700) == 0 else { return false }
    guard mount(source, target, nil, UInt(MS_BIND), nil) == 0 else { return false }
    return umount(target) == 0
    #else
    return false
    #endif
}()

/// An entry folder on another file system than the store's temporaries folder (a bind mount, a
/// container volume) refuses the rename from there with `EXDEV`: the write makes its temporary
/// beside the entry instead, and the process remembers the folder. A read-only or forbidden
/// folder reports its documented code, and the old value stays.
@Suite struct CrossDeviceWriteTests {
    private let key = hashedKey("mounted", "p")

    /// A file system whose renames from the temporaries folder into `folder` (once it is
    /// named) fail with `EXDEV`, and whose creation of a file in it fails with `createErrno`
    /// when one is given, as across a mount; `crossings` counts the refused renames,
    /// `renamedFrom` the sources of the others into it.
    private func mountLike(
        _ folder: @escaping @Sendable () -> String,
        createErrno: Int32? = nil,
        crossings: Locked<Int>,
        renamedFrom: Locked<[String]>
    ) -> FileSystem {
        var fs = FileSystem.posix
        let (rename, open) = (fs.rename, fs.open)
        fs.rename = { from, to in
            let folder = folder()
            guard !folder.isEmpty, to.hasPrefix(folder + "/") else { return rename(from, to) }
            if from.contains("/" + DiskStore.temporariesFolderName + "/") {
                crossings.withLock { $0 += 1 }
                errno = EXDEV
                return -1
            }
            renamedFrom.withLock { $0.append(from) }
            return rename(from, to)
        }
        fs.open = { path, flags, mode in
            let folder = folder()
            if let createErrno, !folder.isEmpty, flags & O_CREAT != 0, path.hasPrefix(folder + "/") {
                errno = createErrno
                return -1
            }
            return open(path, flags, mode)
        }
        return fs
    }

    @Test func anEntryFolderOnAnotherFileSystemIsWrittenBesideTheEntry() throws {
        try withTemporaryDirectory { dir throws in
            let folder = Locked("")
            let (crossings, renamedFrom) = (Locked(0), Locked<[String]>([]))
            let store = try DiskStore.open(
                at: dir,
                fileSystem: mountLike(
                    { folder.withLock { $0 } },
                    crossings: crossings,
                    renamedFrom: renamedFrom
                )
            )
            let entryFolder = try #require(AtomicFile.folder(of: store.path(of: key)))
            folder.withLock { $0 = entryFolder }
            let first = Data(repeating: 1, count: 300)
            let second = Data(repeating: 2, count: 700)
            try store.write(first, to: key, typeName: "t", parameter: "p", expiry: nil, durability: .fileAndFolder)
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == first)
            try store.write(second, to: key, typeName: "t", parameter: "p", expiry: nil, durability: .none)
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == second)
            #expect(crossings.withLock { $0 } == 1, "the folder is remembered: the second write goes beside at once")
            let sources = renamedFrom.withLock { $0 }
            #expect(sources.count == 2 && sources.allSatisfy { $0.hasPrefix(entryFolder + "/") })
            let names = try FileManager.default.contentsOfDirectory(atPath: entryFolder)
            #expect(
                names.count == 1 && !names.contains { AtomicFile.isTemporary($0[...]) },
                "no temporary left: \(names)"
            )
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.temporariesPath).isEmpty)
            #expect(store.usage(of: FolderPath([])).entryCount == 1)
        }
    }

    @Test(arguments: [(EROFS, StorageError.Code.readOnlyFileSystem), (EACCES, .permissionDenied)])
    func aFolderThatRefusesWritesReportsItsCodeAndKeepsTheOldValue(failure: (Int32, StorageError.Code)) throws {
        try withTemporaryDirectory { dir throws in
            let folder = Locked("")
            let (crossings, renamedFrom) = (Locked(0), Locked<[String]>([]))
            let store = try DiskStore.open(
                at: dir,
                fileSystem: mountLike(
                    { folder.withLock { $0 } },
                    createErrno: failure.0,
                    crossings: crossings,
                    renamedFrom: renamedFrom
                )
            )
            let old = Data(repeating: 7, count: 100)
            try store.write(old, to: key, typeName: "t", parameter: "p", expiry: nil, durability: .none)
            folder.withLock { $0 = AtomicFile.folder(of: store.path(of: key)) ?? "" }
            let error = #expect(throws: StorageError.self) {
                try store.write(
                    Data(repeating: 8, count: 100),
                    to: key,
                    typeName: "t",
                    parameter: "p",
                    expiry: nil,
                    durability: .none
                )
            }
            #expect(error?.code == failure.1)
            #expect(error?.errno == failure.0)
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == old)
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.temporariesPath).isEmpty)
        }
    }

    /// The same with a real bind mount over the entry's folder, then remounted read-only.
    @Test(.enabled(if: canBindMount, "needs root and a system that allows bind mounts"))
    func aBindMountedEntryFolderIsWrittenAndReadOnlyIsReported() throws {
        #if os(Linux)
        try withTemporaryDirectory { dir throws in
            let elsewhere = try ScratchFolder()
            let store = try DiskStore.open(at: dir)
            let entryFolder = try #require(AtomicFile.folder(of: store.path(of: key)))
            try FileManager.default.createDirectory(atPath: entryFolder, withIntermediateDirectories: true)
            #expect(mount(elsewhere.url.path, entryFolder, nil, UInt(MS_BIND), nil) == 0)
            defer { umount(entryFolder) }
            let first = Data(repeating: 1, count: 300)
            let second = Data(repeating: 2, count: 900)
            try store.write(first, to: key, typeName: "t", parameter: "p", expiry: nil, durability: .fileAndFolder)
            try store.write(second, to: key, typeName: "t", parameter: "p", expiry: nil, durability: .fileAndFolder)
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == second)
            let names = try FileManager.default.contentsOfDirectory(atPath: elsewhere.url.path)
            #expect(names.count == 1 && !names.contains { AtomicFile.isTemporary($0[...]) }, "\(names)")

            #expect(mount(nil, entryFolder, nil, UInt(MS_REMOUNT | MS_BIND | MS_RDONLY), nil) == 0)
            let error = #expect(throws: StorageError.self) {
                try store.write(
                    Data(repeating: 3, count: 50),
                    to: key,
                    typeName: "t",
                    parameter: "p",
                    expiry: nil,
                    durability: .none
                )
            }
            #expect(error?.code == .readOnlyFileSystem)
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == second)
        }
        #endif
    }

    /// A cache type whose folder is a bind mount: stored, read, removed and stored again, as
    /// on the root's own file system; remounted read-only, a store throws `readOnlyFileSystem`
    /// and the value stays.
    @Test(.enabled(if: canBindMount, "needs root and a system that allows bind mounts"))
    func aCacheTypeFolderOnAnotherMountIsStoredRemovedAndStoredAgain() throws {
        #if os(Linux)
        try withTemporaryDirectory { dir throws in
            let elsewhere = try ScratchFolder()
            let cache = try CacheManager<NamedCacheType>(
                root: CacheRoot(directory: dir),
                user: "u",
                configuration: .init(memoryCountLimit: 0)
            )
            let type = NamedCacheType(name: "orders", location: .userCaches)
            let folder = dir.path + "/" + (try cache.folder(for: type)).relativePath
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            #expect(mount(elsewhere.url.path, folder, nil, UInt(MS_BIND), nil) == 0)
            defer { umount(folder) }
            try cache.store("one", for: type)
            try cache.store("two", for: type)
            #expect(try cache.value(String.self, for: type) == "two")
            #expect(try cache.removeValue(for: type))
            #expect(try cache.value(String.self, for: type) == nil)
            try cache.store("three", for: type)
            #expect(try cache.value(String.self, for: type) == "three")

            #expect(mount(nil, folder, nil, UInt(MS_REMOUNT | MS_BIND | MS_RDONLY), nil) == 0)
            let error = #expect(throws: CacheError.self) { try cache.store("four", for: type) }
            #expect(error?.code == .readOnlyFileSystem)
            #expect(try cache.value(String.self, for: type) == "three")
        }
        #endif
    }

    /// What a writer killed mid-write leaves beside an entry on another mount is deleted when
    /// a store of the root opens.
    @Test(.enabled(if: canBindMount, "needs root and a system that allows bind mounts"))
    func anOpenSweepsAbandonedTemporariesInAMountedFolder() throws {
        #if os(Linux)
        try withTemporaryDirectory { dir throws in
            let elsewhere = try ScratchFolder()
            weak var first: DiskStore?
            let entryFolder = try { () throws -> String in
                let store = try DiskStore.open(at: dir)
                first = store
                return try #require(AtomicFile.folder(of: store.path(of: key)))
            }()
            try FileManager.default.createDirectory(atPath: entryFolder, withIntermediateDirectories: true)
            #expect(mount(elsewhere.url.path, entryFolder, nil, UInt(MS_BIND), nil) == 0)
            defer { umount(entryFolder) }
            let user = elsewhere.url.appendingPathComponent("user", isDirectory: true)
            try FileManager.default.createDirectory(at: user, withIntermediateDirectories: true)
            let leftovers = [
                elsewhere.file(abandonedTemporaryName(1)), user.appendingPathComponent(abandonedTemporaryName(2)),
            ]
            for leftover in leftovers { try Data("half".utf8).write(to: leftover) }
            let live = elsewhere.file(TemporaryName.make())  // a live writer's, this process's
            try Data("busy".utf8).write(to: live)
            #expect(first == nil, "the next open is a new store's, which sweeps")
            _ = try DiskStore.open(at: dir)
            for leftover in leftovers {
                #expect(!FileManager.default.fileExists(atPath: leftover.path), "\(leftover.lastPathComponent)")
            }
            #expect(FileManager.default.fileExists(atPath: live.path))
        }
        #endif
    }
}
