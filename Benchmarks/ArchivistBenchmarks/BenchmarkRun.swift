import Foundation

/// What one run of the benchmarks leaves in `results.json`: every measured case, the tables the
/// run printed (which case each row is compared with), and the machine and build it ran on.
///
/// The page and its charts are generated from this alone (``BenchmarkPage``), so `--report FILE`
/// rebuilds them without measuring again.
///
/// ``read(from:)`` also reads a bare array of results, which is all `--compare` needs; a page
/// made from one has no ratios and says its run is not recorded.
struct BenchmarkRun: Codable {
    /// The machine, toolchain and commit the run measured; `nil` when not recorded.
    var run: RunInfo?
    /// The tables the run printed, in order.
    var tables: [BenchmarkTable]
    /// Every measured case, in the order measured.
    var results: [BenchmarkResult]

    /// Reads a `results.json`, in either form.
    static func read(from url: URL) throws -> BenchmarkRun {
        let data = try Data(contentsOf: url)
        if let results = try? JSONDecoder().decode([BenchmarkResult].self, from: data) {
            return BenchmarkRun(run: nil, tables: [], results: results)
        }
        return try JSONDecoder().decode(BenchmarkRun.self, from: data)
    }

    /// Writes the run as `results.json` in `directory`; returns the file's URL.
    func write(into directory: URL) throws -> URL {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let url = directory.appendingPathComponent("results.json")
        try encoder.encode(self).write(to: url)
        return url
    }

    /// The table that `suite`'s rows belong to, if the run printed one.
    func table(of suite: String) -> BenchmarkTable? { tables.first { $0.suite == suite } }

    /// How many times faster `result` is than the case its table compares it with (above 1 is
    /// faster), and that case's name; `nil` when it has no baseline or either time is zero.
    func speedRatio(of result: BenchmarkResult) -> (ratio: Double, baseline: String)? {
        guard let name = table(of: result.suite)?.baselines[result.name],
            let base = results.first(where: { $0.suite == result.suite && $0.name == name }),
            base.medianNS > 0, result.medianNS > 0
        else { return nil }
        return (Double(base.medianNS) / Double(result.medianNS), name)
    }

    /// The chart of a group of suites (a suite's name up to its first dot): a section per table,
    /// with every row's ratio to its baseline except the baselines' own.
    func chartSections(ofGroup group: String) -> [BenchmarkChart.Section] {
        // The `scale` tables compare a size with a smaller one of the same code — how a cost
        // grows with the entries, not one way of doing a job against another — so their
        // ratios are not bars of a chart (the page lists them).
        guard group != "scale" else { return [] }
        return tables.filter { $0.suite.prefix { $0 != "." } == group }.map { table in
            BenchmarkChart.Section(
                heading: table.title,
                bars: results.filter { $0.suite == table.suite }.compactMap { result in
                    guard let (ratio, baseline) = speedRatio(of: result), baseline != result.name else { return nil }
                    return BenchmarkChart.Bar(label: "\(result.name) vs \(baseline)", ratio: ratio)
                }
            )
        }
    }
}

/// A table the run printed: the suite whose results are its rows, its title (what one sample
/// does), and for each row the case it is compared with.
struct BenchmarkTable: Codable {
    var suite: String
    var title: String
    /// Case name → the name of the case it is compared with (itself for the baseline row).
    var baselines: [String: String]
}
