import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The `processes` suite: several processes on one root. The other processes are this
// executable, started with `--process-child` (ProcessBenchmarkChild.swift).
//
// 1. Throughput: the same number of writes of distinct keys by one process and by two at once,
//    round-robin (one round = one of each), so a burst of load on the shared machine slows both
//    alike. Reported by median and by minimum.
// 2. The cross-process lock holds of those writers (release build): 99th percentile and longest.
// 3. Latency from another process's write returning to this process seeing it
//    (ProcessLatencyBenchmarks.swift).

/// Starts this executable again in the child mode `mode` (`--process-child`, `--scale-child`)
/// with `arguments`; returns its process id.
func spawnSelf(_ arguments: [String], mode: String = "--process-child") throws -> pid_t {
    let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
    var argv: [UnsafeMutablePointer<CChar>?] = ([executable, mode] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, executable, nil, nil, &argv, environ)
    guard result == 0 else { throw CocoaError(.executableLoad) }
    return pid
}

/// Waits for `pids` to exit; throws when one failed.
func waitFor(_ pids: [pid_t]) throws {
    var failed = false
    for pid in pids {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status != 0 { failed = true }
    }
    if failed { throw CocoaError(.executableLoad) }
}

/// A fresh folder under the harness's scratch folder, per call.
final class ProcessBenchRoots {
    private let scratch: URL
    private var round = 0

    init(_ harness: Harness) { scratch = harness.scratch }

    func make() throws -> String {
        round += 1
        let url = scratch.appendingPathComponent("processes-\(round)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }
}

func runProcessBenchmarks(_ harness: Harness) throws {
    let quick = harness.options.quick
    let roots = ProcessBenchRoots(harness)
    var holds: [(String, LockHoldHistogram)] = []
    // Quick mode: 3 rounds each (a median of 3), on smaller workloads, since every round
    // starts processes and writes on a fresh root that the run deletes at its end.
    let workloads: [(store: ProcessBenchStore, label: String, perProcess: Int, rounds: Int)] = [
        (.cache, "1 KB cache stores", quick ? 250 : 2_000, quick ? 3 : 15),
        (.preferences, "Preferences sets", quick ? 25 : 150, quick ? 3 : 5),
        (.records, "RecordStore upserts", quick ? 50 : 400, quick ? 3 : 5),
    ]
    for workload in workloads {
        let one = "\(workload.label): 1 process, \(2 * workload.perProcess)"
        let two = "\(workload.label): 2 processes, \(workload.perProcess) each"
        var twoHolds = LockHoldHistogram()
        var failure: (any Error)?
        func run(_ prefixes: [String], count: Int) {
            do {
                let root = try roots.make()
                let pids = try prefixes.map {
                    try spawnSelf(["write", workload.store.rawValue, root, $0, String(count), root + "/holds-" + $0])
                }
                try waitFor(pids)
                guard prefixes.count == 2 else { return }
                for prefix in prefixes {
                    if let child = ProcessBenchHolds.read(root + "/holds-" + prefix) { twoHolds.merge(child) }
                }
            } catch {
                failure = failure ?? error
            }
        }
        harness.measureInterleaved(
            "processes",
            samples: workload.rounds,
            [
                (
                    one,
                    {
                        run(["a"], count: 2 * workload.perProcess)
                        return nil
                    }
                ),
                (
                    two,
                    {
                        run(["a", "b"], count: workload.perProcess)
                        return nil
                    }
                ),
            ]
        )
        if let failure { throw failure }
        holds.append((workload.label, twoHolds))
        if let first = harness.results.last(where: { $0.name == one }),
            let second = harness.results.last(where: { $0.name == two })
        {
            print(
                String(
                    format: "  two processes vs one: %.2f× by median, %.2f× by minimum (%d rounds)",
                    Double(first.medianNS) / Double(second.medianNS),
                    Double(first.minNS) / Double(second.minNS),
                    workload.rounds
                )
            )
        }
    }
    harness.printTable(
        "processes",
        title:
            "Writes of distinct keys: one process vs two on one root (wall time, process start included; round-robin)"
    ) { name in
        guard let range = name.range(of: ": 2 processes") else { return name.contains(": 1 process") ? name : nil }
        let label = String(name[..<range.lowerBound])
        return harness.results.first { $0.suite == "processes" && $0.name.hasPrefix(label + ": 1 process") }?.name
    }

    // Lock holds, release build: every hold of the cross-process lock by the two writers of
    // every two-process round above, timed by FileLock from `flock` returning to its release.
    var holdRows: [BenchmarkResult] = []
    print("\nCross-process lock holds of the two-process rounds (release; FileLock.holdHistogram)")
    print("| writers | holds | 99th percentile (≤) | longest |")
    print("|:--|--:|--:|--:|")
    for (label, histogram) in holds {
        guard let p99 = histogram.percentile(0.99) else { continue }
        print(
            "| \(label) | \(histogram.count) | \(Harness.format(Int64(p99))) | \(Harness.format(Int64(histogram.longestNanoseconds))) |"
        )
        holdRows.append(
            BenchmarkResult(
                suite: "processes.locks",
                name: "\(label), 2 processes: lock hold p99",
                medianNS: Int64(p99),
                minNS: Int64(p99),
                bytes: nil,
                samples: Int(histogram.count)
            )
        )
        holdRows.append(
            BenchmarkResult(
                suite: "processes.locks",
                name: "\(label), 2 processes: longest lock hold",
                medianNS: Int64(histogram.longestNanoseconds),
                minNS: Int64(histogram.longestNanoseconds),
                bytes: nil,
                samples: Int(histogram.count)
            )
        )
    }

    for row in holdRows { harness.record(row) }  // for results.json
    harness.recordTable(
        "processes.locks",
        title: "Cross-process lock holds of the two-process rounds (samples: holds counted)"
    )

    try runProcessLatencyBenchmarks(harness, roots: roots)
}
