import Foundation
import Testing

@testable import Archivist

/// Giving memory back: the memory tier's default limit in an app extension and on watchOS, trimming on
/// request, and emptying on UIKit's memory warning — without keeping the manager alive.
@Suite struct CacheMemoryPressureTests {
    private func manager(_ dir: URL, center: NotificationCenter) throws -> CacheManager<ShopCache> {
        try CacheManager<ShopCache>(
            root: CacheRoot(directory: dir),
            user: "u",
            configuration: .init(),
            fileSystem: .posix,
            notificationCenter: center
        )
    }

    private func memoryCount(_ cache: CacheManager<ShopCache>) -> Int { cache.memory?.cache.count ?? -1 }

    @Test func theDefaultLimitIsSmallerInAnAppExtensionAndOnWatchOS() {
        typealias Configuration = CacheManager<ShopCache>.Configuration
        #expect(Configuration.memoryCostLimit(inAppExtension: true, onWatch: false) == 4 << 20)
        #expect(Configuration.memoryCostLimit(inAppExtension: false, onWatch: true) == 4 << 20)
        #expect(Configuration.memoryCostLimit(inAppExtension: true, onWatch: true) == 4 << 20)
        #expect(Configuration.memoryCostLimit(inAppExtension: false, onWatch: false) == 32 << 20)
        #expect(AppExtension.isAppExtension(bundleURL: URL(fileURLWithPath: "/Apps/Shop.app/PlugIns/ShopWidget.appex")))
        #expect(!AppExtension.isAppExtension(bundleURL: URL(fileURLWithPath: "/Apps/Shop.app")))
        // This test runner is no app extension.
        #expect(CacheManager<ShopCache>.Configuration().memoryCostLimit == 32 << 20)
    }

    @Test func aMemoryWarningEmptiesTheMemoryTierAndKeepsTheDisk() throws {
        try withTemporaryDirectory { dir in
            let center = NotificationCenter()
            let cache = try manager(dir, center: center)
            for id in 0..<3 { try cache.store("value \(id)", for: .apiStrategy, parameter: "/\(id)") }
            #expect(memoryCount(cache) == 3)
            center.post(name: Notification.Name("UIApplicationDidReceiveMemoryWarningNotification"), object: nil)
            #expect(memoryCount(cache) == 0)
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/1") == "value 1")
            #expect(memoryCount(cache) == 1)
        }
    }

    @Test func trimmingKeepsTheMostRecentlyUsedValues() throws {
        try withTemporaryDirectory { dir in
            let cache = try manager(dir, center: NotificationCenter())
            let tier = try #require(cache.memory)
            for id in 0..<4 {
                try cache.store(String(repeating: "x", count: 1_000), for: .apiStrategy, parameter: "/\(id)")
            }
            _ = try cache.value(String.self, for: .apiStrategy, parameter: "/0")  // now the most recent
            let each = tier.cache.totalCost / 4
            cache.trimMemory(to: 2 * each)
            #expect(tier.cache.count == 2 && tier.cache.totalCost <= 2 * each)
            #expect(Set(tier.cache.keysByRecency.compactMap(\.parameter)) == ["/0", "/3"])
            cache.removeAllFromMemory()
            #expect(tier.cache.count == 0 && tier.cache.totalCost == 0)
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/2") != nil)  // still on disk
        }
    }

    @Test func theWatchNeitherKeepsTheManagerAliveNorOutlivesIt() throws {
        try withTemporaryDirectory { dir in
            let center = NotificationCenter()
            weak var released: CacheManager<ShopCache>?
            weak var releasedTier: MemoryTier?
            weak var releasedWatch: MemoryPressureWatch?
            do {
                let cache = try manager(dir, center: center)
                try cache.store("a", for: .hots)
                released = cache
                releasedTier = cache.memory
                releasedWatch = cache.memoryPressure
                #expect(releasedWatch != nil)
            }
            #expect(released == nil && releasedTier == nil && releasedWatch == nil)
            // The watch's `deinit` removed its observer; a warning now reaches nothing of it.
            center.post(name: Notification.Name("UIApplicationDidReceiveMemoryWarningNotification"), object: nil)
        }
    }

    @Test func aManagerWithoutAMemoryTierWatchesNothing() throws {
        try withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(
                root: CacheRoot(directory: dir),
                user: "u",
                configuration: .init(memoryCountLimit: 0)
            )
            #expect(cache.memoryPressure == nil)
            cache.trimMemory(to: 0)
            cache.removeAllFromMemory()
        }
    }
}
