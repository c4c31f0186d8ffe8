import Archivist
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The `processes` suite: several processes on one cache root. The second process is this
// executable itself, started with `--process-child` (handled in main.swift before options).

/// The cache type the process benchmarks write.
enum ProcessBenchCache: String, CacheType {
    case items
    var location: CacheLocation { .sharedCaches }
}

private func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// `--process-child write <root> <prefix> <count>`: stores `count` 1 KB values under its own
/// keys. `--process-child announce <root> <count>`: stores `count` values of key "latest",
/// each carrying the monotonic time it was stored at, 5 ms apart.
func runProcessBenchmarkChild(_ arguments: [String]) -> Never {
    do {
        let root = CacheRoot(directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
        let cache = try CacheManager<ProcessBenchCache>(root: root)
        switch arguments[0] {
        case "write":
            let payload = String(repeating: "p", count: 1_000)
            for i in 0..<(Int(arguments[3]) ?? 0) { try cache.store(payload, for: .items, parameter: arguments[2] + String(i)) }
        default:
            for _ in 0..<(Int(arguments[2]) ?? 0) {
                try cache.store(String(monotonicNanoseconds()), for: .items, parameter: "latest")
                usleep(5_000)
            }
        }
        exit(0)
    } catch {
        print("process benchmark child: \(error)")
        exit(1)
    }
}

private func spawnSelf(_ arguments: [String]) throws -> pid_t {
    let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
    var argv: [UnsafeMutablePointer<CChar>?] = ([executable, "--process-child"] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, executable, nil, nil, &argv, environ)
    guard result == 0 else { throw CocoaError(.executableLoad) }
    return pid
}

private func waitFor(_ pids: [pid_t]) {
    for pid in pids {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}

func runProcessBenchmarks(_ harness: Harness) throws {
    let quick = harness.options.quick
    let perProcess = quick ? 500 : 2_000
    let samples = quick ? 3 : 7
    var round = 0
    func freshRoot() throws -> String {
        round += 1
        let url = harness.scratch.appendingPathComponent("processes-\(round)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }
    // Aggregate throughput: the same number of 1 KB stores by one process and by two at once.
    try harness.measure("processes", "1 process, \(2 * perProcess) stores", samples: samples, warmUp: false) {
        waitFor([try spawnSelf(["write", try freshRoot(), "a", String(2 * perProcess)])])
        return nil
    }
    try harness.measure("processes", "2 processes, \(perProcess) stores each", samples: samples, warmUp: false) {
        let root = try freshRoot()
        waitFor([try spawnSelf(["write", root, "a", String(perProcess)]), try spawnSelf(["write", root, "b", String(perProcess)])])
        return nil
    }
    harness.printTable("processes", title: "1 KB stores: one process vs two on one root (wall time, process start included)") {
        _ in "1 process, \(2 * perProcess) stores"
    }

    // Latency from the moment another process starts a store (the value carries that time) to
    // a read here serving the new value through the memory tier; includes the store itself.
    let root = try freshRoot()
    let cache = try CacheManager<ProcessBenchCache>(root: CacheRoot(directory: URL(fileURLWithPath: root, isDirectory: true)))
    let announcements = quick ? 40 : 200
    let child = try spawnSelf(["announce", root, String(announcements)])
    var latencies: [Int64] = []
    var last = ""
    let deadline = monotonicNanoseconds() + 30_000_000_000
    while latencies.count < announcements - 1 && monotonicNanoseconds() < deadline {
        guard let value = try cache.value(String.self, for: .items, parameter: "latest"), value != last else { continue }
        let seen = monotonicNanoseconds()
        if !last.isEmpty, let stored = UInt64(value) { latencies.append(Int64(seen &- stored)) }
        last = value
    }
    waitFor([child])
    latencies.sort()
    if !latencies.isEmpty {
        harness.record(BenchmarkResult(suite: "processes.latency", name: "store started elsewhere → served here",
                                       medianNS: latencies[latencies.count / 2], minNS: latencies[0], bytes: nil,
                                       samples: latencies.count))
        print("  (\(latencies.count) stores; 90th percentile \(Harness.format(latencies[latencies.count * 9 / 10])))")
    }
    harness.printTable("processes.latency", title: "Latency from another process starting a store to a memory-tier read here serving the new value") { _ in nil }
}
