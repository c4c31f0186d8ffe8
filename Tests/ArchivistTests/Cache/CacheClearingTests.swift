import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

@Suite struct CacheClearingTests {
    private func fill(_ cache: CacheManager<ShopCache>) throws {
        for type in [ShopCache.productList, .userOrderList, .hots, .message, .apiStrategy] {
            for i in 0..<5 { try cache.store(Array(repeating: i, count: 50), for: type, parameter: "\(i)") }
        }
    }

    @Test func clearBringsTotalSizeToZeroAndDeletesTheFiles() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try fill(cache)
            let before = cache.totalSize
            #expect(before > 0)
            let freed = try await cache.clear()
            #expect(freed == before)
            #expect(cache.totalSize == 0)
            #expect(entryFiles(under: dir).isEmpty)
            #expect(try await cache.value([Int].self, for: .hots, parameter: "1") == nil)
        }
    }

    @Test(arguments: [ShopCache.productList, .userOrderList, .message])
    func clearingATypeLeavesTheOthers(type: ShopCache) throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try fill(cache)
            let others = cache.totalSize - cache.size(of: type)
            try cache.clear(.type(type))
            #expect(cache.size(of: type) == 0)
            #expect(cache.totalSize == others)
            #expect(try cache.value([Int].self, for: type, parameter: "1") == nil)
            #expect(
                try cache.value([Int].self, for: .apiStrategy, parameter: "1")
                    == (type == .apiStrategy ? nil : Array(repeating: 1, count: 50))
            )
        }
    }

    @Test(arguments: CacheLocation.allCases)
    func clearingALocationLeavesTheOthers(location: CacheLocation) throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try fill(cache)
            let others = cache.totalSize - cache.size(of: location)
            try cache.clear(.location(location))
            #expect(cache.size(of: location) == 0)
            #expect(cache.totalSize == others)
        }
    }

    @Test func completionReportsBytesFreedAndMayCallTheCacheAgain() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try fill(cache)
            let before = cache.totalSize
            let (freed, sizeAfter) = await withCheckedContinuation { continuation in
                cache.clear { result in
                    // Re-entrant: the completion writes and reads the cache.
                    let stored = Result { try cache.store("after", for: .hots) }
                    continuation.resume(
                        returning: ((try? result.get()) ?? -1, (try? stored.get()) != nil ? cache.totalSize : -1)
                    )
                }
            }
            #expect(freed == before)
            #expect(sizeAfter > 0 && sizeAfter < before)
            #expect(try await cache.value(String.self, for: .hots) == "after")
        }
    }

    @Test func clearingTwiceFreesNothingTheSecondTime() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store("x", for: .hots)
            #expect(try cache.clear() > 0)
            #expect(try cache.clear() == 0)
        }
    }

    @Test(arguments: [UInt64(7), 99, 2_024])
    func randomOperationsKeepTotalSizeEqualToTheBytesOnDisk(seed: UInt64) throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            var rng = SplitMix64(seed: seed)
            let types: [ShopCache] = [.productList, .userOrderList, .hots, .message, .apiStrategy, .bounded]
            for step in 0..<300 {
                let type = types[Int.random(in: 0..<types.count, using: &rng)]
                let parameter: String? = Bool.random(using: &rng) ? nil : "p\(Int.random(in: 0..<8, using: &rng))"
                switch Int.random(in: 0..<20, using: &rng) {
                case 0..<11:
                    try cache.store(
                        [UInt8](repeating: 1, count: Int.random(in: 0..<2_000, using: &rng)),
                        for: type,
                        parameter: parameter
                    )
                case 11..<15: try cache.removeValue(for: type, parameter: parameter)
                case 15..<18: _ = try cache.value([UInt8].self, for: type, parameter: parameter)
                case 18: try cache.clear(.type(type))
                default: try cache.clear(.location(type.location))
                }
                #expect(cache.totalSize == entryFiles(under: dir).values.reduce(0, +), "seed \(seed) step \(step)")
            }
            try cache.clear()
            #expect(cache.totalSize == 0)
        }
    }
}
