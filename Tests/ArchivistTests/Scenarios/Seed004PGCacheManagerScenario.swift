import Archivist
import Foundation
import Testing

/// Seed 004: `PGCacheManager` — five cache types mapped to MD5-named files under data-cache,
/// user-cache and user-document folders, one type with a parameter, `nil` removes, a size,
/// and clearing with a finish block. Public API only.
@Suite struct Seed004PGCacheManagerScenario {
    enum PGCacheType: String, CacheType, CaseIterable {
        case productList, userOrderList, hots, message, apiStrategy

        var location: CacheLocation {
            switch self {
            case .productList, .hots, .apiStrategy: .sharedCaches
            case .userOrderList: .userCaches
            case .message: .userDocuments
            }
        }
    }

    struct Product: Codable, Archivable, Sendable, Equatable {
        var id: Int
        var name: String
    }
    struct Order: Codable, Archivable, Sendable, Equatable {
        var number: String
        var total: Double
    }
    struct Strategy: Codable, Archivable, Sendable, Equatable {
        var endpoint: String
        var retries: Int
    }

    @Test func pgCacheManagerJobsEndToEnd() async throws {
        try await withTemporaryDirectory { folder in
            let cache = try CacheManager<PGCacheType>(root: CacheRoot(directory: folder), user: "alice")
            try storeReadSizeAndRemove(cache, folder: folder)

            // + clearCacheData:finishBlock:
            let freed: Result<Int, CacheError> = await withCheckedContinuation { continuation in
                cache.clear { continuation.resume(returning: $0) }
            }
            #expect(try freed.get() > 0)
            #expect(cache.totalSize == 0)
            #expect(try await cache.value([Order].self, for: .userOrderList) == nil)
        }
    }

    /// The synchronous calls, as the seed makes them.
    private func storeReadSizeAndRemove(_ cache: CacheManager<PGCacheType>, folder: URL) throws {
        let products = (1...20).map { Product(id: $0, name: "Product \($0)") }
        let orders = [Order(number: "A-1", total: 9.5)]

        // + cacheData:type: — every type, archived.
        try cache.store(products, for: .productList)
        try cache.store(orders, for: .userOrderList)
        try cache.store(["patch-1.2.js": Data(repeating: 1, count: 512)], for: .hots)
        try cache.store(["read": [1, 2, 3]], for: .message)
        // + cacheData:type:param: — one entry per endpoint.
        try cache.store(Strategy(endpoint: "/v1/orders", retries: 3), for: .apiStrategy, parameter: "/v1/orders")
        try cache.store(
            Strategy(endpoint: "/v1/users?page=2", retries: 1),
            for: .apiStrategy,
            parameter: "/v1/users?page=2"
        )

        // + readCacheType:(param:)
        #expect(try cache.value([Product].self, for: .productList) == products)
        #expect(try cache.value([Order].self, for: .userOrderList) == orders)
        #expect(try cache.value(Strategy.self, for: .apiStrategy, parameter: "/v1/orders")?.retries == 3)
        #expect(try cache.value(Strategy.self, for: .apiStrategy, parameter: "/v1/users?page=2")?.retries == 1)
        #expect(try cache.value(Strategy.self, for: .apiStrategy) == nil, "no parameter is its own entry")

        // Files are MD5-named: no caller string is a path component.
        let names = try allPathComponents(under: folder)
        for word in ["productList", "alice", "v1", "orders", "apiStrategy"] {
            #expect(!names.contains { $0.contains(word) }, "\(word) leaked into a path")
        }

        // + cacheDataSize
        let total = cache.totalSize
        #expect(total > 0)
        #expect(total == PGCacheType.allCases.map { cache.size(of: $0) }.reduce(0, +))

        // cacheData:nil removes.
        try cache.store(nil as [Product]?, for: .productList)
        #expect(try cache.value([Product].self, for: .productList) == nil)
        #expect(cache.size(of: .productList) == 0)
    }

    private func allPathComponents(under folder: URL) throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        var names: [String] = []
        while let path = enumerator?.nextObject() as? String { names += path.split(separator: "/").map(String.init) }
        return names
    }
}
