import Foundation

/// Writes the benchmark pages and charts from a ``BenchmarkRun``. `Benchmarks.md` is short:
/// how to run the benchmarks, the run's machine and build, and one chart per group of suites
/// (`chart-GROUP.svg`, each case's speed relative to its baseline) with the large-cache figures
/// as one small table. `tables.md`, beside the charts, holds every case's median, minimum,
/// bytes and speed, how the benchmarks measure, and how to compare two commits. Every figure
/// on both pages comes from the run; nothing is typed in by hand.
enum BenchmarkPage {
    /// Writes the charts and `tables.md` into `chartDirectory`, and the short page to `page`.
    ///
    /// - Parameters:
    ///   - command: the command line that produced the pages, named in their first lines.
    ///   - results: the `results.json` the pages are made from, linked from them.
    static func write(_ run: BenchmarkRun, page: URL, chartDirectory: URL, results: URL, command: String) throws {
        try FileManager.default.createDirectory(at: chartDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: page.deletingLastPathComponent(), withIntermediateDirectories: true)
        let folder = page.deletingLastPathComponent()
        let tablesFile = chartDirectory.appendingPathComponent("tables.md")
        var charts: [String: URL] = [:]
        for group in groups(of: run) {
            let title = headings[group.name] ?? group.name
            guard let svg = BenchmarkChart.svg(title: title, sections: run.chartSections(ofGroup: group.name)) else {
                continue
            }
            let chart = chartDirectory.appendingPathComponent("chart-\(group.name).svg")
            try Data(svg.utf8).write(to: chart)
            charts[group.name] = chart
        }
        let summary = markdown(
            run,
            command: command,
            results: relativePath(of: results, from: folder),
            tables: relativePath(of: tablesFile, from: folder),
            charts: charts.mapValues { relativePath(of: $0, from: folder) }
        )
        try Data(summary.utf8).write(to: page)
        let tables = tablesMarkdown(
            run,
            command: command,
            results: relativePath(of: results, from: chartDirectory),
            charts: charts.mapValues { relativePath(of: $0, from: chartDirectory) }
        )
        try Data(tables.utf8).write(to: tablesFile)
        print(
            "wrote \(charts.count) charts and \(displayPath(tablesFile)) into \(displayPath(chartDirectory)), "
                + "and \(displayPath(page))"
        )
    }

    /// The short page; `results`, `tables` and each group's chart are paths relative to its folder.
    static func markdown(
        _ run: BenchmarkRun,
        command: String,
        results: String,
        tables: String,
        charts: [String: String]
    ) -> String {
        var lines = ["# Benchmarks", "", generated(command: command, results: results), ""]
        lines.append(
            introduction + " Every case's median, minimum and bytes, and how the benchmarks measure: "
                + "[`\(tables)`](\(tables))."
        )
        lines += ["", "```sh"] + commands + ["```", "", "## This run", ""]
        lines += describe(run.run)
        for group in groups(of: run) {
            lines += ["", "## \(headings[group.name] ?? group.name)", ""]
            if group.name == "scale" {
                lines += sizeTable(group.suites, in: run, only: scaleSummaryColumns)
            } else if let chart = charts[group.name] {
                lines.append("![Speed of each case of this table relative to its baseline](\(chart))")
            } else {
                lines.append("See [`\(tables)`](\(tables)).")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The page of every table; `results` and each group's chart are paths relative to its folder.
    static func tablesMarkdown(
        _ run: BenchmarkRun,
        command: String,
        results: String,
        charts: [String: String]
    )
        -> String
    {
        var lines = ["# Benchmark tables", "", generated(command: command, results: results)]
        lines += ["", introduction, "", "## How it measures", ""]
        lines += method
        lines += ["", "## This run", ""]
        lines += describe(run.run)
        lines += ["", "## Results"]
        for group in groups(of: run) {
            lines += ["", "### \(headings[group.name] ?? group.name)"]
            if let chart = charts[group.name] {
                lines += ["", "![Speed of each case of this table relative to its baseline](\(chart))", ""]
            }
            if group.name == "scale" {
                lines += sizeTable(group.suites, in: run)
                continue
            }
            lines += ["| workload | case | median | min | bytes | speed vs baseline |", "|:--|:--|--:|--:|--:|:--|"]
            for suite in group.suites {
                let title = run.table(of: suite)?.title ?? suite
                for (index, result) in run.results.filter({ $0.suite == suite }).enumerated() {
                    lines.append(row(result, workload: index == 0 ? title : "", in: run))
                }
            }
        }
        lines += ["", "## Comparing two commits", ""]
        lines += comparing
        return lines.joined(separator: "\n") + "\n"
    }

    /// The first line of both pages: what made them, from what.
    private static func generated(command: String, results: String) -> String {
        "_Generated by `\(command)` from [`\(results)`](\(results)). Do not edit it by hand: run the "
            + "benchmarks again, or change the text in `Benchmarks/ArchivistBenchmarks/BenchmarkPage.swift`._"
    }

    /// The `scale` measurements the short page shows, by suite.
    private static let scaleSummaryColumns: Set<String> = [
        "scale.open", "scale.open-memory", "scale.flush-rounds", "scale.flush-bytes", "scale.set", "scale.get",
        "scale.total-size",
    ]

    private static let introduction = """
        What Archivist's operations cost next to what an app would use without it: Foundation's \
        JSON, property-list and keyed archivers, `PropertyListSerialization`, files written and read \
        with raw POSIX calls, `NSCache` and a `Dictionary` behind a lock. Every figure below comes \
        from one run of the `ArchivistBenchmarks` executable, in release mode, on the machine named \
        under *This run*.
        """

    private static let method =
        [
            "- Each case runs once to warm up, then a number of samples: 9 in a full run, 3 with `--quick`, unless a "
                + "suite sets its own (one cold sample of `NSKeyedArchiver`, 201 of a single record update; "
                + "`results.json` records each case's count). The tables show the **median** and the **minimum** sample. "
                + "`--quick` also shrinks the workloads: a smoke test, whose figures are not to be quoted.",
            "- A sample is the whole workload the table's first column names (all its writes, all its lookups): "
                + "divide by its count for one operation. Rows named `… CPU` are the calling thread's CPU time "
                + "instead of wall time.",
            "- **Speed vs baseline** is the baseline's median over the case's: above 1× the case is faster. The "
                + "baseline is a case of the same table measured in the same run, so compare ratios, not times from "
                + "different runs or machines.",
            "- Cases compared with each other run **round-robin**: one sample of each per round, in an order shuffled "
                + "each round from a fixed seed, so that a burst of load from elsewhere slows them alike.",
            "- The **disk suites** interleave Archivist with raw POSIX calls (temporary file, `write`, `rename`; "
                + "`open`, `read`) **operation by operation**: operation *i* of each store back to back, the one "
                + "going first alternating, so that a kernel stall (a journal commit, write-back throttling) lands "
                + "on both. Rows of a few large operations (10 MB, 100 MB) give the median single operation. The "
                + "stores work in a scratch folder in the temporary folder (`--root DIR` or "
                + "`ARCHIVIST_BENCHMARK_ROOT=DIR` to measure another file system), removed when the run ends.",
            "",
            "```sh",
        ]
        + commands + [
            "```",
            "",
            "A run writes `results.json`, a chart per table, this page and the short page `Benchmarks.md` "
                + "into `.build/benchmarks/`, outside the tracked files; `--output DIR` writes them into `DIR`, "
                + "`--update-docs` into `docs/benchmarks/` and `docs/Benchmarks.md`, `--no-output` nowhere. "
                + "`--report FILE` writes the charts and the pages from a `results.json` without measuring.",
        ]

    /// How to run the benchmarks, one command a line, for both pages.
    private static let commands = [
        "swift run -c release ArchivistBenchmarks                        # every suite, into .build/benchmarks",
        "swift run -c release ArchivistBenchmarks --suite cache-manager  # some suites (--suite repeats)",
        "swift run -c release ArchivistBenchmarks --quick --no-output    # smoke test, writes nothing",
        "swift run -c release ArchivistBenchmarks --update-docs          # every suite, into docs/",
        "swift run -c release ArchivistBenchmarks --report docs/benchmarks/results.json --update-docs  # the pages again, not measuring",
    ]

    private static let comparing = [
        "```sh",
        "Benchmarks/compare-with-baseline.sh COMMIT [ROUNDS] [SUITE...]",
        "Benchmarks/compare-with-baseline.sh HEAD~1 3 cache-manager memory-cache",
        "```",
        "",
        "Times move with the machine's load, so compare two builds on one machine in one sitting. The script "
            + "checks COMMIT out in `.build-baseline/source`, builds it and the working tree in release "
            + "mode, runs the two executables alternately ROUNDS times (3 unless given) on the suites named (all "
            + "when none), and prints each case's best median on both sides and their ratio, new / base: above 1 "
            + "the working tree is slower. `ArchivistBenchmarks --compare BASE.json[,…] NEW.json[,…]` prints that "
            + "table from any `results.json` files.",
    ]

    /// Headings of the groups of suites (a suite's name up to its first dot).
    private static let headings = [
        "archiving": "Archiving: the native format against Foundation's encoders",
        "keyed": "Keyed archives: ArchivistKeyedArchive against NSKeyedArchiver",
        "keyed-declaration": "NSSecureCoding classes in a CacheManager",
        "records": "RecordStore against rewriting a property list",
        "stores": "PlistStore against PropertyListSerialization",
        "memory-cache": "MemoryCache against a locked Dictionary",
        "cache": "CacheManager against raw POSIX, NSCache and a locked Dictionary",
        "shapes": "A fresh cache against a hand-written one (MD5 file names, JSON, no index)",
        "crc32c": "CRC32C: the CPU's instructions against software",
        "processes": "Several processes on one root",
        "scale": "A very large cache: open, memory, flush and disk use from 10,000 to 1,000,000 entries",
    ]

    private static func describe(_ info: RunInfo?) -> [String] {
        let unknown = "not recorded"
        guard let info else { return ["This `results.json` does not record the machine or build it was measured on."] }
        var machine = info.cpu ?? "CPU \(unknown)"
        machine += info.cores.map { ", \($0) cores" } ?? ""
        machine += info.memoryBytes.map { String(format: ", %.1f GiB of memory", Double($0) / Double(1 << 30)) } ?? ""
        var commit = info.commit.map { "`\($0)`" } ?? "unknown"
        if info.localChanges == true { commit += " with uncommitted changes to the sources" }
        var mode = info.quick.map { $0 ? "quick (`--quick`)" : "full" } ?? unknown
        let suites = suiteArguments(info.arguments ?? [])
        if !suites.isEmpty { mode += "; suites matching " + suites.map { "`\($0)`" }.joined(separator: ", ") }
        return [
            "- Machine: \(machine); system: \(info.os ?? unknown)",
            "- Toolchain: \(info.swift ?? unknown); commit: \(commit)",
            "- Date: \(info.date ?? unknown); mode: \(mode); duration: \(info.durationSeconds.map(formatDuration) ?? unknown)",
        ]
    }

    /// Two significant decimals where they matter: 0.94×, 23.4×, 8539×.
    private static func formatRatio(_ ratio: Double) -> String {
        String(format: ratio >= 100 ? "%.0f×" : ratio >= 10 ? "%.1f×" : "%.2f×", ratio)
    }

    private static func formatDuration(_ seconds: Double) -> String {
        seconds < 60 ? String(format: "%.0f s", seconds) : "\(Int(seconds) / 60) min \(Int(seconds) % 60) s"
    }

    private static func suiteArguments(_ arguments: [String]) -> [String] {
        zip(arguments, arguments.dropFirst()).compactMap { $0 == "--suite" ? $1 : nil }
    }

    private static func row(_ result: BenchmarkResult, workload: String, in run: BenchmarkRun) -> String {
        // Rows that measure memory, not time, record zero times and their figure as bytes.
        let timed = result.medianNS != 0 || result.minNS != 0 || result.bytes == nil
        var speed = ""
        if let (ratio, baseline) = run.speedRatio(of: result) {
            speed = baseline == result.name ? "baseline" : "\(formatRatio(ratio)) (\(baseline))"
        }
        if let note = result.note { speed += (speed.isEmpty ? "" : "; ") + note }
        let cells = [
            workload, result.name, timed ? Harness.format(result.medianNS) : "—",
            timed ? Harness.format(result.minNS) : "—",
            result.bytes.map(Harness.formatBytes) ?? "", speed,
        ]
        return "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
    }

    /// The `scale` suite's results as one table: a row per cache size (a result's name up to
    /// `": "`), a column per measurement (its suite, and what follows `": "` in the name), each
    /// cell the median (or the bytes) and the row's note (a target, a worst case); then what
    /// each column measures.
    /// One table rather than one per measurement: those would be a list of near-identical tables.
    ///
    /// - Parameter only: The suites whose columns to show (every one when `nil`).
    private static func sizeTable(_ suites: [String], in run: BenchmarkRun, only: Set<String>? = nil) -> [String] {
        var sizes: [String] = []
        var columns: [(key: String, suite: String, label: String)] = []
        var cells: [String: String] = [:]
        for suite in suites where only?.contains(suite) ?? true {
            for result in run.results where result.suite == suite {
                let parts = result.name.components(separatedBy: ": ")
                let size = parts[0]
                let detail = parts.dropFirst().joined(separator: ": ")
                let key = suite + "|" + detail
                let label = String(suite.drop { $0 != "." }.dropFirst()) + (detail.isEmpty ? "" : ": " + detail)
                if !sizes.contains(size) { sizes.append(size) }
                if !columns.contains(where: { $0.key == key }) { columns.append((key, suite, label)) }
                let timed = result.medianNS != 0 || result.minNS != 0 || result.bytes == nil
                var cell = timed ? Harness.format(result.medianNS) : result.bytes.map(Harness.formatBytes) ?? ""
                if let note = result.note { cell += " (\(note))" }
                cells[size + "||" + key] = cell
            }
        }
        func line(_ items: [String]) -> String {
            "| " + items.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
        }
        var lines = [
            line(["entries × value"] + columns.map(\.label)),
            "|:--|" + String(repeating: "--:|", count: columns.count),
        ]
        for size in sizes { lines.append(line([size] + columns.map { cells[size + "||" + $0.key] ?? "" })) }
        lines.append("")
        var described: Set<String> = []
        for column in columns where described.insert(column.suite).inserted {
            let name = String(column.suite.drop { $0 != "." }.dropFirst())
            lines.append("- **\(name)**: \(run.table(of: column.suite)?.title ?? column.suite)")
        }
        return lines
    }

    /// The suites grouped by their name up to the first dot, groups and suites in the order measured.
    private static func groups(of run: BenchmarkRun) -> [(name: String, suites: [String])] {
        var groups: [(name: String, suites: [String])] = []
        for suite in run.results.map(\.suite) {
            let name = String(suite.prefix { $0 != "." })
            if let index = groups.firstIndex(where: { $0.name == name }) {
                if !groups[index].suites.contains(suite) { groups[index].suites.append(suite) }
            } else {
                groups.append((name, [suite]))
            }
        }
        return groups
    }

    /// `url`'s path relative to `folder` when it lies inside it, else its whole path.
    static func relativePath(of url: URL, from folder: URL) -> String {
        let path = url.standardizedFileURL.path
        let base = folder.standardizedFileURL.path
        return path.hasPrefix(base + "/") ? String(path.dropFirst(base.count + 1)) : path
    }

    /// `url`'s path relative to the working directory when it lies inside it.
    static func displayPath(_ url: URL) -> String {
        relativePath(of: url, from: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true))
    }
}
