import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The second process of the `processes` suite: this executable, started with `--process-child`
// (handled in main.swift before options). The stores it writes are the ones the parent reads.

/// The cache type the process benchmarks write.
enum ProcessBenchCache: String, CacheType {
    case items
    var location: CacheLocation { .sharedCaches }
}

/// The record the process benchmarks write.
struct ProcessBenchRecord: Codable, Archivable, Identifiable, Sendable {
    var id: String
    var sequence: Int
    var payload: String
}

/// The store a process benchmark writes and reads: the cache, a `Preferences` file or a
/// `RecordStore`, all under one root folder.
enum ProcessBenchStore: String {
    case cache, preferences, records

    static let preferenceKey = PreferenceKey<Int>("latest", default: -1)
    static let preferencesName = "Bench"

    static func cache(_ root: String) throws -> CacheManager<ProcessBenchCache> {
        try CacheManager<ProcessBenchCache>(root: CacheRoot(directory: URL(fileURLWithPath: root, isDirectory: true)))
    }

    static func preferences(_ root: String) throws -> Preferences {
        try Preferences(
            store: PlistStore(directory: URL(fileURLWithPath: root, isDirectory: true), format: .binary),
            name: preferencesName
        )
    }

    static func records(_ root: String) throws -> RecordStore<ProcessBenchRecord> {
        try RecordStore<ProcessBenchRecord>(
            directory: URL(fileURLWithPath: root, isDirectory: true).appendingPathComponent("records")
        )
    }
}

/// The monotonic clock, system-wide: times taken in two processes compare.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// `--process-child write <store> <root> <prefix> <count> <holds file>`: stores `count` values
/// under its own keys (1 KB cache entries, `Int` preferences, records with a 64-byte payload),
/// then writes its cross-process lock holds to `<holds file>`.
///
/// `--process-child announce <store> <root> <count> <times file> <min ms> <max ms>`: sets key
/// (or record) "latest" to 1, 2, … `count`, waiting a random `min`…`max` ms after each, and
/// after each write returns records the monotonic times it started and returned at as two
/// `UInt64` at offset 16 × n of `<times file>`; then writes its lock holds to
/// `<times file>.holds`.
func runProcessBenchmarkChild(_ arguments: [String]) -> Never {
    do {
        guard arguments.count >= 6, let kind = ProcessBenchStore(rawValue: arguments[1]) else {
            throw CocoaError(.featureUnsupported)
        }
        let root = arguments[2]
        let write: (String, Int) throws -> Void
        let holds: () -> LockHoldHistogram
        switch kind {
        case .cache:
            let cache = try ProcessBenchStore.cache(root)
            let payload = String(repeating: "p", count: 1_000)
            write = { key, value in
                try cache.store(key == "latest" ? String(value) : payload, for: .items, parameter: key)
            }
            holds = { cache.crossProcessLockHolds }
        case .preferences:
            let preferences = try ProcessBenchStore.preferences(root)
            write = { key, value in try preferences.set(value, for: PreferenceKey<Int>(key, default: -1)) }
            holds = { PlistFileLock.holdHistogram(forPlistAt: preferences.fileURL) ?? LockHoldHistogram() }
        case .records:
            let records = try ProcessBenchStore.records(root)
            write = { key, value in
                try records.upsert(
                    ProcessBenchRecord(id: key, sequence: value, payload: String(repeating: "x", count: 64))
                )
            }
            holds = { records.crossProcessLockHolds }
        }
        let holdsPath: String
        if arguments[0] == "write" {
            let prefix = arguments[3]
            for i in 0..<(Int(arguments[4]) ?? 0) { try write(prefix + String(i), i) }
            holdsPath = arguments[5]
        } else {
            guard arguments.count >= 7, let count = Int(arguments[3]), let low = Int(arguments[5]),
                let high = Int(arguments[6])
            else {
                throw CocoaError(.featureUnsupported)
            }
            let times = open(arguments[4], O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            guard times >= 0 else { throw CocoaError(.fileWriteNoPermission) }
            for sequence in 1...count {
                var span = [monotonicNanoseconds(), 0]
                try write("latest", sequence)
                span[1] = monotonicNanoseconds()
                _ = span.withUnsafeBytes { pwrite(times, $0.baseAddress, 16, off_t(16 * sequence)) }
                usleep(UInt32(Int.random(in: low...high) * 1_000))
            }
            close(times)
            holdsPath = arguments[4] + ".holds"
        }
        try ProcessBenchHolds.write(holds(), to: holdsPath)
        exit(0)
    } catch {
        print("process benchmark child \(arguments): \(error)")
        exit(1)
    }
}

/// A lock-hold histogram as one line of text, to pass from a child to the parent.
enum ProcessBenchHolds {
    static func write(_ holds: LockHoldHistogram, to path: String) throws {
        let line = ([holds.longestNanoseconds] + holds.counts).map(String.init).joined(separator: " ")
        try line.write(toFile: path, atomically: false, encoding: .utf8)
    }

    static func read(_ path: String) -> LockHoldHistogram? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let numbers = text.split(separator: " ").compactMap { UInt64($0) }
        guard let longest = numbers.first else { return nil }
        return LockHoldHistogram(counts: Array(numbers.dropFirst()), longestNanoseconds: longest)
    }
}
