import Foundation

// ArchivistBenchmarks: compares Archivist with Foundation's encoders and raw file I/O.
//
//   swift run -c release ArchivistBenchmarks [--quick] [--suite NAME]... [--no-output] [--root DIR]
//   swift run -c release ArchivistBenchmarks --compare BASE.json[,...] NEW.json[,...]
//
// --root DIR (or ARCHIVIST_BENCHMARK_ROOT=DIR) puts the disk suites' scratch folder in DIR, to
// measure another file system.
// Each suite prints a table with ratios to its baseline; all results are written to
// docs/benchmarks/results.json (relative to the working directory) unless --no-output.

#if DEBUG
print("ArchivistBenchmarks measures optimized code: run it with `swift run -c release ArchivistBenchmarks`.")
exit(1)
#else
if CommandLine.arguments.count > 2 && CommandLine.arguments[1] == "--process-child" {
    runProcessBenchmarkChild(Array(CommandLine.arguments.dropFirst(2)))   // the `processes` suite's second process
}
var options = Harness.Options()
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
    case "--no-output": options.outputDirectory = nil
    case "--output":
        guard let path = arguments.popFirst() else {
            print("--output needs a folder")
            exit(2)
        }
        options.outputDirectory = URL(fileURLWithPath: path, isDirectory: true)
    case "--root":
        guard let path = arguments.popFirst() else {
            print("--root needs a folder")
            exit(2)
        }
        options.root = URL(fileURLWithPath: path, isDirectory: true)
    case "--help", "-h":
        print("usage: ArchivistBenchmarks [--quick] [--suite NAME]... [--output DIR | --no-output] [--root DIR]")
        print("       ArchivistBenchmarks --compare BASE.json[,...] NEW.json[,...]   (see Benchmarks/compare-with-baseline.sh)")
        exit(0)
    default:
        print("unknown argument \(argument); see --help")
        exit(2)
    }
}

do {
    let harness = try Harness(options: options)
    defer { harness.cleanUp() }
    print("ArchivistBenchmarks\(options.quick ? " (quick)" : ""), scratch folder \(harness.scratch.path)")
    for suite in allSuites where harness.wants(suite.name) {
        print("\n== \(suite.name)")
        try suite.run(harness)
    }
    try harness.writeResults()
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}
#endif
