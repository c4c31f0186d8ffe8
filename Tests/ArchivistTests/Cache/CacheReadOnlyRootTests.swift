import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file system over the real one on which every change fails with `EROFS`, as on a
/// read-only mount: opening for writing, creating, renaming, unlinking, writing, `mkdir` of a
/// missing folder (an existing one says `EEXIST`, as the kernel does).
func readOnlyFileSystem() -> FileSystem {
    var fs = FileSystem.posix
    let real = FileSystem.posix
    fs.open = { path, flags, mode in
        if flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC) != 0 {
            errno = EROFS
            return -1
        }
        return real.open(path, flags, mode)
    }
    fs.mkdir = { path, _ in
        var status = stat()
        errno = stat(path, &status) == 0 ? EEXIST : EROFS
        return -1
    }
    fs.rename = { _, _ in
        errno = EROFS
        return -1
    }
    fs.unlink = { _ in
        errno = EROFS
        return -1
    }
    fs.write = { _, _, _ in
        errno = EROFS
        return -1
    }
    fs.writev = { _, _, _ in
        errno = EROFS
        return -1
    }
    fs.pwrite = { _, _, _, _ in
        errno = EROFS
        return -1
    }
    fs.ftruncate = { _, _ in
        errno = EROFS
        return -1
    }
    fs.chmod = { _, _ in
        errno = EROFS
        return -1
    }
    fs.fchmod = { _, _ in
        errno = EROFS
        return -1
    }
    return fs
}

/// A cache on a read-only file system opens and serves reads and sizes; only writes throw
/// `readOnlyFileSystem`.
@Suite struct CacheReadOnlyRootTests {
    /// How the read-only root was left by whoever filled it.
    enum Shape: String, CaseIterable {
        /// Closed cleanly: a saved index and a clean marker.
        case clean
        /// The filling process crashed: the marker says dirty, so the open scans (in memory).
        case unclean
        /// Shipped without the store's own `.archivist` folder at all.
        case withoutInternals
    }

    @Test(arguments: Shape.allCases)
    func aReadOnlyRootServesReadsAndRefusesOnlyWrites(shape: Shape) throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            do {
                let writer = try CacheManager<ShopCache>(root: root, user: "alice")
                try writer.store("orders", for: .apiStrategy, parameter: "/v1/orders")
                try writer.store([1, 2, 3], for: .userOrderList)
                try writer.store("letter", for: .message)
            }  // the store closes, saving its index
            switch shape {
            case .clean: break
            case .unclean: try Data("D".utf8).write(to: dir.appendingPathComponent(".archivist/dirty"))
            case .withoutInternals: try FileManager.default.removeItem(at: dir.appendingPathComponent(".archivist"))
            }
            let expectedSize = entryFiles(under: dir).values.reduce(0, +)

            let cache = try CacheManager<ShopCache>(
                root: root,
                user: "alice",
                configuration: .init(),
                fileSystem: readOnlyFileSystem()
            )
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == "orders")
            #expect(try cache.value([Int].self, for: .userOrderList) == [1, 2, 3])
            #expect(try cache.value(String.self, for: .message) == "letter")
            #expect(cache.totalSize == expectedSize)
            #expect(cache.totalUsage.entryCount == 3)
            #expect(cache.contains(.message))
            #expect(try cache.info(for: .message)?.payloadSize ?? 0 > 0)

            let refusals: [(String, () throws -> Void)] = [
                ("store", { try cache.store("new", for: .apiStrategy, parameter: "/v1/orders") }),
                ("remove", { try cache.removeValue(for: .message) }),
                ("clear type", { try cache.clear(.type(.userOrderList)) }),
                ("clear all", { try cache.clear() }),
            ]
            for (name, write) in refusals {
                let error = #expect(throws: CacheError.self, "\(name)") { try write() }
                #expect(error?.code == .readOnlyFileSystem, "\(name): \(String(describing: error))")
            }
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == "orders")
            #expect(try cache.value(String.self, for: .message) == "letter")
            #expect(cache.totalSize == expectedSize)
        }
    }

    #if os(Linux)
    /// The same on a real read-only bind mount, where the test may mount (root, with the
    /// capability); elsewhere it checks nothing.
    @Test func aReadOnlyBindMountServesReads() throws {
        try withTemporaryDirectory { dir throws in
            let source = dir.appendingPathComponent("source")
            let mounted = dir.appendingPathComponent("mounted")
            try FileManager.default.createDirectory(at: mounted, withIntermediateDirectories: true)
            do {
                let writer = try CacheManager<ShopCache>(root: CacheRoot(directory: source))
                try writer.store("shipped", for: .hots)
            }
            guard geteuid() == 0, run("/bin/mount", ["--bind", source.path, mounted.path]) else {
                try skip("cannot bind-mount here (needs root and /bin/mount)")
                return
            }
            defer { _ = run("/bin/umount", [mounted.path]) }
            guard run("/bin/mount", ["-o", "remount,ro,bind", mounted.path]), !canCreateFile(in: mounted) else {
                try skip("cannot remount read-only here")
                return
            }
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: mounted))
            #expect(try cache.value(String.self, for: .hots) == "shipped")
            #expect(cache.totalSize == entryFiles(under: source).values.reduce(0, +))
            let error = #expect(throws: CacheError.self) { try cache.store("new", for: .hots) }
            #expect(error?.code == .readOnlyFileSystem)
        }
    }

    /// Runs a command quietly; whether it exited 0.
    private func run(_ executable: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
    #endif
}
