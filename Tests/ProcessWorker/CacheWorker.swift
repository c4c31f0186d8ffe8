import Archivist
import ArchivistTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The CacheManager modes of the multi-process tests
// (Tests/ArchivistTests/MultiProcess/CacheManagerMultiProcessTests.swift).
//
// Writer `w` owns the keys `w<w>-<k>` (k < keys) of `WorkerCache.items` and keeps a progress
// file the readers and the checker read with plain `pread`s:
//
//     word 0: the key of the operation under way + 1 (0: none)   word 1: its state
//     word 2 + k: key k's last committed state
//
// A state is `version << 1 | present`: every operation on a key gets a new, larger version,
// a store sets `present`, a removal clears it. The pending words are written before the
// operation starts and the key's word after it returned, so a writer killed at any moment
// leaves either the committed state or the pending one on disk.

/// The cache type the workers share.
enum WorkerCache: String, CacheType {
    case items
    var location: CacheLocation { .sharedCaches }
}

/// A writer's progress file (see above).
struct ProgressWords {
    let fd: Int32

    init(path: String, create: Bool) {
        fd = open(path, create ? (O_RDWR | O_CREAT | O_CLOEXEC) : (O_RDONLY | O_CLOEXEC), 0o600)
        if fd < 0 { fail("cannot open \(path): errno \(errno)") }
    }

    func word(_ index: Int) -> UInt64 {
        var value: UInt64 = 0
        let n = pread(fd, &value, 8, off_t(index * 8))
        return n == 8 ? value : 0
    }

    func set(_ index: Int, _ value: UInt64) {
        var value = value
        if pwrite(fd, &value, 8, off_t(index * 8)) != 8 { fail("cannot write the progress file") }
    }

    func committed(_ key: Int) -> UInt64 { word(2 + key) }
    /// The key and state of the operation that may be under way.
    var pending: (key: Int, state: UInt64)? {
        let key = word(0)
        return key == 0 ? nil : (Int(key - 1), word(1))
    }
}

/// The value of writer `w`'s key `k` at `version`: self-describing, with seeded padding.
func workerValue(_ writer: Int, _ key: Int, _ version: UInt64) -> String {
    var rng = SplitMix64(seed: UInt64(writer) << 48 ^ UInt64(key) << 32 ^ version)
    let padding = Int.random(in: 0..<1_500, using: &rng)
    return "w\(writer)-\(key):\(version):\(padding):" + String(repeating: "x", count: padding)
}

/// The version a worker value carries, or `nil` when it is not a whole value of that key.
func workerVersion(_ value: String, _ writer: Int, _ key: Int) -> UInt64? {
    let parts = value.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0] == "w\(writer)-\(key)", let version = UInt64(parts[1]),
        value == workerValue(writer, key, version)
    else { return nil }
    return version
}

func workerParameter(_ writer: Int, _ key: Int) -> String { "w\(writer)-\(key)" }

func openWorkerCache(_ root: String, memory: Bool) throws -> CacheManager<WorkerCache> {
    try CacheManager<WorkerCache>(
        root: CacheRoot(directory: URL(fileURLWithPath: root, isDirectory: true)),
        configuration: .init(memoryCountLimit: memory ? 1_000 : 0)
    )
}

/// `cache-write <root> <writer> <seed> <operations> <keys> <progress file>`: stores (70%),
/// removes (20%) and reads back (10%) random keys of its own, recording progress; prints
/// `ready` once the cache is open. `operations` 0 runs until killed.
func cacheWrite(_ arguments: [String]) throws {
    let root = argument(arguments, 0, "root") { $0 }
    let writer = argument(arguments, 1, "writer") { Int($0) }
    let seed = argument(arguments, 2, "seed") { UInt64($0) }
    let operations = argument(arguments, 3, "operations") { Int($0) }
    let keys = argument(arguments, 4, "keys") { Int($0) }
    let progress = ProgressWords(path: argument(arguments, 5, "progress file") { $0 }, create: true)
    let cache = try openWorkerCache(root, memory: true)
    var rng = SplitMix64(seed: seed)
    try settlePending(progress, cache, writer)
    // Versions continue from what an earlier incarnation of this writer committed.
    var version: UInt64 = (0..<keys).map { progress.committed($0) >> 1 }.max() ?? 0
    version = max(version, progress.pending.map { $0.state >> 1 } ?? 0)
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    var done = 0
    while operations == 0 || done < operations {
        done += 1
        let key = Int.random(in: 0..<keys, using: &rng)
        let parameter = workerParameter(writer, key)
        let roll = Int.random(in: 0..<10, using: &rng)
        if roll == 9 {
            let state = progress.committed(key)
            let value = try cache.value(String.self, for: .items, parameter: parameter)
            let expected: UInt64? = state & 1 == 1 ? state >> 1 : nil
            if value.flatMap({ workerVersion($0, writer, key) }) != expected {
                fail("writer \(writer) key \(key): read \(value?.prefix(40).description ?? "nil"), committed \(state)")
            }
            continue
        }
        version += 1
        let present = roll < 7
        let state = version << 1 | (present ? 1 : 0)
        progress.set(1, state)
        progress.set(0, UInt64(key + 1))
        if present {
            try cache.store(workerValue(writer, key, version), for: .items, parameter: parameter)
        } else {
            try cache.removeValue(for: .items, parameter: parameter)
        }
        progress.set(2 + key, state)
        progress.set(0, 0)
    }
    let store = try DiskStore.open(at: URL(fileURLWithPath: root, isDirectory: true))
    print("writer \(writer): \(done) operations, longest lock hold \(store.longestLockHold)")
}

/// An earlier incarnation of this writer was killed mid-operation: records what the disk holds
/// for that key (the committed or the pending state; anything else is a failure) as committed.
func settlePending(_ progress: ProgressWords, _ cache: CacheManager<WorkerCache>, _ writer: Int) throws {
    guard let pending = progress.pending else { return }
    let value = try cache.value(String.self, for: .items, parameter: workerParameter(writer, pending.key))
    let committed = progress.committed(pending.key)
    let actual: UInt64
    if let value {
        guard let version = workerVersion(value, writer, pending.key) else {
            fail("settle: torn value for key \(pending.key)")
        }
        actual = version << 1 | 1
    } else {
        actual = pending.state & 1 == 0 ? pending.state : committed
    }
    guard actual == committed || actual == pending.state || (value == nil && committed & 1 == 0) else {
        fail("settle: key \(pending.key) holds \(actual), committed \(committed), pending \(pending.state)")
    }
    progress.set(2 + pending.key, actual)
    progress.set(0, 0)
}

/// `cache-read <root> <writers> <keys> <milliseconds> <progress files...>`: reads random keys
/// of every writer through a memory tier for the given time and fails on a torn value or one
/// older than what the writer had committed before the read began.
func cacheRead(_ arguments: [String]) throws {
    let root = argument(arguments, 0, "root") { $0 }
    let writers = argument(arguments, 1, "writers") { Int($0) }
    let keys = argument(arguments, 2, "keys") { Int($0) }
    let milliseconds = argument(arguments, 3, "milliseconds") { Int($0) }
    let files = (0..<writers).map {
        ProgressWords(path: argument(arguments, 4 + $0, "progress file") { $0 }, create: false)
    }
    let cache = try openWorkerCache(root, memory: true)
    var rng = SplitMix64(seed: UInt64(getpid()))
    let deadline = ContinuousClock.now + .milliseconds(milliseconds)
    var reads = 0
    while ContinuousClock.now < deadline {
        reads += 1
        let writer = Int.random(in: 0..<writers, using: &rng)
        // A few hot keys, so the memory tier serves most reads.
        let key = Int.random(in: 0..<min(keys, 8), using: &rng)
        let before = files[writer].committed(key)
        let value = try cache.value(String.self, for: .items, parameter: workerParameter(writer, key))
        let after = files[writer].committed(key)
        let pending = files[writer].pending
        let laterOperation = after >> 1 > before >> 1 || (pending?.key == key && pending!.state >> 1 > before >> 1)
        if let value {
            guard let version = workerVersion(value, writer, key) else {
                fail("reader: torn or foreign value for w\(writer)-\(key): \(value.prefix(60))")
            }
            if version < before >> 1 {
                fail(
                    "reader: stale value for w\(writer)-\(key): version \(version), \(before >> 1) committed before the read"
                )
            }
        } else if before & 1 == 1 && !laterOperation {
            fail("reader: w\(writer)-\(key) missing, version \(before >> 1) committed before the read")
        }
    }
    print("reads \(reads)")
}

/// `cache-check <root> <writers> <keys> <progress files...>`: a fresh process's verdict on a
/// root the writers left: every key holds its committed state (or the pending one of a killed
/// writer), `contains` agrees, the sizes equal a walk of the files, no temporary is left once
/// the open's background sweep has run.
func cacheCheck(_ arguments: [String]) throws {
    let root = argument(arguments, 0, "root") { $0 }
    let writers = argument(arguments, 1, "writers") { Int($0) }
    let keys = argument(arguments, 2, "keys") { Int($0) }
    let files = (0..<writers).map {
        ProgressWords(path: argument(arguments, 3 + $0, "progress file") { $0 }, create: false)
    }
    let cache = try openWorkerCache(root, memory: false)
    var problems: [String] = []
    var present = 0
    for writer in 0..<writers {
        let pending = files[writer].pending
        for key in 0..<keys {
            let parameter = workerParameter(writer, key)
            var allowed = [files[writer].committed(key)]
            if let pending, pending.key == key { allowed.append(pending.state) }
            let value = try cache.value(String.self, for: .items, parameter: parameter)
            let version = value.map { workerVersion($0, writer, key) }
            let state: UInt64? =
                switch version {
                case .none: allowed.first { $0 & 1 == 0 }
                case .some(.none): nil
                case .some(.some(let v)): allowed.first { $0 == v << 1 | 1 }
                }
            if state == nil {
                problems.append("\(parameter): \(value?.prefix(40).description ?? "nil"), allowed \(allowed)")
            }
            if cache.contains(.items, parameter: parameter) != (value != nil) {
                problems.append("\(parameter): contains says \(value == nil)")
            }
            if value != nil { present += 1 }
        }
    }
    // The open sweeps killed writers' temporaries on the trash queue (no size counts them):
    // wait for it before walking the files.
    try DiskStore.open(at: URL(fileURLWithPath: root, isDirectory: true)).waitForTrash()
    let rootURL = URL(fileURLWithPath: root, isDirectory: true)
    let entries = entryFiles(under: rootURL)
    let bytes = entries.values.reduce(0, +)
    let temporaries = allPaths(under: rootURL).filter { ($0 as NSString).lastPathComponent.hasPrefix(".tmp-") }
    let usage = cache.totalUsage
    if usage.entryCount != entries.count || usage.logicalBytes != bytes || entries.count != present {
        problems.append(
            "sizes: index \(usage.entryCount) entries / \(usage.logicalBytes) bytes, "
                + "disk \(entries.count) files / \(bytes) bytes, \(present) keys present"
        )
    }
    if !temporaries.isEmpty { problems.append("temporaries left: \(temporaries)") }
    if !problems.isEmpty { fail("check: " + problems.prefix(10).joined(separator: "; ")) }
    print("ok \(present) entries, \(bytes) bytes")
}

/// `cache-reopen <root> <times>`: opens the root `times` times, each time after marking its
/// size index unclean, so each open rescans the folders while other processes write them.
func cacheReopen(_ arguments: [String]) throws {
    let root = argument(arguments, 0, "root") { $0 }
    let times = argument(arguments, 1, "times") { Int($0) }
    for _ in 0..<times {
        let marker = open(root + "/.archivist/dirty", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        if marker >= 0 {
            _ = pwrite(marker, "D", 1, 0)
            close(marker)
        }
        _ = try openWorkerCache(root, memory: false).totalSize
    }
}

/// `cache-store <root> <parameter> <value>`: stores `value` for `.items` and `parameter` once
/// and exits (the change-signal tests wait for it in another process's change stream).
func cacheStore(_ arguments: [String]) throws {
    let root = argument(arguments, 0, "root") { $0 }
    let parameter = argument(arguments, 1, "parameter") { $0 }
    let value = argument(arguments, 2, "value") { $0 }
    try openWorkerCache(root, memory: false).store(value, for: .items, parameter: parameter)
}

/// `cache-expect <root> <parameter> <value|->`: fails unless a fresh manager (no memory tier)
/// on `root` reads `value` for `items` and `parameter` — or, with `-`, reads nothing (no entry,
/// or an expired one).
func cacheExpect(_ arguments: [String]) throws {
    let root = argument(arguments, 0, "root") { $0 }
    let parameter = argument(arguments, 1, "parameter") { $0 }
    let raw = argument(arguments, 2, "value or -") { $0 }
    let expected: String? = raw == "-" ? nil : raw
    let value = try openWorkerCache(root, memory: false).value(String.self, for: .items, parameter: parameter)
    guard value == expected else { fail("\(parameter) reads \(value ?? "nothing"), not \(expected ?? "nothing")") }
}
