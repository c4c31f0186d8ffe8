import Foundation

/// `--compare BASE NEW`: compares the results of runs of two builds case by case.
///
/// `BASE` and `NEW` are each a comma-separated list of `results.json` files (of either form
/// ``BenchmarkRun/read(from:)`` reads) written by `--output DIR` runs of the baseline build and of this build, run alternately on one machine
/// (`Benchmarks/compare-with-baseline.sh` does that). For every case both sides measured, it
/// prints the best median of each side (the least disturbed run of a shared machine) and
/// their ratio, new / base: above 1 means this build is slower. Cases only this build has are
/// listed with their best median alone.
enum ResultComparison {
    /// Prints the comparison table; throws when a file cannot be read.
    static func run(base: String, new: String) throws {
        let baseline = try bestMedians(base)
        let current = try bestMedians(new)
        print("| suite | case | base (best median) | new (best median) | new / base |")
        print("|:--|:--|--:|--:|--:|")
        for key in current.keys.sorted(by: { ($0.suite, $0.name) < ($1.suite, $1.name) }) {
            guard let now = current[key] else { continue }
            guard let old = baseline[key], old > 0 else {
                // A case the baseline build does not have: shown, so that ratios within this
                // build (a new reference case) can be read off the same table.
                print("| \(key.suite) | \(key.name) | — | \(Harness.format(now)) | new case |")
                continue
            }
            let ratio = String(format: "%.3f×", Double(now) / Double(old))
            print("| \(key.suite) | \(key.name) | \(Harness.format(old)) | \(Harness.format(now)) | \(ratio) |")
        }
    }

    private struct Key: Hashable {
        var suite: String
        var name: String
    }

    /// The smallest median per case over the files in `list`.
    private static func bestMedians(_ list: String) throws -> [Key: Int64] {
        var best: [Key: Int64] = [:]
        for path in list.split(separator: ",") {
            for result in try BenchmarkRun.read(from: URL(fileURLWithPath: String(path))).results {
                let key = Key(suite: result.suite, name: result.name)
                best[key] = min(best[key] ?? .max, result.medianNS)
            }
        }
        return best
    }
}
