import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CacheManager against raw POSIX and the usual in-memory structures: writes, warm reads,
/// size and clear at growing entry counts, and reads from two threads. The memory-tier hits
/// are a suite of their own (`cache-memory`), so that they can be timed without the disk cases.
func runCacheBenchmarks(_ harness: Harness) throws {
    let quick = harness.options.quick
    // Quick mode: 1,000 (each of the 3 + 1 write rounds creates or replaces count files per case,
    // which grows slow when the disk is busy).
    let count = quick ? 1_000 : 10_000
    let cache = try benchmarkWritesAndReads(harness, valueSize: 1_024, count: count, label: "1 KB")
    // 10 × 10 MB (fewer in quick mode), timed per write; 1,000 × 100 KB is in the cache-shapes suite.
    _ = try benchmarkWritesAndReads(
        harness,
        valueSize: 10 * 1_024 * 1_024,
        count: quick ? 3 : 10,
        label: "10 MB",
        perOperation: true
    )

    // Reads of different keys: one thread reading all, then two threads reading half each.
    harness.measureInterleaved(
        "cache.threads",
        samples: quick ? 3 : 9,
        [
            (
                "1 thread",
                {
                    readRange(cache, 0..<count)
                    return nil
                }
            ),
            (
                "2 threads, different keys",
                {
                    DispatchQueue.concurrentPerform(iterations: 2) { half in
                        readRange(cache, half == 0 ? 0..<(count / 2) : (count / 2)..<count)
                    }
                    return nil
                }
            ),
        ]
    )
    harness.printTable("cache.threads", title: "\(count) disk reads: one thread vs two") { _ in "1 thread" }
    _ = try? cache.clear()

    try runSizeAndClearBenchmarks(
        harness,
        quick: quick,
        payload: Data((0..<64).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 31) })
    )
}

/// What an app would key its own locked dictionary of cached values by, to tell entries of
/// several cache types apart: the type and the parameter.
private struct TypedKey: Hashable {
    var type: BenchCache
    var parameter: String?
}

/// Memory-tier hits against NSCache and a Dictionary behind a lock.
///
/// Two locked dictionaries: one keyed by a prebuilt `String` (the least work any lookup can
/// do), and one keyed by (cache type, parameter) built at each lookup, which is the work a
/// `CacheManager` hit has to do as well (the type's name and the parameter identify an entry).
/// Neither dictionary keeps an LRU order or checks another process's writes; the hit does both.
func runMemoryTierBenchmarks(_ harness: Harness) throws {
    let quick = harness.options.quick
    let keys = 1_000
    let lookups = quick ? 100_000 : 1_000_000
    let value = Data(repeating: 1, count: 100)
    let cache = try CacheManager<BenchCache>(
        root: CacheRoot(directory: harness.scratch.appendingPathComponent("cache-memory")),
        configuration: .init(memoryCountLimit: 2 * keys)
    )
    let parameters = (0..<keys).map { "key-\($0)" }
    let nsCache = NSCache<NSString, NSData>()
    let lock = NSLock()
    var dictionary: [String: Data] = [:]
    var typedDictionary: [TypedKey: Data] = [:]
    for parameter in parameters {
        try cache.store(value, for: .blobs, parameter: parameter)
        nsCache.setObject(value as NSData, forKey: parameter as NSString)
        dictionary[parameter] = value
        typedDictionary[TypedKey(type: .blobs, parameter: parameter)] = value
    }
    harness.measureInterleaved(
        "cache.memory",
        [
            (
                "locked Dictionary",
                {
                    var hits = 0
                    for i in 0..<lookups {
                        lock.lock()
                        if dictionary[parameters[i % keys]] != nil { hits += 1 }
                        lock.unlock()
                    }
                    precondition(hits == lookups)
                    return nil
                }
            ),
            (
                "locked Dictionary, (type, parameter) key",
                {
                    var hits = 0
                    for i in 0..<lookups {
                        lock.lock()
                        if typedDictionary[TypedKey(type: .blobs, parameter: parameters[i % keys])] != nil { hits += 1 }
                        lock.unlock()
                    }
                    precondition(hits == lookups)
                    return nil
                }
            ),
            (
                "NSCache",
                {
                    var hits = 0
                    for i in 0..<lookups where nsCache.object(forKey: parameters[i % keys] as NSString) != nil {
                        hits += 1
                    }
                    precondition(hits == lookups, "NSCache evicted entries")
                    return nil
                }
            ),
            (
                "CacheManager memory hit",
                {
                    var hits = 0
                    for i in 0..<lookups
                    where ((try? cache.value(Data.self, for: .blobs, parameter: parameters[i % keys])) ?? nil) != nil {
                        hits += 1
                    }
                    precondition(hits == lookups)
                    return nil
                }
            ),
        ]
    )
    harness.printTable("cache.memory", title: "\(lookups) memory-tier hits over \(keys) keys") { _ in
        "locked Dictionary"
    }
    printStatistics(cache.statistics, title: "cache.memory")
    _ = try? cache.clear()
}

/// `totalSize` and `clear()` at growing entry counts: both should stay flat.
///
/// `clear()` takes several samples per size, each on a fresh fill (a clear empties the
/// cache), so that one sample disturbed by the machine's load does not decide the row.
/// Quick mode fills 200 and 2,000 entries: the fills (and their deletion) are the suite's
/// slowest part, and a tenfold step still shows whether both stay flat.
private func runSizeAndClearBenchmarks(_ harness: Harness, quick: Bool, payload: Data) throws {
    let clock = ContinuousClock()
    let clearSamples = quick ? 3 : 5
    for entries in quick ? [200, 2_000] : [1_000, 10_000, 100_000] {
        let root = harness.scratch.appendingPathComponent("cache-size-\(entries)", isDirectory: true)
        let cache = try CacheManager<BenchCache>(
            root: CacheRoot(directory: root),
            configuration: .init(memoryCountLimit: 0)
        )
        var clears: [Int64] = []
        for sample in 0..<clearSamples {
            for i in 0..<entries { try cache.store(payload, for: .blobs, parameter: "\(i)") }
            if sample == 0 {
                // The fill's background work first (the size index's folds of the journal): the
                // row measures `totalSize`, not a fold sharing the cores with it.
                try cache.flush()
                let calls = 10_000
                harness.measure("cache.size", "\(calls) × totalSize at \(entries) entries") {
                    var sum = 0
                    for _ in 0..<calls { sum &+= cache.totalSize }
                    return sum / calls
                }
            }
            // Flush the fill's dirty pages first: otherwise the clear's rename waits behind the
            // kernel writing back the entries just created, which is the fill's cost, not the
            // clear's, and would decide the row.
            sync()
            let start = clock.now
            try cache.clear()
            let elapsed = clock.now - start
            clears.append(elapsed.nanoseconds)
            // Let the background deletion finish before the next fill, as a separate step.
            try cache.flush()
        }
        clears.sort()
        harness.record(
            BenchmarkResult(
                suite: "cache.clear",
                name: "clear() at \(entries) entries (returns)",
                medianNS: clears[clears.count / 2],
                minNS: clears[0],
                bytes: nil,
                samples: clears.count
            )
        )
        _ = try? FileManager.default.removeItem(at: root)
    }
    harness.printTable("cache.size", title: "totalSize, 10,000 calls per sample (divide by 10,000 for one call)") { _ in
        nil
    }
    harness.printTable("cache.clear", title: "clear() until it returns (deletion continues in the background)") { _ in
        nil
    }
}

/// The benchmarks' one cache type.
enum BenchCache: String, CacheType {
    case blobs
    var location: CacheLocation { .sharedCaches }
}

private func readRange(_ cache: CacheManager<BenchCache>, _ range: Range<Int>) {
    for i in range { _ = try? cache.value(Data.self, for: .blobs, parameter: "\(i)") }
}

/// The baseline write: temporary file, write, close, rename; whether all of it succeeded.
@discardableResult
func rawWrite(_ data: Data, folder: String, name: String) -> Bool {
    let temporary = folder + "/.tmp-" + name
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return false }
    let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    return close(fd) == 0 && written == data.count && rename(temporary, folder + "/" + name) == 0
}

/// The baseline read: open, fstat, read, close.
func rawRead(_ path: String) -> Data? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else { return nil }
    var data = Data(count: Int(status.st_size))
    let n = data.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    return n == data.count ? data : nil
}

/// Writes then warm reads of `count` values of `valueSize` bytes, against raw POSIX in the
/// same run; returns the cache (memory tier off) holding the values. `perOperation`: the rows
/// are one write's or read's time (median and minimum over every operation of every round)
/// instead of the loop's.
private func benchmarkWritesAndReads(
    _ harness: Harness,
    valueSize: Int,
    count: Int,
    label: String,
    perOperation: Bool = false
) throws -> CacheManager<BenchCache> {
    let value = Data((0..<valueSize).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    let quick = harness.options.quick
    let writeSuite = "cache.write.\(label)"
    let readSuite = "cache.read.\(label)"

    // Writes: values of `valueSize` bytes, durability none, against open/write/close/rename of the same bytes.
    let writeRoot = harness.scratch.appendingPathComponent("cache-writes-\(valueSize)", isDirectory: true)
    // The raw baselines use the cache's layout: two more folder levels under the root and
    // 32-character names, so both sides pay the same path lookups. The baseline the ratios are
    // taken against is a hand-written cache: it derives each file name
    // from the same key the cache gets ("\(i)") with MD5 on every operation. The variant with
    // names computed once before the loop stays beside it, in the same interleaved round.
    let rawFolder = writeRoot.appendingPathComponent("raw/shared-caches/" + String(repeating: "ab", count: 16)).path
    let precomputedFolder = writeRoot.appendingPathComponent(
        "raw-precomputed/shared-caches/" + String(repeating: "ab", count: 16)
    ).path
    let rawNames = (0..<count).map {
        String(repeating: "0", count: 32 - String($0, radix: 16).count) + String($0, radix: 16)
    }
    for folder in [rawFolder, precomputedFolder] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    let cache = try CacheManager<BenchCache>(
        root: CacheRoot(directory: writeRoot.appendingPathComponent("cache")),
        configuration: .init(memoryCountLimit: 0)
    )
    let hashed = "raw POSIX temp+rename, MD5 names"
    let precomputed = "raw POSIX, names precomputed"
    // Operation by operation: the kernel's inode allocation, journal commits and write-back make
    // a loop of one case drift or stall, so write i of every case runs back to back; each round
    // starts with the previous round's dirty pages written back (`sync()`, untimed).
    let writeRounds = quick ? 3 : 7
    harness.measureInterleavedOperations(
        writeSuite,
        samples: writeRounds,
        count: count,
        perOperation: perOperation,
        beforeRound: { sync() },
        [
            (hashed, { i in rawWrite(value, folder: rawFolder, name: MD5.hexDigest(of: "\(i)")) }),
            (precomputed, { i in rawWrite(value, folder: precomputedFolder, name: rawNames[i]) }),
            ("CacheManager.store", { i in try? cache.store(value, for: .blobs, parameter: "\(i)") }),
        ]
    )
    harness.printTable(
        writeSuite,
        title: perOperation
            ? "one \(label) write, durability none (median of \(writeRounds) × \(count) writes)"
            : "\(count) × \(label) writes, durability none"
    ) { _ in hashed }

    // Warm reads (page cache hot), memory tier off so every read goes to the file.
    let encoded = try Archive.encode(value)
    for i in 0..<count {
        rawWrite(encoded, folder: rawFolder, name: MD5.hexDigest(of: "\(i)"))
        rawWrite(encoded, folder: precomputedFolder, name: rawNames[i])
    }
    let hashedRead = "raw POSIX read+decode, MD5 names"
    let readRounds = quick ? 3 : 9
    harness.measureInterleavedOperations(
        readSuite,
        samples: readRounds,
        count: count,
        perOperation: perOperation,
        [
            (
                hashedRead,
                { i in
                    _ = rawRead(rawFolder + "/" + MD5.hexDigest(of: "\(i)")).map {
                        try? Archive.decode(Data.self, from: $0)
                    }
                }
            ),
            (
                precomputed,
                { i in
                    _ = rawRead(precomputedFolder + "/" + rawNames[i]).map { try? Archive.decode(Data.self, from: $0) }
                }
            ),
            ("CacheManager.value (disk)", { i in _ = try? cache.value(Data.self, for: .blobs, parameter: "\(i)") }),
        ]
    )
    harness.printTable(
        readSuite,
        title: perOperation
            ? "one warm \(label) read (median of \(readRounds) × \(count) reads)"
            : "\(count) warm \(label) reads"
    ) { _ in hashedRead }
    printStatistics(cache.statistics, title: "cache \(label) writes and reads")

    return cache
}
