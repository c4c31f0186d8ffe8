import Foundation

/// One measured case: the median and minimum of its samples, and the bytes it produced.
struct BenchmarkResult: Codable {
    var suite: String
    var name: String
    var medianNS: Int64
    var minNS: Int64
    var bytes: Int?
    var samples: Int
    /// What the row's figure is to be read against (a target, a ratio of bytes), shown after
    /// its speed; `nil` for most rows.
    var note: String? = nil
}

/// A tiny benchmark harness on `ContinuousClock`: warm-up, N samples, median and minimum,
/// one table per suite with ratios to a baseline case, and JSON results for comparing runs.
final class Harness {
    /// Run options from the command line.
    struct Options {
        /// Only suites whose name contains one of these run (all when empty).
        var suites: [String] = []
        /// Fewer samples and smaller workloads, to finish in well under a minute.
        var quick = false
        /// Where `results.json` and the charts are written; `nil` to skip. Outside the tracked
        /// files unless `--update-docs` says otherwise (``updatingDocs()``).
        var outputDirectory: URL? = URL(fileURLWithPath: ".build/benchmarks", isDirectory: true)
        /// Where the short page generated from them is written (``BenchmarkPage``; `tables.md`
        /// goes beside the charts); `nil` to skip.
        var pageFile: URL? = URL(fileURLWithPath: ".build/benchmarks/Benchmarks.md")

        /// Writes into the committed `docs/benchmarks/` and `docs/Benchmarks.md` instead.
        mutating func updatingDocs() {
            outputDirectory = URL(fileURLWithPath: "docs/benchmarks", isDirectory: true)
            pageFile = URL(fileURLWithPath: "docs/Benchmarks.md")
        }
        /// The folder the disk suites make their scratch folder in: `--root`, else the
        /// `ARCHIVIST_BENCHMARK_ROOT` environment variable, else the temporary folder. Point it
        /// at another file system (a journaled ext4 image on a loop device) to measure there.
        var root: URL? = ProcessInfo.processInfo.environment["ARCHIVIST_BENCHMARK_ROOT"]
            .map { URL(fileURLWithPath: $0, isDirectory: true) }
    }

    let options: Options
    private(set) var results: [BenchmarkResult] = []
    /// The tables printed so far: what `results.json` records for the page and the chart.
    private(set) var tables: [BenchmarkTable] = []
    /// A scratch folder for suites that touch the disk (the embedded default cache location);
    /// removed when the run ends.
    let scratch: URL

    init(options: Options) throws {
        self.options = options
        scratch = (options.root ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent(
                "ArchivistBenchmarks-\(ProcessInfo.processInfo.processIdentifier)",
                isDirectory: true
            )
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: scratch) }

    /// Samples per case: fewer in quick mode.
    var sampleCount: Int { options.quick ? 3 : 9 }

    /// Whether the suite named `suite` was asked for.
    ///
    /// A name that is a whole suite's name selects that suite alone (`keyed` is not also
    /// `keyed-declaration`); any other selects every suite containing it (`archiving`).
    func wants(_ suite: String) -> Bool {
        options.suites.isEmpty
            || options.suites.contains { wanted in
                allSuites.contains { $0.name.lowercased() == wanted.lowercased() }
                    ? suite.lowercased() == wanted.lowercased()
                    : suite.localizedCaseInsensitiveContains(wanted)
            }
    }

    /// Runs `body` once to warm up (unless `warmUp` is false: for cases that take seconds),
    /// then `samples` times, and records the median and minimum.
    ///
    /// `body` returns the byte count it produced (or `nil`), recorded with the timing.
    @discardableResult
    func measure(
        _ suite: String,
        _ name: String,
        samples: Int? = nil,
        warmUp: Bool = true,
        _ body: () throws -> Int?
    ) rethrows -> BenchmarkResult {
        let count = samples ?? sampleCount
        let clock = ContinuousClock()
        var bytes = warmUp ? try body() : nil
        var times: [Int64] = []
        for _ in 0..<count {
            let start = clock.now
            bytes = try body()
            let elapsed = clock.now - start
            times.append(elapsed.nanoseconds)
        }
        times.sort()
        let result = BenchmarkResult(
            suite: suite,
            name: name,
            medianNS: times[times.count / 2],
            minNS: times[0],
            bytes: bytes,
            samples: count
        )
        results.append(result)
        print(
            "  \(name): \(Self.format(result.medianNS))",
            terminator: bytes.map { " (\(Self.formatBytes($0)))\n" } ?? "\n"
        )
        return result
    }

    /// Runs the cases round-robin: one warm-up round, then `samples` rounds of each case once
    /// (in an order shuffled each round, with a fixed seed), and records each case's median and
    /// minimum. A burst of load from elsewhere on the shared machine then slows every case of
    /// a round alike instead of all samples of one case, so the ratios between cases hold.
    ///
    /// Each body returns the byte count it produced (or `nil`), recorded with the timing.
    func measureInterleaved(_ suite: String, samples: Int? = nil, _ cases: [(String, () -> Int?)]) {
        let count = samples ?? sampleCount
        let clock = ContinuousClock()
        var times = Array(repeating: [Int64](), count: cases.count)
        var bytes = Array(repeating: Int?.none, count: cases.count)
        var order = Array(cases.indices)
        var generator = SplitMix64(seed: 0x5EED)
        for round in 0...count {
            // A new order each round (the same in every run): a case that always follows the
            // same one pays for what that one leaves behind — after JSON decode's large frees,
            // the 1 MB story's next encode faults in fresh pages, which the same call elsewhere
            // in the round does not.
            if round > 0 { order.shuffle(using: &generator) }
            for i in order {
                let body = cases[i].1
                let start = clock.now
                bytes[i] = body()
                let elapsed = clock.now - start
                if round > 0 {
                    times[i].append(elapsed.nanoseconds)
                }
            }
        }
        for (i, (name, _)) in cases.enumerated() {
            let sorted = times[i].sorted()
            record(
                BenchmarkResult(
                    suite: suite,
                    name: name,
                    medianNS: sorted[sorted.count / 2],
                    minNS: sorted[0],
                    bytes: bytes[i],
                    samples: count
                )
            )
        }
    }

    /// Like ``measureInterleaved(_:samples:_:)``, but each case is a loop of `count` operations
    /// and the cases run *operation by operation* (``InterleavedOperations``: operation `i` of
    /// every case back to back, the case going first rotating), so that a kernel stall of a few
    /// milliseconds — a journal commit, write-back throttling, ext4's scan of recently deleted
    /// inodes — lands on every case alike instead of on whichever case was running. One warm-up
    /// round, then `samples` rounds; each case's sample is the sum of its operations' times.
    /// `beforeRound` runs before each round, untimed (the write suites flush the previous round's
    /// dirty pages there, so that their write-back does not run beside this round's writes).
    ///
    /// `perOperation`: each *operation* is a sample (median and minimum of one operation over
    /// all rounds) instead of each round's sum. For loops of a few long operations — ten 10 MB
    /// writes — where a stall longer than a write (a journal commit, write-back throttling)
    /// lands on one operation of one case now and then and would decide a sum of ten; with
    /// this, the row says what a typical operation costs, and such stalls, which hit each case
    /// alike over many rounds, drop out of the medians.
    func measureInterleavedOperations(
        _ suite: String,
        samples: Int? = nil,
        count: Int,
        perOperation: Bool = false,
        beforeRound: () -> Void = {},
        _ cases: [(String, (Int) -> Void)]
    ) {
        let rounds = samples ?? sampleCount
        var times = Array(repeating: [Int64](), count: cases.count)
        for round in 0...rounds {
            beforeRound()
            let totals = InterleavedOperations.run(count: count, stores: cases.count, firstTurn: round) { store, i in
                cases[store].1(i)
            }
            if round > 0 {
                for (i, total) in totals.enumerated() {
                    if perOperation { times[i] += total.operations } else { times[i].append(total.wall) }
                }
            }
        }
        for (i, (name, _)) in cases.enumerated() {
            let sorted = times[i].sorted()
            record(
                BenchmarkResult(
                    suite: suite,
                    name: name,
                    medianNS: sorted[sorted.count / 2],
                    minNS: sorted[0],
                    bytes: nil,
                    samples: sorted.count
                )
            )
        }
    }

    /// Records a result measured by the suite itself (for timings that need their own setup
    /// per sample); `printed: false` when the suite prints it its own way.
    func record(_ result: BenchmarkResult, printed: Bool = true) {
        results.append(result)
        guard printed else { return }
        print(
            "  \(result.name): \(Self.format(result.medianNS))",
            terminator: result.bytes.map { " (\(Self.formatBytes($0)))\n" } ?? "\n"
        )
    }

    /// Records the suite's table for `results.json` without printing it: its title, and for each
    /// row the row that `baseline` names, if the suite has one by that name.
    func recordTable(_ suite: String, title: String? = nil, baseline: (String) -> String? = { _ in nil }) {
        let rows = results.filter { $0.suite == suite }
        var baselines: [String: String] = [:]
        for row in rows {
            if let name = baseline(row.name), rows.contains(where: { $0.name == name }) { baselines[row.name] = name }
        }
        tables.removeAll { $0.suite == suite }
        tables.append(BenchmarkTable(suite: suite, title: title ?? suite, baselines: baselines))
    }

    /// Prints the suite's table, and records it (``recordTable(_:title:baseline:)``): median,
    /// minimum, bytes, and speed relative to the row that `baseline` names for each row (how
    /// many times faster than it; above 1 is faster).
    func printTable(_ suite: String, title: String? = nil, baseline: (String) -> String?) {
        let rows = results.filter { $0.suite == suite }
        guard !rows.isEmpty else { return }
        recordTable(suite, title: title, baseline: baseline)
        print("\n\(title ?? suite)")
        let header = ["case", "median", "min", "bytes", "speed vs baseline"]
        var table = [header]
        for row in rows {
            var ratio = ""
            if let name = baseline(row.name), let base = rows.first(where: { $0.name == name }), row.medianNS > 0 {
                ratio = String(format: "%.2f× (%@)", Double(base.medianNS) / Double(row.medianNS), name)
            }
            if let note = row.note { ratio += (ratio.isEmpty ? "" : "; ") + note }
            table.append([
                row.name, Self.format(row.medianNS), Self.format(row.minNS), row.bytes.map(Self.formatBytes) ?? "",
                ratio,
            ])
        }
        let widths = (0..<header.count).map { column in table.map { $0[column].count }.max() ?? 0 }
        for (i, line) in table.enumerated() {
            let cells = line.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }
            print("| " + cells.joined(separator: " | ") + " |")
            if i == 0 {
                print(
                    "|"
                        + widths.enumerated().map {
                            $0.offset == 0
                                ? ":" + String(repeating: "-", count: $0.element + 1)
                                : String(repeating: "-", count: $0.element + 1) + ":"
                        }.joined(separator: "|") + "|"
                )
            }
        }
    }

    /// Writes `results.json` (every result, the tables, `info`), then the chart and the page
    /// from it (``BenchmarkPage``), unless `--no-output`.
    func writeResults(_ info: RunInfo) throws {
        guard let directory = options.outputDirectory else { return }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let run = BenchmarkRun(run: info, tables: tables, results: results)
        let url = try run.write(into: directory)
        print("\nwrote \(BenchmarkPage.displayPath(url))")
        if let page = options.pageFile {
            let command = (["swift run -c release ArchivistBenchmarks"] + (info.arguments ?? [])).joined(separator: " ")
            try BenchmarkPage.write(run, page: page, chartDirectory: directory, results: url, command: command)
        }
    }

    static func format(_ ns: Int64) -> String {
        switch ns {
        case ..<10_000: return "\(ns) ns"
        case ..<10_000_000: return String(format: "%.1f µs", Double(ns) / 1_000)
        case ..<10_000_000_000: return String(format: "%.2f ms", Double(ns) / 1_000_000)
        default: return String(format: "%.2f s", Double(ns) / 1_000_000_000)
        }
    }

    static func formatBytes(_ bytes: Int) -> String {
        switch bytes {
        case ..<10_000: return "\(bytes) B"
        case ..<10_000_000: return String(format: "%.1f KB", Double(bytes) / 1_000)
        default: return String(format: "%.1f MB", Double(bytes) / 1_000_000)
        }
    }
}

/// A small seeded generator (SplitMix64), so that shuffled orders repeat from run to run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// A generator starting from `seed`.
    init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}
