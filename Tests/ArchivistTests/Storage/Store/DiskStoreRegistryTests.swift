import Foundation
import Testing

@testable import Archivist

/// One store per root folder in a process, whatever path names the folder: here a symbolic
/// link, the second spelling this machine can make (on APFS and HFS+ as Apple platforms
/// format them, `Shop` and `shop`, or two normalizations of "é", name one folder as well).
@Suite struct DiskStoreRegistryTests {
    /// A symbolic link `<dir>-<name>` to `dir`, not kept apart (unlike ``linkedFolder(_:_:)``).
    private func plainLink(_ dir: URL, _ name: String) throws -> URL {
        let link = dir.deletingLastPathComponent().appendingPathComponent(dir.lastPathComponent + "-" + name)
        try? FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: dir)
        return link
    }

    @Test func aRootOpenedThroughASymbolicLinkIsTheSameStore() throws {
        try withTemporaryDirectory { dir in
            let link = try plainLink(dir, "spelling")
            defer { try? FileManager.default.removeItem(at: link) }
            let direct = try DiskStore.open(at: dir)
            let linked = try DiskStore.open(at: link)
            try #require(direct === linked)
            // A write through one spelling is seen through the other at once.
            let key = hashedKey("a", "1")
            try linked.write(Data("one".utf8), to: key, typeName: "t", parameter: nil, expiry: nil, durability: .none)
            #expect(direct.contains(key))
            #expect(try direct.read(key, typeName: "t", parameter: nil) { Data($0.payloadBytes) } == Data("one".utf8))
            // Nested on one thread: one store, one re-entrant lock. (Two stores would wait here
            // for their own thread's `flock` forever; the `require` above keeps that from running.)
            let nested = hashedKey("a", "2")
            _ = try direct.index.lock.withExclusive {
                try linked.write(
                    Data("two".utf8),
                    to: nested,
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
            }
            #expect(direct.contains(nested))
            direct.waitForTrash()
        }
    }

    @Test func managersOfOneRootThroughTwoSpellingsShareItsStores() throws {
        try withTemporaryDirectory { dir in
            let link = try plainLink(dir, "manager")
            defer { try? FileManager.default.removeItem(at: link) }
            let a = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "u")
            let b = try CacheManager<ShopCache>(root: CacheRoot(directory: link), user: "u")
            #expect(a.caches === b.caches)
            #expect(a.documents === b.documents)
            try a.store(["kept"], for: .productList)
            #expect(try b.value(for: .productList) == ["kept"])
            try b.store(["replaced"], for: .productList)
            #expect(try a.value(for: .productList) == ["replaced"])  // a's memory tier does not serve the old value
        }
    }

    /// A path kept apart (the tests' stand-in for another process) opens a store of its own.
    @Test func aPathKeptApartOpensAStoreOfItsOwn() throws {
        try withTemporaryDirectory { dir in
            let direct = try DiskStore.open(at: dir)
            let apart = try DiskStore.open(at: linkedFolder(dir, "apart"))
            #expect(direct !== apart)
            direct.waitForTrash()
            apart.waitForTrash()
        }
    }
}
