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
        return try CacheManager<ShopCache>(root: CacheRoot(directory: linkedFolder(dir, name)), user: "u")
    }

    @Test(arguments: [true, false])
    func aReplacedRemovedOrClearedValueIsNeverServedFromMemory(separateStores: Bool) throws {
        try withTemporaryDirectory { dir throws in
            let writer = try manager(dir, via: separateStores ? "writer" : nil)
            let reader = try manager(dir, via: separateStores ? "reader" : nil)
            #expect((writer.caches === reader.caches) == !separateStores)
            for (type, parameter) in [(ShopCache.productList, nil), (.apiStrategy, "/v1/orders"), (.message, "m")] {
                try writer.store("v1", for: type, parameter: parameter)
                #expect(try reader.value(String.self, for: type, parameter: parameter) == "v1")  // now in memory
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
            #expect(reader.memory?.cache.count == 2)  // "b" stayed; "a" came back from disk
        }
    }
}

/// A write whose file change landed but whose journal record could not be appended (`ENOSPC`
/// on the journal's `pwrite`) bumps the change counter and leaves the intent word set; the
/// journal has no record of it. Before, another store's memory tier saw the counter move, found
/// no new record, marked itself current and went on serving the replaced value.
@Suite struct CacheCoherenceFailedRecordTests {
    @Test(arguments: FaultInjector.Mode.allCases)
    func aWriteWhoseRecordFailedIsNotHiddenByTheMemoryTier(mode: FaultInjector.Mode) throws {
        try withTemporaryDirectory { dir throws in
            let links = try ["w", "r"].map { try linkedFolder(dir, $0) }
            let injector = FaultInjector(mode: mode)
            let writer = try CacheManager<ShopCache>(
                root: CacheRoot(directory: links[0]),
                user: "u",
                configuration: .init(),
                fileSystem: injector.fileSystem
            )
            let reader = try CacheManager<ShopCache>(root: CacheRoot(directory: links[1]), user: "u")
            try writer.store("v0", for: .apiStrategy, parameter: "p")
            #expect(try reader.value(String.self, for: .apiStrategy, parameter: "p") == "v0")  // now in memory
            // Fail the Nth write call of one store: the first N whose store returns is the record's.
            var stored: String?
            for n in 1...20 where stored == nil {
                injector.arm(.init(operation: .write, n: n, persistent: false, errno: ENOSPC))
                let returned = (try? writer.store("v\(n)", for: .apiStrategy, parameter: "p")) != nil
                if injector.disarm() == 1 && returned { stored = "v\(n)" }
            }
            let expected = try #require(stored)
            #expect(writer.caches.index.shared.intent)
            #expect(try reader.value(String.self, for: .apiStrategy, parameter: "p") == expected)
        }
    }
}
