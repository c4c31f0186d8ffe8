import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

@Suite struct CacheConcurrencyTests {
    /// 8 tasks of seeded mixed operations on overlapping keys; afterwards the size index
    /// equals the disk, every entry reads back as some value that was written for that key,
    /// and a clear brings everything to zero.
    @Test func eightTasksOfMixedOperationsLeaveAConsistentState() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(
                root: CacheRoot(directory: dir),
                user: "alice",
                configuration: .init(memoryCountLimit: 16)
            )
            let types: [ShopCache] = [.productList, .userOrderList, .message, .apiStrategy, .bounded]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        var rng = SplitMix64(seed: UInt64(task) &* 0x9E37_79B9)
                        for _ in 0..<150 {
                            let type = types[Int.random(in: 0..<types.count, using: &rng)]
                            let parameter = "k\(Int.random(in: 0..<6, using: &rng))"
                            let operation = Int.random(in: 0..<20, using: &rng)
                            switch operation {
                            case 18:
                                try await cache.store(
                                    "\(type.name)/\(parameter)/\(task)",
                                    for: type,
                                    parameter: parameter
                                )
                            case 19: _ = try await cache.value(String.self, for: type, parameter: parameter)
                            default: try Self.blockingStep(operation, cache, type, parameter, task)
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(cache.totalSize == entryFiles(under: dir).values.reduce(0, +))
            #expect(cache.totalUsage.entryCount == entryFiles(under: dir).count)
            for type in types {
                for k in 0..<6 {
                    let onDisk = cache.contains(type, parameter: "k\(k)")
                    let value = try await cache.value(String.self, for: type, parameter: "k\(k)")
                    #expect((value != nil) == onDisk, "\(type) k\(k)")
                    if let value { #expect(value.hasPrefix("\(type.name)/k\(k)/")) }
                }
            }
            try await cache.clear()
            #expect(cache.totalSize == 0)
            #expect(entryFiles(under: dir).isEmpty)
        }
    }

    /// One operation through the blocking API (sync, so it is not resolved to the async overloads).
    private static func blockingStep(
        _ operation: Int,
        _ cache: CacheManager<ShopCache>,
        _ type: ShopCache,
        _ parameter: String,
        _ task: Int
    ) throws {
        switch operation {
        case 0..<9:
            try cache.store("\(type.name)/\(parameter)/\(task)", for: type, parameter: parameter)
        case 9..<15:
            if let value = try cache.value(String.self, for: type, parameter: parameter) {
                #expect(value.hasPrefix("\(type.name)/\(parameter)/"))
            }
        case 15..<17: try cache.removeValue(for: type, parameter: parameter)
        case 17: _ = cache.totalSize
        default: try cache.clear(.type(type))
        }
    }

    @Test func asyncAndCompletionFormsRoundTrip() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try await cache.store([1, 2, 3], for: .hots)
            #expect(try await cache.value([Int].self, for: .hots) == [1, 2, 3])
            let viaCompletion: [Int]? = try await withCheckedThrowingContinuation { continuation in
                cache.value([Int].self, for: .hots) { continuation.resume(with: $0) }
            }
            #expect(viaCompletion == [1, 2, 3])
            let removed: Bool = try await withCheckedThrowingContinuation { continuation in
                cache.removeValue(for: .hots) { continuation.resume(with: $0) }
            }
            #expect(removed)
            #expect(try await cache.value([Int].self, for: .hots) == nil)
        }
    }
}
