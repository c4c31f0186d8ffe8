import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// Runs `body(i)` on `count` threads of their own at once (not a pool sized to the cores, so
/// 8 really interleave on a 2-core machine) and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        let thread = Thread {
            body(i)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

/// Concurrency stress, meant to run under ThreadSanitizer and AddressSanitizer as well:
/// 8 threads of seeded mixed operations over shared keys, invariants checked at the end.
@Suite struct StressTests {
    static let types: [ShopCache] = [.productList, .userOrderList, .message, .hots, .bounded]

    /// store / value / removeValue / clear / sizes / info on 8 threads over 5 types × 4
    /// parameters; afterwards the size index equals the files, every value is one that was
    /// written for its key, the memory tier agrees with the disk, and a clear empties all.
    @Test func eightThreadsOfMixedCacheOperations() throws {
        try withTemporaryDirectory { dir in
            let root = CacheRoot(
                caches: dir.appendingPathComponent("caches"),
                documents: dir.appendingPathComponent("documents")
            )
            let cache = try CacheManager<ShopCache>(
                root: root,
                user: "alice",
                configuration: .init(memoryCountLimit: 8)
            )
            let problems = Locked<[String]>([])
            onThreads(8) { thread in
                var rng = SplitMix64(seed: 0x5EED_0000 + UInt64(thread))
                for step in 0..<400 {
                    let type = Self.types[Int.random(in: 0..<Self.types.count, using: &rng)]
                    let parameter = "k\(Int.random(in: 0..<4, using: &rng))"
                    do {
                        switch Int.random(in: 0..<100, using: &rng) {
                        case 0..<45:
                            let padding = String(repeating: "x", count: Int.random(in: 0..<3_000, using: &rng))
                            try cache.store(
                                "\(type.name)/\(parameter)/\(thread)/\(step)/" + padding,
                                for: type,
                                parameter: parameter
                            )
                        case 45..<80:
                            if let value = try cache.value(String.self, for: type, parameter: parameter),
                                !value.hasPrefix("\(type.name)/\(parameter)/")
                            {
                                problems.withLock { $0.append("\(type)/\(parameter) read \(value.prefix(40))") }
                            }
                        case 80..<88:
                            try cache.removeValue(for: type, parameter: parameter)
                        case 88..<92:
                            _ = cache.totalSize + cache.size(of: type) + cache.size(of: type.location)
                            _ = cache.contains(type, parameter: parameter)
                        case 92..<96:
                            _ = try cache.info(for: type, parameter: parameter)
                        case 96..<99:
                            try cache.clear(.type(type))
                        default:
                            try cache.clear(Bool.random(using: &rng) ? .all : .user)
                        }
                    } catch {
                        problems.withLock { $0.append("thread \(thread) step \(step): \(error)") }
                    }
                }
            }
            for problem in problems.withLock({ $0 }) { Issue.record(Comment(rawValue: problem)) }

            let files = entryFiles(under: root.caches).merging(entryFiles(under: root.documents)) { $0 + $1 }
            #expect(cache.totalSize == files.values.reduce(0, +))
            #expect(cache.totalUsage.entryCount == files.count)
            let diskOnly = try CacheManager<ShopCache>(
                root: root,
                user: "alice",
                configuration: .init(memoryCountLimit: 0)
            )
            for type in Self.types {
                for k in 0..<4 {
                    let fromMemory = try cache.value(String.self, for: type, parameter: "k\(k)")
                    let fromDisk = try diskOnly.value(String.self, for: type, parameter: "k\(k)")
                    #expect(fromMemory == fromDisk, "\(type) k\(k): the memory tier disagrees with the disk")
                    #expect(cache.contains(type, parameter: "k\(k)") == (fromDisk != nil))
                    if let fromDisk { #expect(fromDisk.hasPrefix("\(type.name)/k\(k)/")) }
                }
            }
            try cache.clear()
            cache.caches.waitForTrash()
            cache.documents.waitForTrash()
            #expect(cache.totalSize == 0)
            #expect(entryFiles(under: root.caches).isEmpty && entryFiles(under: root.documents).isEmpty)
        }
    }

    /// 4 writer threads save batches that rewrite all 5 of their records with one batch
    /// number (sometimes with a compaction in between), while 4 reader threads check that a
    /// batch is never seen half applied. Afterwards each writer's records carry its last batch
    /// number, and a reopened store holds exactly what the live one held.
    @Test func recordStoreWritersAndReadersSeeWholeBatches() throws {
        try withTemporaryDirectory { dir in
            let configuration = RecordStore<FaultRecord>.Configuration(durability: .none, compactionThreshold: 16 << 10)
            let store = try RecordStore<FaultRecord>(directory: dir, configuration: configuration)
            let problems = Locked<[String]>([])
            let batches = 150
            onThreads(8) { thread in
                if thread < 4 {
                    for batch in 1...batches {
                        let records = (0..<5).map { FaultRecord(id: thread * 100 + $0, text: "\(batch)") }
                        do {
                            if batch % 50 == 0 { try store.compact() }
                            if batch % 2 == 0 {
                                try store.save(RecordBatch(upserting: records))
                            } else {
                                try store.upsert(contentsOf: records)
                            }
                        } catch {
                            problems.withLock { $0.append("writer \(thread) batch \(batch): \(error)") }
                        }
                    }
                } else {
                    for _ in 0..<300 {
                        let byWriter = Dictionary(grouping: store.all(), by: { $0.id / 100 })
                        for (writer, records) in byWriter
                        where Set(records.map(\.text)).count != 1 || records.count != 5 {
                            problems.withLock {
                                $0.append("writer \(writer)'s batch seen half applied: \(records.map(\.text))")
                            }
                        }
                        _ = store.latest(3)
                        _ = store.record(id: (thread - 4) * 100)
                    }
                }
            }
            for problem in problems.withLock({ $0 }) { Issue.record(Comment(rawValue: problem)) }
            #expect(store.count == 20)
            #expect(store.all().allSatisfy { $0.text == "\(batches)" })
            let live = store.all()
            let reopened = try RecordStore<FaultRecord>(directory: dir, configuration: configuration)
            #expect(reopened.all() == live)
        }
    }
}
