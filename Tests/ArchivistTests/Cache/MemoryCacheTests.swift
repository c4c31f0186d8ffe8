import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

@Suite struct MemoryCacheTests {
    typealias Cache = MemoryCache<String, Int>

    // MARK: LRU order

    @Test func hitMakesEntryMostRecent() {
        let cache = Cache(configuration: .init(countLimit: 3))
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        cache.setValue(3, forKey: "c")
        #expect(cache.keysByRecency == ["c", "b", "a"])
        #expect(cache.value(forKey: "a") == 1)
        #expect(cache.keysByRecency == ["a", "c", "b"])
        cache.setValue(4, forKey: "d")
        #expect(cache.value(forKey: "b") == nil, "b was least recently used")
        #expect(cache.keysByRecency == ["d", "a", "c"])
        #expect(cache.invariantViolation() == nil)
    }

    @Test func missChangesNothing() {
        let cache = Cache(configuration: .init(countLimit: 2))
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        #expect(cache.value(forKey: "zzz") == nil)
        #expect(cache.keysByRecency == ["b", "a"])
    }

    @Test func replacingAValueMakesItMostRecentAndKeepsCount() {
        let cache = Cache(configuration: .init(countLimit: 2))
        cache.setValue(1, forKey: "a", cost: 5)
        cache.setValue(2, forKey: "b", cost: 5)
        cache.setValue(10, forKey: "a", cost: 7)
        #expect(cache.count == 2)
        #expect(cache.totalCost == 12)
        cache.setValue(3, forKey: "c")
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.value(forKey: "a") == 10)
    }

    // MARK: Limits

    @Test(arguments: [1, 2, 5, 64])
    func countLimitIsNeverExceeded(limit: Int) {
        let cache = Cache(configuration: .init(countLimit: limit))
        for index in 0..<200 {
            cache.setValue(index, forKey: "k\(index)")
            #expect(cache.count == min(index + 1, limit))
        }
        // The survivors are exactly the newest `limit` inserts.
        #expect(cache.keysByRecency == (200 - limit..<200).reversed().map { "k\($0)" })
        #expect(cache.invariantViolation() == nil)
    }

    @Test func costLimitEvictsLeastRecentUntilWithinLimit() {
        let cache = Cache(configuration: .init(costLimit: 10))
        cache.setValue(1, forKey: "a", cost: 4)
        cache.setValue(2, forKey: "b", cost: 4)
        _ = cache.value(forKey: "a")
        cache.setValue(3, forKey: "c", cost: 5)  // 13 > 10: evict b (LRU), leaving 9
        #expect(cache.keysByRecency == ["c", "a"])
        #expect(cache.totalCost == 9)
        cache.setValue(4, forKey: "d", cost: 10)  // needs everything else gone
        #expect(cache.keysByRecency == ["d"])
        #expect(cache.totalCost == 10)
    }

    @Test func bothLimitsApplyTogether() {
        let cache = Cache(configuration: .init(countLimit: 3, costLimit: 100))
        for index in 0..<3 { cache.setValue(index, forKey: "s\(index)", cost: 1) }
        cache.setValue(9, forKey: "big", cost: 99)  // count 4 > 3 evicts s0; cost 101 > 100 evicts s1
        #expect(cache.keysByRecency == ["big", "s2"])
        #expect(cache.totalCost == 100)
    }

    @Test func itemCostlierThanTheWholeLimitIsNotKept() {
        let cache = Cache(configuration: .init(costLimit: 10))
        cache.setValue(1, forKey: "small", cost: 3)
        cache.setValue(2, forKey: "huge", cost: 11)
        #expect(cache.value(forKey: "huge") == nil)
        #expect(cache.value(forKey: "small") == 1, "an oversize insert must not flush the cache")
        #expect(cache.totalCost == 3)
    }

    @Test func oversizeReplacementDropsTheStaleValue() {
        let cache = Cache(configuration: .init(costLimit: 10))
        cache.setValue(1, forKey: "k", cost: 3)
        cache.setValue(2, forKey: "k", cost: 50)
        #expect(cache.value(forKey: "k") == nil)
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
    }

    @Test func zeroLimitsMeanUnlimitedAndNegativeCostCountsAsZero() {
        let cache = Cache()
        for index in 0..<1_000 { cache.setValue(index, forKey: "\(index)", cost: 1_000_000) }
        cache.setValue(-1, forKey: "negative", cost: -50)
        #expect(cache.count == 1_001)
        #expect(cache.totalCost == 1_000_000_000)
    }

    // MARK: Removal

    @Test func removeValueReturnsTheValueAndFreesItsCost() {
        let cache = Cache()
        cache.setValue(1, forKey: "a", cost: 2)
        cache.setValue(2, forKey: "b", cost: 3)
        cache.setValue(3, forKey: "c", cost: 4)
        #expect(cache.removeValue(forKey: "b") == 2)
        #expect(cache.removeValue(forKey: "b") == nil)
        #expect(cache.totalCost == 6)
        #expect(cache.keysByRecency == ["c", "a"])
        #expect(cache.invariantViolation() == nil)
    }

    @Test func removeAllEmptiesTheCache() {
        let cache = Cache(configuration: .init(countLimit: 10))
        for index in 0..<10 { cache.setValue(index, forKey: "\(index)", cost: index) }
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(cache.value(forKey: "3") == nil)
        cache.setValue(7, forKey: "again")
        #expect(cache.keysByRecency == ["again"])
    }

    @Test func trimEvictsLeastRecentUntilWithinTheCostAndKeepsTheLimits() {
        let cache = Cache(configuration: .init(costLimit: 100))
        for index in 0..<5 { cache.setValue(index, forKey: "\(index)", cost: 10) }
        _ = cache.value(forKey: "0")
        cache.trim(toCost: 25)
        #expect(cache.keysByRecency == ["0", "4"])
        #expect(cache.totalCost == 20)
        #expect(cache.invariantViolation() == nil)
        cache.trim(toCost: 0)
        #expect(cache.count == 0 && cache.totalCost == 0)
        for index in 0..<10 { cache.setValue(index, forKey: "\(index)", cost: 10) }  // fills up to the limit again
        #expect(cache.totalCost == 100)
    }

    @Test func removeAllWhereRemovesOnlyMatchingKeys() {
        let cache = Cache()
        for index in 0..<20 {
            cache.setValue(index, forKey: (index.isMultiple(of: 2) ? "even/" : "odd/") + "\(index)", cost: 1)
        }
        cache.removeAll { $0.hasPrefix("even/") }
        #expect(cache.count == 10)
        #expect(cache.totalCost == 10)
        #expect(cache.keysByRecency.allSatisfy { $0.hasPrefix("odd/") })
        #expect(cache.invariantViolation() == nil)
    }

    @Test func removeAllWherePredicateMayUseTheCache() {
        let cache = Cache()
        for index in 0..<5 { cache.setValue(index, forKey: "\(index)") }
        // Would deadlock if the predicate ran under the cache's lock.
        cache.removeAll { key in (cache.value(forKey: key) ?? 0) >= 3 }
        #expect(Set(cache.keysByRecency) == ["0", "1", "2"])
    }

    @Test(.timeLimit(.minutes(20)))
    func evictedValuesAreReleasedOutsideTheLock() {
        let cache = MemoryCache<Int, Probe>(configuration: .init(countLimit: 1))
        let seen = Locked<[Int]>([])
        // Each probe's deinit reads the cache; releasing it under the lock would deadlock.
        cache.setValue(Probe { seen.withLock { $0.append(cache.count) } }, forKey: 1)
        cache.setValue(Probe { seen.withLock { $0.append(cache.count) } }, forKey: 2)
        cache.removeAll()
        #expect(seen.withLock { $0 } == [1, 0])
    }

    // MARK: Concurrency

    @Test func concurrentHammeringKeepsInvariants() async {
        let cache = Cache(configuration: .init(countLimit: 50, costLimit: 400))
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var rng = SplitMix64(seed: UInt64(worker) &+ 1)
                    for _ in 0..<5_000 {
                        let key = "k\(Int.random(in: 0..<120, using: &rng))"
                        switch Int.random(in: 0..<10, using: &rng) {
                        case 0..<5: cache.setValue(worker, forKey: key, cost: Int.random(in: 0...20, using: &rng))
                        case 5..<8: _ = cache.value(forKey: key)
                        case 8: cache.removeValue(forKey: key)
                        default: cache.removeAll { $0.hasSuffix("7") }
                        }
                    }
                }
            }
        }
        #expect(cache.invariantViolation() == nil)
        #expect(cache.count <= 50)
        #expect(cache.totalCost <= 400)
    }

    @Test func concurrentInsertsOfDistinctKeysAreAllKept() async {
        let cache = Cache()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<2_000 { cache.setValue(index, forKey: "\(worker)/\(index)", cost: 1) }
                }
            }
        }
        #expect(cache.count == 16_000)
        #expect(cache.totalCost == 16_000)
        #expect(cache.value(forKey: "7/1999") == 1_999)
        #expect(cache.invariantViolation() == nil)
    }

    // MARK: The hash index

    /// Keys that share a handful of hashes: probes run through other keys' words, and removals
    /// shift words back across them. Checked against a plain dictionary at every step.
    @Test(arguments: [7, 0xBAD5EED] as [UInt64])
    func collidingHashesKeepEveryKeyFindable(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let cache = MemoryCache<CollidingKey, Int>(configuration: .init(countLimit: 40))
        var model: [CollidingKey: Int] = [:]
        for step in 0..<4_000 {
            let key = CollidingKey(id: Int.random(in: 0..<60, using: &rng))
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<5:
                if model[key] == nil, model.count == 40 { continue }  // no eviction: the model keeps no order
                cache.setValue(step, forKey: key)
                model[key] = step
            case 5..<8:
                #expect(cache.value(forKey: key) == model[key], "seed \(seed) step \(step)")
            default:
                #expect(cache.removeValue(forKey: key) == model.removeValue(forKey: key), "seed \(seed) step \(step)")
            }
            if let violation = cache.invariantViolation() {
                Issue.record("seed \(seed) step \(step): \(violation)")
                return
            }
        }
        for (key, value) in model { #expect(cache.value(forKey: key) == value) }
    }

    /// The memory tier matches a lookup's parts against the stored key, bit for bit first, then
    /// by bytes: equal strings with other storage still hit, canonically equivalent spellings
    /// and other types or locations do not, and no parameter differs from an empty one.
    @Test func memoryTierMatchesKeysByBytes() {
        let tier = MemoryTier(countLimit: 100, costLimit: 0)
        func item(_ value: String) -> MemoryItem {
            StoredItem(value, writeDate: Date(), expiry: nil, touchesIndex: false)
        }
        func stored(_ name: String, _ location: CacheLocation, _ parameter: String?) -> String? {
            tier.item(name: name, location: location, parameter: parameter)?.value(as: String.self)
        }
        let long = "/v1/orders?page=1&limit=50"  // not a small string
        tier.set(item("long"), for: MemoryKey(name: "orders", location: .sharedCaches, parameter: long), cost: 0)
        tier.set(item("none"), for: MemoryKey(name: "orders", location: .sharedCaches, parameter: nil), cost: 0)
        tier.set(item("empty"), for: MemoryKey(name: "orders", location: .sharedCaches, parameter: ""), cost: 0)
        tier.set(item("nfc"), for: MemoryKey(name: "caf\u{E9}", location: .userCaches, parameter: "p"), cost: 0)
        // Built afresh: the same bytes in another storage object.
        let rebuilt = String(decoding: Array(long.utf8), as: UTF8.self)
        #expect(stored("orders", .sharedCaches, rebuilt) == "long")
        #expect(stored(String(decoding: Array("orders".utf8), as: UTF8.self), .sharedCaches, long) == "long")
        #expect(stored("orders", .sharedCaches, nil) == "none")
        #expect(stored("orders", .sharedCaches, "") == "empty")
        #expect(stored("orders", .userCaches, long) == nil)
        #expect(stored("users", .sharedCaches, long) == nil)
        #expect(stored("caf\u{E9}", .userCaches, "p") == "nfc")
        #expect(stored("cafe\u{301}", .userCaches, "p") == nil)
        tier.set(
            item("nfc parameter"),
            for: MemoryKey(name: "orders", location: .sharedCaches, parameter: "caf\u{E9}"),
            cost: 0
        )
        #expect(stored("orders", .sharedCaches, "caf\u{E9}") == "nfc parameter")
        #expect(stored("orders", .sharedCaches, "cafe\u{301}") == nil)
        #expect(tier.cache.invariantViolation(hashing: tier.tableHash(of:)) == nil)
        tier.remove(MemoryKey(name: "orders", location: .sharedCaches, parameter: rebuilt))
        #expect(stored("orders", .sharedCaches, long) == nil)
        #expect(stored("orders", .sharedCaches, nil) == "none")
    }

    // MARK: Against a reference model

    @Test(arguments: [1, 2, 3, 0xC0FFEE, 0xDEAD_BEEF] as [UInt64])
    func randomOperationsMatchAReferenceModel(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let countLimit = Int.random(in: 0...12, using: &rng)
        let costLimit = Int.random(in: 0...60, using: &rng)
        let cache = MemoryCache<Int, Int>(configuration: .init(countLimit: countLimit, costLimit: costLimit))
        var model = ReferenceLRU(countLimit: countLimit, costLimit: costLimit)
        for step in 0..<3_000 {
            let key = Int.random(in: 0..<24, using: &rng)
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<45:
                let value = Int.random(in: 0..<1_000, using: &rng)
                let cost = Int.random(in: -2...15, using: &rng)
                cache.setValue(value, forKey: key, cost: cost)
                model.set(value, forKey: key, cost: cost)
            case 45..<80:
                #expect(cache.value(forKey: key) == model.value(forKey: key), "seed \(seed) step \(step)")
            case 80..<95:
                #expect(cache.removeValue(forKey: key) == model.remove(key), "seed \(seed) step \(step)")
            case 95..<99:
                let modulus = Int.random(in: 2...5, using: &rng)
                cache.removeAll { $0 % modulus == 0 }
                model.entries.removeAll { $0.key % modulus == 0 }
            default:
                cache.removeAll()
                model.entries.removeAll()
            }
            guard cache.keysByRecency == model.entries.map(\.key),
                cache.totalCost == model.totalCost, cache.count == model.entries.count
            else {
                Issue.record("seed \(seed): cache diverged from the model at step \(step)")
                return
            }
        }
        #expect(cache.invariantViolation() == nil, "seed \(seed)")
    }
}

/// A deliberately naive LRU: an array ordered from most to least recently used.
private struct ReferenceLRU {
    var entries: [(key: Int, value: Int, cost: Int)] = []
    let countLimit: Int
    let costLimit: Int

    var totalCost: Int { entries.reduce(0) { $0 + $1.cost } }

    mutating func value(forKey key: Int) -> Int? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
        let entry = entries.remove(at: index)
        entries.insert(entry, at: 0)
        return entry.value
    }

    mutating func remove(_ key: Int) -> Int? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
        return entries.remove(at: index).value
    }

    mutating func set(_ value: Int, forKey key: Int, cost: Int) {
        let cost = max(cost, 0)
        _ = remove(key)
        if costLimit > 0, cost > costLimit { return }
        entries.insert((key, value, cost), at: 0)
        while countLimit > 0 && entries.count > countLimit || costLimit > 0 && totalCost > costLimit {
            entries.removeLast()
        }
    }
}

/// A key whose hash is one of three values, whatever its id.
private struct CollidingKey: Hashable {
    let id: Int
    func hash(into hasher: inout Hasher) { hasher.combine(id % 3) }
}

/// Runs a closure when it is deallocated.
private final class Probe: Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}
