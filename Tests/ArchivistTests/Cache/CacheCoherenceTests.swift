import Foundation
import Testing
@testable import Archivist

/// The memory tier never serves a value another process (here: a manager on another link to
/// the same folder, which has its own store, lock descriptor and journal position) or another
/// manager of this process replaced or removed, once that write has returned.
@Suite struct CacheCoherenceTests {
    /// A manager on `dir` through its own symbolic link `dir-<name>`.
    private func manager(_ dir: URL, via name: String?) throws -> CacheManager<ShopCache> {
        guard let name else { return try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "u") }
        let link = dir.deletingLastPathComponent().appendingPathComponent(dir.lastPathComponent + "-" + name)
        try? FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: dir)
        return try CacheManager<ShopCache>(root: CacheRoot(directory: link), user: "u")
    }

    @Test(arguments: [true, false])
    func aReplacedRemovedOrClearedValueIsNeverServedFromMemory(separateStores: Bool) throws {
        try withTemporaryDirectory { dir throws in
            let writer = try manager(dir, via: separateStores ? "writer" : nil)
            let reader = try manager(dir, via: separateStores ? "reader" : nil)
            #expect((writer.caches === reader.caches) == !separateStores)
            for (type, parameter) in [(ShopCache.productList, nil), (.apiStrategy, "/v1/orders"), (.message, "m")] {
                try writer.store("v1", for: type, parameter: parameter)
                #expect(try reader.value(String.self, for: type, parameter: parameter) == "v1")   // now in memory
                #expect(try reader.value(String.self, for: type, parameter: parameter) == "v1")
                try writer.store("v2", for: type, parameter: parameter)
                #expect(try reader.value(String.self, for: type, parameter: parameter) == "v2")
                try writer.removeValue(for: type, parameter: parameter)
                #expect(try reader.value(String.self, for: type, parameter: parameter) == nil)
                try writer.store("v3", for: type, parameter: parameter)
                #expect(try reader.value(String.self, for: type, parameter: parameter) == "v3")
                try writer.clear(.type(type))
                #expect(try reader.value(String.self, for: type, parameter: parameter) == nil)
                #expect(!reader.contains(type, parameter: parameter))
            }
        }
    }

    @Test func anotherStoresWriteToOneKeyLeavesTheOtherKeysInMemory() throws {
        try withTemporaryDirectory { dir throws in
            let writer = try manager(dir, via: "w")
            let reader = try manager(dir, via: "r")
            try writer.store("a", for: .apiStrategy, parameter: "a")
            try writer.store("b", for: .apiStrategy, parameter: "b")
            _ = try reader.value(String.self, for: .apiStrategy, parameter: "a")
            _ = try reader.value(String.self, for: .apiStrategy, parameter: "b")
            try writer.store("a2", for: .apiStrategy, parameter: "a")
            #expect(try reader.value(String.self, for: .apiStrategy, parameter: "a") == "a2")
            #expect(reader.memory?.cache.count == 2)   // "b" stayed; "a" came back from disk
        }
    }
}
