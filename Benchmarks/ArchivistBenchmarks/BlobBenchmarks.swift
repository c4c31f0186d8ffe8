import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A 100 MB `Data` stored and read through `CacheManager` (memory tier off) against raw POSIX
/// writing and reading the same bytes as a plain file (temporary + rename; open, fstat, read),
/// interleaved store by store (`InterleavedOperations`) with the previous round's dirty pages
/// written back first, each write and read a sample (15 rounds, 3 in quick mode: a 100 MB
/// write is slow, for raw and ours alike). Target: ≥ 70% of raw's throughput, i.e. a speed
/// ratio of at least 0.70.
///
/// Then the peak *extra* resident memory of one store and one read of each: the process's
/// high-water mark (`VmHWM`) reset just before the call (`/proc/self/clear_refs`), minus the
/// resident size before it, as a multiple of the value's size (target ≤ 1.2×; a read's result
/// is itself the value, 1.0×). Linux only; elsewhere the memory rows are left out.
func runBlobBenchmarks(_ harness: Harness) throws {
    let size = 100 * 1_000_000
    let rounds = harness.options.quick ? 3 : 15
    let value = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
    let root = harness.scratch.appendingPathComponent("cache-blobs", isDirectory: true)
    let rawFolder = root.appendingPathComponent("raw", isDirectory: true).path
    try FileManager.default.createDirectory(atPath: rawFolder, withIntermediateDirectories: true)
    let cache = try CacheManager<BenchCache>(
        root: CacheRoot(directory: root.appendingPathComponent("cache")),
        configuration: .init(memoryCountLimit: 0)
    )
    defer {
        _ = try? cache.clear()
        try? FileManager.default.removeItem(at: root)
    }
    let rawName = MD5.hexDigest(of: "blob")
    let raw = "raw POSIX"
    let ours = "CacheManager"

    harness.measureInterleavedOperations(
        "cache.blob.write",
        samples: rounds,
        count: 1,
        perOperation: true,
        beforeRound: { sync() },
        [
            (
                "\(raw) write",
                { _ in precondition(rawWrite(value, folder: rawFolder, name: rawName), "raw write failed") }
            ),
            (
                "\(ours).store",
                { _ in
                    do { try cache.store(value, for: .blobs, parameter: "blob") } catch {
                        fatalError("store failed: \(error)")
                    }
                }
            ),
        ]
    )
    harness.printTable("cache.blob.write", title: "one 100 MB Data written, durability none (\(rounds) rounds)") { _ in
        "\(raw) write"
    }
    harness.measureInterleavedOperations(
        "cache.blob.read",
        samples: rounds,
        count: 1,
        perOperation: true,
        [
            (
                "\(raw) read",
                { _ in precondition(rawRead(rawFolder + "/" + rawName)?.count == size, "raw read failed") }
            ),
            (
                "\(ours).value (disk)",
                { _ in
                    precondition(
                        ((try? cache.value(Data.self, for: .blobs, parameter: "blob")) ?? nil)?.count == size,
                        "read failed"
                    )
                }
            ),
        ]
    )
    harness.printTable("cache.blob.read", title: "one 100 MB Data read, page cache warm (\(rounds) rounds)") { _ in
        "\(raw) read"
    }

    #if os(Linux)
    let memory: [(String, () throws -> Void)] = [
        ("\(raw) write", { _ = rawWrite(value, folder: rawFolder, name: rawName) }),
        ("\(ours).store", { try cache.store(value, for: .blobs, parameter: "blob") }),
        ("\(raw) read", { _ = rawRead(rawFolder + "/" + rawName) }),
        ("\(ours).value (disk)", { _ = try cache.value(Data.self, for: .blobs, parameter: "blob") }),
    ]
    print("\npeak extra resident memory of one call, 100 MB value (VmHWM after − VmRSS before)")
    for (name, body) in memory {
        guard let extra = try PeakMemory.extraResident(body) else {
            print("  \(name): /proc/self/clear_refs not writable, not measured")
            continue
        }
        let ratio = Double(extra) / Double(size)
        print(String(format: "  %@: %.1f MB (%.2f× the value)", name, Double(extra) / 1_000_000, ratio))
        harness.record(
            BenchmarkResult(
                suite: "cache.blob.memory",
                name: "\(name) peak extra RSS",
                medianNS: 0,
                minNS: 0,
                bytes: extra,
                samples: 1
            ),
            printed: false
        )
    }
    harness.recordTable(
        "cache.blob.memory",
        title: "peak extra resident memory of one call with a 100 MB value (bytes: VmHWM after − VmRSS before)"
    )
    #endif
}

#if os(Linux)
/// The process's resident memory from `/proc/self/status`.
enum PeakMemory {
    /// The peak resident memory `body` adds over what is resident before it, in bytes: the
    /// high-water mark is reset first (writing 5 to `/proc/self/clear_refs`); `nil` if it
    /// cannot be.
    static func extraResident(_ body: () throws -> Void) throws -> Int? {
        guard let before = status("VmRSS"), resetPeak() else { return nil }
        try body()
        return status("VmHWM").map { $0 - before }
    }

    private static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    /// A `kB` field of `/proc/self/status`, in bytes.
    private static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter(\.isNumber)
            return Int(digits).map { $0 * 1_024 }
        }
        return nil
    }
}
#endif
