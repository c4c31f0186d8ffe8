import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

@Suite struct CacheManagerTests {
    let products = [Product(id: 1, name: "Tea", price: 3.5), Product(id: 2, name: "Cake", price: 4)]

    @Test(arguments: [ShopCache.productList, .userOrderList, .hots, .message, .apiStrategy])
    func storeThenValueRoundTrips(type: ShopCache) throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try cache.store(products, for: type)
            #expect(try cache.value([Product].self, for: type) == products)
            // A second manager has its own (empty) memory tier, so this read comes from disk.
            let fresh = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            #expect(try fresh.value([Product].self, for: type) == products)
            #expect(fresh.contains(type))
        }
    }

    @Test func storingNilRemoves() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store(products, for: .productList)
            try cache.store(nil as [Product]?, for: .productList)
            #expect(try cache.value([Product].self, for: .productList) == nil)
            #expect(!cache.contains(.productList))
            #expect(cache.totalSize == 0)
        }
    }

    @Test func parametersKeepEntriesApart() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store("orders", for: .apiStrategy, parameter: "/v1/orders")
            try cache.store("users", for: .apiStrategy, parameter: "/v1/users")
            try cache.store("none", for: .apiStrategy)
            try cache.store("empty", for: .apiStrategy, parameter: "")
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == "orders")
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/users") == "users")
            #expect(try cache.value(String.self, for: .apiStrategy) == "none")
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "") == "empty")
            #expect(try cache.removeValue(for: .apiStrategy, parameter: "/v1/orders"))
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == nil)
            #expect(cache.usage(of: ShopCache.apiStrategy).entryCount == 3)
        }
    }

    @Test func readingAsAnotherTypeIsADecodingErrorAndKeepsTheEntry() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store(products, for: .productList)
            let error = #expect(throws: CacheError.self) { try cache.value(Int.self, for: .productList) }
            #expect(error?.code == .decodingFailed)
            #expect(error?.typeName == "productList")
            #expect(error?.underlyingError is ArchiveError)
            #expect(try cache.value([Product].self, for: .productList) == products)
        }
    }

    @Test func expiredEntriesMissButStayForTheOfflineFallback() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store("stale", for: .shortLived)  // policy maxAge -1
            #expect(try cache.value(String.self, for: .shortLived) == nil)
            #expect(try cache.value(String.self, for: .shortLived, maxAge: 60) == "stale")
            #expect(cache.contains(.shortLived))
            try cache.store("kept", for: .shortLived, expiry: .never)  // per-entry override
            #expect(try cache.value(String.self, for: .shortLived) == "kept")
            try cache.store("gone", for: .hots, expiry: .at(Date(timeIntervalSinceNow: -1)))
            #expect(try cache.value(String.self, for: .hots) == nil)
            let info = try #require(try cache.info(for: .hots))
            #expect(info.isExpired())
        }
    }

    @Test func offlineFallbackReturnsTheStaleValueWhenTheFetchFails() throws {
        struct Offline: Error {}
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            #expect(throws: Offline.self) {
                try cache.value(String.self, for: .shortLived) { throw Offline() }
            }
            let fresh = try cache.value(String.self, for: .shortLived) { "today's story" }
            #expect(fresh.value == "today's story" && !fresh.isFromCache)
            let fallback = try cache.value(String.self, for: .shortLived) { throw Offline() }
            #expect(fallback.value == "today's story")
            #expect(fallback.isFromCache)
            #expect(fallback.fetchError is Offline)
        }
    }

    @Test func infoReportsSizesAndDates() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            let before = Date()
            try cache.store(products, for: .apiStrategy, parameter: "/v1", expiry: .after(60))
            let info = try #require(try cache.info(for: .apiStrategy, parameter: "/v1"))
            #expect(info.size == cache.totalSize)
            #expect(info.payloadSize < info.size)
            #expect(info.allocatedSize >= info.size)
            #expect(info.writeDate >= before.addingTimeInterval(-1))
            #expect(try #require(info.expiry).timeIntervalSince(info.writeDate) == 60)
            #expect(info.fileURL.path.hasPrefix(dir.standardizedFileURL.path))
            #expect(try cache.info(for: .apiStrategy, parameter: "other") == nil)
        }
    }

    @Test func sizesAreAnsweredPerTypeAndLocation() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try cache.store(products, for: .productList)
            try cache.store(products, for: .userOrderList)
            try cache.store("hello", for: .message)
            let onDisk = entryFiles(under: dir).values.reduce(0, +)
            #expect(cache.totalSize == onDisk)
            #expect(
                cache.size(of: ShopCache.productList) + cache.size(of: ShopCache.userOrderList)
                    + cache.size(of: ShopCache.message) == onDisk
            )
            #expect(cache.size(of: CacheLocation.userDocuments) == cache.size(of: ShopCache.message))
            #expect(cache.totalUsage.entryCount == 3)
            #expect(cache.totalUsage.allocatedBytes >= cache.totalSize)
        }
    }

    @Test func separateCachesAndDocumentsRootsAreBothUsed() throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(
                caches: dir.appendingPathComponent("caches"),
                documents: dir.appendingPathComponent("docs")
            )
            let cache = try CacheManager<ShopCache>(root: root, user: "alice")
            try cache.store("receipt", for: .message)
            try cache.store("list", for: .productList)
            #expect(entryFiles(under: root.documents).count == 1)
            #expect(entryFiles(under: root.caches).count == 1)
            let onDisk =
                entryFiles(under: root.caches).values.reduce(0, +)
                + entryFiles(under: root.documents).values.reduce(0, +)
            #expect(cache.totalSize == onDisk)
        }
    }

    @Test func byteLimitEvictsOnWriteAndDropsTheMemoryCopy() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            let blob = Data(repeating: 9, count: 1_500)
            try cache.store(blob, for: .bounded, parameter: "a")
            try cache.store(blob, for: .bounded, parameter: "b")
            #expect(try cache.value(Data.self, for: .bounded, parameter: "a") != nil)  // a is now recent
            try cache.store(blob, for: .bounded, parameter: "c")
            #expect(cache.size(of: ShopCache.bounded) <= 4_000)
            #expect(!cache.contains(.bounded, parameter: "b"))
            #expect(try cache.value(Data.self, for: .bounded, parameter: "b") == nil)
            #expect(try cache.value(Data.self, for: .bounded, parameter: "a") == blob)
        }
    }

    @Test func nonSendableClassGraphsAreDecodedAfreshEachRead() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            let user = User(account: "alice", writeName: "Alice")
            let letter = Letter(
                pkNumber: 1,
                sender: "bob",
                content: "hi",
                date: Date(timeIntervalSince1970: 0),
                isRead: false,
                incoming: true
            )
            letter.user = user
            user.letters = [letter]
            try cache.store(user, for: .message)
            let first = try #require(try cache.value(User.self, for: .message))
            let second = try #require(try cache.value(User.self, for: .message))
            #expect(first !== second)
            #expect(first.letters.first?.user === first)
        }
    }

    @Test func sendableValuesAreServedFromTheMemoryTier() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store(products, for: .hots)
            let url = try #require(try cache.info(for: .hots)).fileURL
            try FileManager.default.removeItem(at: url)  // behind the cache's back
            #expect(try cache.value([Product].self, for: .hots) == products)
            let noMemory = try CacheManager<ShopCache>(
                root: CacheRoot(directory: dir),
                configuration: .init(memoryCountLimit: 0)
            )
            #expect(try noMemory.value([Product].self, for: .hots) == nil)
        }
    }

    @Test func aMemoryHitOfAnotherTypeFallsBackToTheDiskAndReportsTheMismatch() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store("text", for: .hots)
            let error = #expect(throws: CacheError.self) { try cache.value([Product].self, for: .hots) }
            #expect(error?.code == .decodingFailed)
            #expect(try cache.value(String.self, for: .hots) == "text")
        }
    }

    @Test func aManagerWithoutUserRefusesUserScopedTypes() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            let error = #expect(throws: CacheError.self) { try cache.store("x", for: .userOrderList) }
            #expect(error?.code == .noUser)
            #expect(cache.size(of: ShopCache.userOrderList) == 0)
            #expect(!cache.contains(.message))
        }
    }
}
