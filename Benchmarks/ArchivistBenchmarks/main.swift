import Foundation

// ArchivistBenchmarks: compares Archivist with Foundation's encoders and raw file I/O.
//
//   swift run -c release ArchivistBenchmarks [--quick] [--suite NAME]... [--output DIR | --update-docs | --no-output] [--root DIR]
//   swift run -c release ArchivistBenchmarks --report RESULTS.json [--output DIR | --update-docs]
//   swift run -c release ArchivistBenchmarks --compare BASE.json[,...] NEW.json[,...]
//
// --root DIR (or ARCHIVIST_BENCHMARK_ROOT=DIR) puts the disk suites' scratch folder in DIR, to
// measure another file system.
// Each suite prints a table with ratios to its baseline. A run writes results.json, a chart per
// table, tables.md (every table) and the short page Benchmarks.md made from them into
// .build/benchmarks (relative to the working directory), outside the tracked files; --output DIR
// writes them into DIR, --update-docs into the committed docs/benchmarks and docs/Benchmarks.md,
// --no-output nowhere. --report makes the charts and pages from an existing results.json
// without measuring.

if CommandLine.arguments.count > 2 && CommandLine.arguments[1] == "--process-child" {
    runProcessBenchmarkChild(Array(CommandLine.arguments.dropFirst(2)))  // the `processes` suite's second process
}
if CommandLine.arguments.count > 2 && CommandLine.arguments[1] == "--scale-child" {
    runScaleBenchmarkChild(Array(CommandLine.arguments.dropFirst(2)))  // the `scale` suite's fresh processes
}
var options = Harness.Options()
var report: String?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick": options.quick = true
    case "--suite":
        guard let name = arguments.popFirst() else {
            print("--suite needs a name")
            exit(2)
        }
        options.suites.append(name)
    case "--compare":
        guard let base = arguments.popFirst(), let new = arguments.popFirst() else {
            print("--compare needs two comma-separated lists of results.json files: baseline, then new")
            exit(2)
        }
        do { try ResultComparison.run(base: base, new: new) } catch {
            print("cannot compare: \(error)")
            exit(1)
        }
        exit(0)
    case "--report":
        guard let path = arguments.popFirst() else {
            print("--report needs a results.json file")
            exit(2)
        }
        report = path
    case "--no-output":
        options.outputDirectory = nil
        options.pageFile = nil
    case "--update-docs":
        options.updatingDocs()
    case "--output":
        guard let path = arguments.popFirst() else {
            print("--output needs a folder")
            exit(2)
        }
        options.outputDirectory = URL(fileURLWithPath: path, isDirectory: true)
        options.pageFile = URL(fileURLWithPath: path, isDirectory: true).appendingPathComponent("Benchmarks.md")
    case "--root":
        guard let path = arguments.popFirst() else {
            print("--root needs a folder")
            exit(2)
        }
        options.root = URL(fileURLWithPath: path, isDirectory: true)
    case "--help", "-h":
        print(
            "usage: ArchivistBenchmarks [--quick] [--suite NAME]... [--output DIR | --update-docs | --no-output] [--root DIR]"
        )
        print(
            "       ArchivistBenchmarks --report RESULTS.json [--output DIR | --update-docs]   (the page and charts, not measuring)"
        )
        print(
            "       Results go to .build/benchmarks unless --output or --update-docs (docs/Benchmarks.md) says otherwise."
        )
        print(
            "       ArchivistBenchmarks --compare BASE.json[,...] NEW.json[,...]   (see Benchmarks/compare-with-baseline.sh)"
        )
        exit(0)
    default:
        print("unknown argument \(argument); see --help")
        exit(2)
    }
}

if let report {
    guard let directory = options.outputDirectory, let page = options.pageFile else {
        print("--report writes the charts and the page: it cannot be combined with --no-output")
        exit(2)
    }
    do {
        let results = URL(fileURLWithPath: report)
        try BenchmarkPage.write(
            BenchmarkRun.read(from: results),
            page: page,
            chartDirectory: directory,
            results: results,
            command: "swift run -c release ArchivistBenchmarks "
                + CommandLine.arguments.dropFirst().joined(separator: " ")
        )
    } catch {
        print("cannot write the report: \(error)")
        exit(1)
    }
    exit(0)
}

#if DEBUG
// Rendering a report (above) measures nothing, so a debug build may do it; measuring may not.
print("ArchivistBenchmarks measures optimized code: run it with `swift run -c release ArchivistBenchmarks`.")
exit(1)
#else
let started = ContinuousClock.now
do {
    let harness = try Harness(options: options)
    defer { harness.cleanUp() }
    print("ArchivistBenchmarks\(options.quick ? " (quick)" : ""), scratch folder \(harness.scratch.path)")
    for suite in allSuites where harness.wants(suite.name) {
        print("\n== \(suite.name)")
        try suite.run(harness)
    }
    let elapsed = ContinuousClock.now - started
    try harness.writeResults(
        .current(
            quick: options.quick,
            arguments: Array(CommandLine.arguments.dropFirst()),
            duration: Double(elapsed.nanoseconds) / 1e9
        )
    )
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}
#endif
