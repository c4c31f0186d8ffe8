import Archivist
import Foundation

/// MemoryCache hits and evicting sets against an NSLock-guarded Dictionary doing the same hash
/// work; the target is hits close to the locked Dictionary.
func runMemoryCacheBenchmarks(_ harness: Harness) throws {
    let suite = "memory-cache"
    let entries = 10_000
    let operations = harness.options.quick ? 20_000 : 200_000
    let cache = MemoryCache<Int, Int>(configuration: .init(countLimit: entries))
    for key in 0..<entries { cache.setValue(key, forKey: key) }
    let lock = NSLock()
    var dictionary: [Int: Int] = [:]
    for key in 0..<entries { dictionary[key] = key }

    // Hit cases return `nil` bytes, but only after looking at the sum, so that the optimizer
    // cannot drop the lookups.
    harness.measure(suite, "locked Dictionary hit") {
        var sum = 0
        for index in 0..<operations {
            lock.lock()
            sum &+= dictionary[index % entries] ?? 0
            lock.unlock()
        }
        return sum == -1 ? 0 : nil
    }
    harness.measure(suite, "MemoryCache hit") {
        var sum = 0
        for index in 0..<operations { sum &+= cache.value(forKey: index % entries) ?? 0 }
        return sum == -1 ? 0 : nil
    }
    // Keys cycle through twice the limit, so every set inserts one entry and evicts one.
    harness.measure(suite, "locked Dictionary insert+remove") {
        for index in 0..<operations {
            lock.lock()
            dictionary[index % (2 * entries)] = index
            dictionary[(index + entries) % (2 * entries)] = nil
            lock.unlock()
        }
        return nil
    }
    harness.measure(suite, "MemoryCache set (evicting)") {
        for index in 0..<operations { cache.setValue(index, forKey: index % (2 * entries)) }
        return nil
    }
    guard cache.count == entries else { throw StoreError(.ioFailed, "\(suite): the cache broke its count limit") }
    harness.printTable(suite, title: "MemoryCache vs NSLock + Dictionary, \(operations) operations") { name in
        name.hasSuffix("hit") ? "locked Dictionary hit" : "locked Dictionary insert+remove"
    }
}
