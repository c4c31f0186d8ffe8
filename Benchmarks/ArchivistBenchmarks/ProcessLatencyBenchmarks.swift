import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Latency from another process's write returning to this process seeing it: a child
// (`announce`) sets "latest" to 1, 2, 3, … and logs when each write started and returned;
// this process notes when it first sees each number, by polling reads in a loop or by
// iterating a change stream. Both clocks are CLOCK_MONOTONIC, system-wide.

/// The first time this process saw each announced number.
final class ProcessBenchSightings: @unchecked Sendable {
    // Safety: `seen` is read and written only under `lock`.
    private let lock = NSLock()
    private var seen: [Int: UInt64] = [:]
    private var latest = 0
    private var latestReadStart: UInt64 = 0
    /// For each number a read served, when the last read serving it started (polling only).
    private(set) var lastServed: [Int: UInt64] = [:]
    /// How long each read that first served a number took (polling only).
    private(set) var firstReadDurations: [Int64] = []

    /// Notes that a read started at `start` (polling only) served `sequence`.
    func note(_ sequence: Int?, readStart start: UInt64? = nil) {
        guard let sequence else { return }
        let now = monotonicNanoseconds()
        lock.lock()
        if seen[sequence] == nil {
            seen[sequence] = now
            if let start { firstReadDurations.append(Int64(now &- start)) }
        }
        if let start {
            if sequence != latest { lastServed[latest] = latestReadStart }
            latest = sequence
            latestReadStart = start
        }
        lock.unlock()
    }

    var all: [Int: UInt64] {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }
}

/// How this process watches for the child's writes.
enum ProcessBenchWatch {
    /// Reads in a loop while the child runs.
    case polling(() throws -> Int?)
    /// Iterates a change stream, reading the value at each event.
    case stream(AsyncStream<Void>, @Sendable () -> Int?)
}

func runProcessLatencyBenchmarks(_ harness: Harness, roots: ProcessBenchRoots) throws {
    let quick = harness.options.quick
    let polled = quick ? 40 : 200
    let streamed = quick ? 10 : 80  // 55–110 ms apart: about 0.8 s per stream case in quick mode

    var root = try roots.make()
    let cache = try ProcessBenchStore.cache(root)
    try measureLatency(
        harness,
        "cache: value(for:) polled (memory tier)",
        .cache,
        root,
        polled,
        spacing: 5...5,
        .polling { try cache.value(String.self, for: .items, parameter: "latest").flatMap { Int($0) } }
    )

    root = try roots.make()
    let watched = try ProcessBenchStore.cache(root)
    try measureLatency(
        harness,
        "cache: changes(of:) yields (change signal)",
        .cache,
        root,
        streamed,
        spacing: 55...110,
        .stream(
            voidStream(watched.changes(of: .items)),
            {
                (try? watched.value(String.self, for: .items, parameter: "latest")).flatMap { $0.flatMap { Int($0) } }
            }
        )
    )

    root = try roots.make()
    let preferences = try ProcessBenchStore.preferences(root)
    try measureLatency(
        harness,
        "Preferences: subscript polled",
        .preferences,
        root,
        polled,
        spacing: 5...5,
        .polling {
            let value = preferences[ProcessBenchStore.preferenceKey]
            return value < 0 ? nil : value
        }
    )

    root = try roots.make()
    let records = try ProcessBenchStore.records(root)
    try measureLatency(
        harness,
        "RecordStore: refresh() polled",
        .records,
        root,
        polled,
        spacing: 5...5,
        .polling {
            try records.refresh()
            return records.record(id: "latest")?.sequence
        }
    )

    root = try roots.make()
    let observed = try ProcessBenchStore.records(root)
    try measureLatency(
        harness,
        "RecordStore: changes() yields (change signal)",
        .records,
        root,
        streamed,
        spacing: 55...110,
        .stream(voidStream(observed.changes(pollingInterval: nil)), { observed.record(id: "latest")?.sequence })
    )

    harness.printTable(
        "processes.latency",
        title: "Latency from another process's write returning to a read here seeing it (0 = seen before it returned)"
    ) { _ in nil }
}

/// `stream`'s events, without their contents.
private func voidStream<Element: Sendable>(_ stream: AsyncStream<Element>) -> AsyncStream<Void> {
    let (events, continuation) = AsyncStream.makeStream(of: Void.self)
    let task = Task {
        for await _ in stream { continuation.yield() }
        continuation.finish()
    }
    continuation.onTermination = { _ in task.cancel() }
    return events
}

/// Starts an `announce` child writing `count` numbers into `store` at `root`, `spacing` ms
/// apart, watches with `watch`, and records the latency from each write returning to its
/// first sighting here (numbers never seen, because a newer one was seen first, are skipped).
private func measureLatency(
    _ harness: Harness,
    _ name: String,
    _ store: ProcessBenchStore,
    _ root: String,
    _ count: Int,
    spacing: ClosedRange<Int>,
    _ watch: ProcessBenchWatch
) throws {
    let sightings = ProcessBenchSightings()
    let timesPath = root + "/announce-times"
    var watcher: Task<Void, Never>?
    if case .stream(let events, let read) = watch {
        watcher = Task.detached {
            for await _ in events { sightings.note(read()) }
        }
    }
    let child = try spawnSelf([
        "announce", store.rawValue, root, String(count), timesPath,
        String(spacing.lowerBound), String(spacing.upperBound),
    ])
    var status: Int32 = 0
    if case .polling(let read) = watch {
        let deadline = monotonicNanoseconds() + 120_000_000_000
        var iteration = 0
        var slowReads: [Int64] = []
        while true {
            let before = monotonicNanoseconds()
            sightings.note(try read(), readStart: before)
            let took = Int64(monotonicNanoseconds() - before)
            if took > 500_000 { slowReads.append(took) }
            iteration += 1
            if iteration % 64 == 0 {
                if waitpid(child, &status, WNOHANG) == child { break }
                if monotonicNanoseconds() > deadline { kill(child, SIGKILL) }
            }
        }
        slowReads.sort()
        print(
            "    \(iteration) reads, \(slowReads.count) took over 500 µs"
                + (slowReads.isEmpty
                    ? ""
                    : " (median \(Harness.format(slowReads[slowReads.count / 2])), longest \(Harness.format(slowReads[slowReads.count - 1])))")
        )
    } else {
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        usleep(300_000)  // a last poll of the stream
        watcher?.cancel()
    }
    guard status == 0, let data = FileManager.default.contents(atPath: timesPath) else {
        throw CocoaError(.executableLoad)
    }
    let spans = data.withUnsafeBytes { bytes in
        (0..<(data.count / 16)).map {
            (
                start: bytes.loadUnaligned(fromByteOffset: 16 * $0, as: UInt64.self),
                returned: bytes.loadUnaligned(fromByteOffset: 16 * $0 + 8, as: UInt64.self)
            )
        }
    }
    var fromReturn: [Int64] = []
    var fromStart: [Int64] = []
    var early = 0
    for (sequence, seen) in sightings.all where sequence > 1 && sequence < spans.count && spans[sequence].returned > 0 {
        let latency = Int64(bitPattern: seen &- spans[sequence].returned)
        if latency < 0 { early += 1 }
        fromReturn.append(max(0, latency))
        fromStart.append(Int64(bitPattern: seen &- spans[sequence].start))
    }
    fromReturn.sort()
    fromStart.sort()
    // A read that started after write n + 1 returned yet served n (or older): stale.
    var stale: [Int64] = []
    for (sequence, start) in sightings.lastServed where sequence > 0 && sequence + 1 < spans.count {
        let returned = spans[sequence + 1].returned
        if returned > 0 && start > returned { stale.append(Int64(start - returned)) }
    }
    stale.sort()
    if case .polling = watch {
        let durations = sightings.firstReadDurations.sorted()
        if !durations.isEmpty {
            print(
                "    the read that first served a write took \(Harness.format(durations[durations.count / 2])) (median), "
                    + "\(Harness.format(durations[durations.count * 9 / 10])) (90th percentile)"
            )
        }
        print(
            "    reads that started after a write returned yet served an older value: \(stale.count)"
                + (stale.isEmpty
                    ? ""
                    : " (median \(Harness.format(stale[stale.count / 2])), longest \(Harness.format(stale[stale.count - 1])) after it returned)")
        )
    }
    guard !fromReturn.isEmpty else {
        print("  \(name): nothing seen")
        return
    }
    harness.record(
        BenchmarkResult(
            suite: "processes.latency",
            name: name,
            medianNS: fromReturn[fromReturn.count / 2],
            minNS: fromReturn[0],
            bytes: nil,
            samples: fromReturn.count
        )
    )
    print(
        "    \(fromReturn.count) of \(count - 1) writes seen; 90th percentile \(Harness.format(fromReturn[fromReturn.count * 9 / 10])), "
            + "longest \(Harness.format(fromReturn[fromReturn.count - 1])); \(early) seen before the write returned; "
            + "median from the write's start \(Harness.format(fromStart[fromStart.count / 2]))"
    )
}
