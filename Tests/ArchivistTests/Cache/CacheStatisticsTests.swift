import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct CacheStatisticsTests {
    let products = [Product(id: 1, name: "Tea", price: 3.5), Product(id: 2, name: "Cake", price: 4)]

    /// The bytes an entry file of `payload` takes for `type` and `parameter`.
    func fileSize<T: Archivable>(_ value: T, _ type: ShopCache, _ parameter: String? = nil) throws -> UInt64 {
        UInt64(EntryHeader.encodedCount(typeName: type.name, parameter: parameter) + (try Archive.encode(value)).count)
    }

    @Test func scriptedSequenceCountsExactly() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store(products, for: .productList)  // store 1
            #expect(try cache.value([Product].self, for: .productList) == products)  // memory hit 1
            #expect(try cache.value([Product].self, for: .productList) == products)  // memory hit 2
            #expect(try cache.value([Product].self, for: .productList, parameter: "p") == nil)  // miss 1
            try cache.store("x", for: .apiStrategy, parameter: "/a")  // store (apiStrategy)
            #expect(try cache.removeValue(for: .apiStrategy, parameter: "/a"))  // removal
            #expect(try !cache.removeValue(for: .apiStrategy, parameter: "/a"))  // nothing removed
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/a") == nil)  // miss
            _ = #expect(throws: CacheError.self) { try cache.value(Int.self, for: .productList) }  // a wrong-type read

            // A second manager has no memory tier entries: its read is a disk hit.
            let other = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            #expect(try other.value([Product].self, for: .productList) == products)

            let list = cache.statistics(of: .productList)
            #expect(list.stores == 1)
            #expect(list.memoryHits == 2)
            #expect(list.diskHits == 1)
            #expect(list.misses == 1)
            #expect(list.expiredReads == 0)
            #expect(list.errors == [.decodingFailed: 1])
            #expect(list.bytesWritten == (try fileSize(products, .productList)))
            // The wrong-type read read the file too, then failed to decode: only the hit counts bytes.
            #expect(list.bytesRead == (try fileSize(products, .productList)))
            #expect(list.timedReads == 1)
            #expect(list.hitRate == 0.75)

            let strategy = cache.statistics(of: .apiStrategy)
            #expect(strategy.stores == 1)
            #expect(strategy.removals == 1)
            #expect(strategy.misses == 1)
            #expect(strategy.memoryHits == 0)

            let all = other.statistics
            #expect(all["productList"] == list)
            #expect(all.total.stores == 2)
            #expect(all.total.reads == 5)
        }
    }

    @Test func concurrentReadersAreCountedExactly() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            for i in 0..<8 { try cache.store("value \(i)", for: .hots, parameter: "\(i)") }
            let readsPerThread = 2_000
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for i in 0..<readsPerThread {
                    _ = try? cache.value(String.self, for: .hots, parameter: "\((thread + i) % 8)")  // memory hits
                    // misses
                    if i % 100 == 0 { _ = try? cache.value(String.self, for: .hots, parameter: "none-\(thread)") }
                    if i % 500 == 0 { _ = cache.statistics }  // publishing while others count
                }
            }
            let counts = cache.statistics(of: .hots)
            #expect(counts.memoryHits == 4 * UInt64(readsPerThread))
            #expect(counts.misses == 4 * UInt64(readsPerThread / 100))
            #expect(counts.stores == 8)
        }
    }

    @Test func anEntryPastItsExpiryIsAnExpiredRead() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store("old", for: .productList, parameter: "p", expiry: .at(Date(timeIntervalSinceNow: -1)))
            #expect(try cache.value(String.self, for: .productList, parameter: "p") == nil)  // expired on disk
            let list = cache.statistics(of: .productList)
            #expect(list.expiredReads == 1)
            #expect(list.evictions.expiry == 0)  // never in memory: an expired write is not kept there
        }
    }

    @Test func memoryItemFoundExpiredIsAnExpiredReadAndLeavesTheTier() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store("v", for: .hots, expiry: .after(3_600))
            #expect(try cache.value(String.self, for: .hots) == "v")  // memory hit
            #expect(try cache.value(String.self, for: .hots, maxAge: -1) == nil)  // too old for this read
            let counts = cache.statistics(of: .hots)
            #expect(counts.memoryHits == 1)
            #expect(counts.expiredReads == 1)
            #expect(counts.evictions.expiry == 0)  // still fresh by its expiry: it stays in memory
            #expect(try cache.value(String.self, for: .hots) == "v")
            #expect(cache.statistics(of: .hots).memoryHits == 2)
        }
    }

    @Test func byteLimitAndCountEvictions() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(
                root: CacheRoot(directory: dir),
                configuration: .init(memoryCountLimit: 2)
            )
            for i in 0..<3 { try cache.store("value \(i)", for: .hots, parameter: "\(i)") }
            #expect(cache.statistics(of: .hots).evictions.count == 1)
            let big = Data(repeating: 7, count: 1_500)
            for i in 0..<4 { try cache.store(big, for: .bounded, parameter: "\(i)") }
            let bounded = cache.statistics(of: .bounded)
            #expect(bounded.evictions.byteLimit == 2)  // 4 × ~1.6 KB in a 4,000-byte limit keeps 2
            #expect(bounded.stores == 4)
        }
    }

    @Test func errorsAreCountedByCode() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            _ = #expect(throws: CacheError.self) { try cache.store("x", for: .userOrderList) }  // noUser
            _ = #expect(throws: CacheError.self) { try cache.value(String.self, for: .userOrderList) }
            try cache.store("x", for: .productList)
            let file = try #require(try cache.info(for: .productList)).fileURL
            let handle = try FileHandle(forWritingTo: file)
            try handle.seek(toOffset: 60)
            handle.write(Data([0xFF, 0xFE]))
            try handle.close()
            let other = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            _ = #expect(throws: CacheError.self) { try other.value(String.self, for: .productList) }
            #expect(cache.statistics(of: .userOrderList).errors == [.noUser: 2])
            #expect(cache.statistics(of: .productList).errors == [.corruptEntry: 1])
        }
    }

    @Test func resetZeroesEveryTypeForEveryManagerOfTheProcess() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            let other = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store("x", for: .productList)
            _ = try cache.value(String.self, for: .productList)
            _ = try other.value(String.self, for: .productList)
            other.resetStatistics()
            #expect(cache.statistics.total == CacheStatistics.Counts())
            _ = try cache.value(String.self, for: .productList)
            #expect(other.statistics.total.memoryHits == 1)
        }
    }

    @Test func countsSurviveTheManagerAndAddUpAcrossManagers() throws {
        try withTemporaryDirectory { dir throws in
            do {
                let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
                try cache.store("x", for: .productList)
                for _ in 0..<5 { _ = try cache.value(String.self, for: .productList) }
            }
            let later = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            for _ in 0..<3 { _ = try later.value(String.self, for: .productList) }  // 1 disk hit, 2 memory hits
            let counts = later.statistics(of: .productList)
            #expect(counts.memoryHits == 7)
            #expect(counts.diskHits == 1)
            #expect(CacheStatistics.read(rootPathOrNil: dir.path)?["productList"] == counts)
        }
    }

    @Test func aRootWithTheOldSharedFileOpensAndGrows() throws {
        try withTemporaryDirectory { dir throws in
            do {
                let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
                try cache.store("x", for: .productList)
                try cache.flush()
            }
            // As written before the statistics: the file ends after the core words.
            let shared = dir.appendingPathComponent(".archivist/shared").path
            #expect(truncate(shared, off_t(SharedCounters.coreLength)) == 0)
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            #expect(try cache.value(String.self, for: .productList) == "x")
            #expect(cache.statistics(of: .productList).diskHits == 1)
            var status = stat()
            #expect(stat(shared, &status) == 0 && Int(status.st_size) == SharedCounters.length)
        }
    }

    @Test func longTypeNamesAreNamedInFullByTheirManager() throws {
        try withTemporaryDirectory { dir throws in
            let long = LongNamedCache(name: String(repeating: "é", count: 60))  // 120 bytes
            let cache = try CacheManager<LongNamedCache>(root: CacheRoot(directory: dir))
            try cache.store("x", for: long)
            #expect(cache.statistics[long.name].stores == 1)
            #expect(cache.statistics(of: long).stores == 1)
            let read = try #require(CacheStatistics.read(rootPathOrNil: dir.path))
            let prefix = String(repeating: "é", count: 48) + "…"
            #expect(read[prefix].stores == 1)
        }
    }
}

/// A cache type whose name is given at run time.
struct LongNamedCache: CacheType {
    var name: String
    var location: CacheLocation { .sharedCaches }
}

extension CacheStatistics {
    /// The statistics the root's shared file holds, read as a tool would; `nil` if none.
    static func read(rootPathOrNil path: String) -> CacheStatistics? {
        (try? read(rootPath: path))?.statistics
    }
}
