import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Something other than a regular file at an entry's path — put there by another program, a
/// user, or a restore gone wrong — is a corrupt entry: one read reports it and discards it
/// (a folder into the trash), after which reads miss, stores work and the size index agrees
/// with the disk. Nothing outside the entry's path is touched.
@Suite struct CacheNonFileEntryTests {
    enum Intruder: String, CaseIterable {
        case folder, emptyFolder, fifo, symlinkToFileOutside, symlinkToFolder, danglingSymlink
    }

    /// Replaces the file at `path` with `intruder`; `outside` is a folder outside the root.
    private func plant(_ intruder: Intruder, at path: String, outside: URL) throws {
        try FileManager.default.removeItem(atPath: path)
        switch intruder {
        case .folder:
            try FileManager.default.createDirectory(atPath: path + "/inner", withIntermediateDirectories: true)
            try Data(repeating: 7, count: 3_000).write(
                to: URL(fileURLWithPath: path + "/inner/" + String(repeating: "a", count: 32))
            )
            try Data("x".utf8).write(to: URL(fileURLWithPath: path + "/value"))
        case .emptyFolder:
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case .fifo:
            try #require(mkfifo(path, 0o600) == 0)
        case .symlinkToFileOutside:
            try Data("precious, not an entry".utf8).write(to: outside.appendingPathComponent("precious"))
            try #require(symlink(outside.path + "/precious", path) == 0)
        case .symlinkToFolder:
            try #require(symlink(outside.path, path) == 0)
        case .danglingSymlink:
            try #require(symlink(outside.path + "/nothing-here", path) == 0)
        }
    }

    /// With `rescanned`, the store is reopened after a crash, so its index is rebuilt by a
    /// scan that sees the intruder; otherwise the index still lists the entry that was there.
    @Test(arguments: Intruder.allCases, [false, true])
    func aNonFileAtAnEntryPathIsDiscardedOnceThenMisses(intruder: Intruder, rescanned: Bool) throws {
        try withTemporaryDirectory { dir throws in
            let root = dir.appendingPathComponent("root")
            let outside = dir.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            func open() throws -> CacheManager<ShopCache> {
                try CacheManager<ShopCache>(root: CacheRoot(directory: root), configuration: .init(memoryCountLimit: 0))
            }
            var cache = try open()
            try cache.store("orders", for: .apiStrategy, parameter: "/v1/orders")
            try cache.store("users", for: .apiStrategy, parameter: "/v1/users")
            let path = try #require(try cache.info(for: .apiStrategy, parameter: "/v1/orders")).fileURL.path
            try plant(intruder, at: path, outside: outside)
            if rescanned {
                cache = try CacheManager<ShopCache>(
                    root: CacheRoot(directory: dir),
                    configuration: .init(memoryCountLimit: 0)
                )
                try Data("D".utf8).write(to: root.appendingPathComponent(".archivist/dirty"))
                cache = try open()
            }
            do {
                let error = #expect(throws: CacheError.self) {
                    try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders")
                }
                #expect(error?.code == .corruptEntry, "\(intruder)")
                #expect(error?.parameter == "/v1/orders")
                #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == nil)
                #expect(!cache.contains(.apiStrategy, parameter: "/v1/orders"))
                #expect(cache.totalSize == entryFiles(under: root).values.reduce(0, +), "\(intruder)")
                #expect(cache.usage(of: ShopCache.apiStrategy).entryCount == 1)
                try cache.store("orders again", for: .apiStrategy, parameter: "/v1/orders")
                #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == "orders again")
                #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/users") == "users")
                #expect(cache.totalSize == entryFiles(under: root).values.reduce(0, +), "\(intruder)")
            }
            if intruder == .symlinkToFileOutside {
                #expect(
                    try String(contentsOf: outside.appendingPathComponent("precious"), encoding: .utf8)
                        == "precious, not an entry"
                )
            }
            cache.caches.waitForTrash()
            #expect(allPaths(under: root.appendingPathComponent(".archivist/trash")).isEmpty)
        }
    }

    /// A store or a removal that meets a folder at the entry's path clears it out of the way
    /// instead of failing with `EISDIR` for good.
    @Test(arguments: [false, true])
    func storeAndRemoveClearAFolderOutOfTheWay(removing: Bool) throws {
        try withTemporaryDirectory { dir throws in
            let root = dir.appendingPathComponent("root")
            let cache = try CacheManager<ShopCache>(
                root: CacheRoot(directory: root),
                configuration: .init(memoryCountLimit: 0)
            )
            try cache.store("orders", for: .apiStrategy, parameter: "/v1/orders")
            let path = try #require(try cache.info(for: .apiStrategy, parameter: "/v1/orders")).fileURL.path
            try plant(.folder, at: path, outside: dir)
            if removing {
                #expect(try cache.removeValue(for: .apiStrategy, parameter: "/v1/orders"))
                #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == nil)
            } else {
                try cache.store("new", for: .apiStrategy, parameter: "/v1/orders")
                #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == "new")
            }
            #expect(cache.totalSize == entryFiles(under: root).values.reduce(0, +))
        }
    }

    /// A file where a type's folder belongs (found by a rescan, or not) no longer makes every
    /// store of the type fail with `ENOTDIR`: the store clears it away.
    @Test(arguments: [false, true])
    func aFileInPlaceOfATypeFolderIsClearedByTheNextStore(rescanned: Bool) throws {
        try withTemporaryDirectory { dir throws in
            let root = dir.appendingPathComponent("root")
            func open() throws -> CacheManager<ShopCache> {
                try CacheManager<ShopCache>(root: CacheRoot(directory: root), configuration: .init(memoryCountLimit: 0))
            }
            var cache = try open()
            try cache.store("orders", for: .apiStrategy, parameter: "/v1/orders")
            try cache.store("hot", for: .hots)
            let folder = try #require(try cache.info(for: .apiStrategy, parameter: "/v1/orders")).fileURL
                .deletingLastPathComponent()
            try FileManager.default.removeItem(at: folder)
            try Data(repeating: 9, count: 777).write(to: folder)
            if rescanned {
                cache = try CacheManager<ShopCache>(
                    root: CacheRoot(directory: dir),
                    configuration: .init(memoryCountLimit: 0)
                )
                try Data("D".utf8).write(to: root.appendingPathComponent(".archivist/dirty"))
                cache = try open()
            }
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == nil)
            try cache.store("orders again", for: .apiStrategy, parameter: "/v1/orders")
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == "orders again")
            #expect(try cache.value(String.self, for: .hots) == "hot")
            #expect(cache.totalSize == entryFiles(under: root).values.reduce(0, +))
            #expect(cache.totalUsage.entryCount == 2)
        }
    }
}
