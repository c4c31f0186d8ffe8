/// A named group of benchmarks; `main.swift` runs every suite the `--suite` filter allows.
struct BenchmarkSuite: Sendable {
    var name: String
    var run: @Sendable (Harness) throws -> Void
}

/// Every suite, in the order they run. Register new suites here.
let allSuites: [BenchmarkSuite] = [
    BenchmarkSuite(name: "archiving.tasks", run: runTaskArchivingBenchmarks),
    BenchmarkSuite(name: "archiving.letters", run: runLetterArchivingBenchmarks),
    BenchmarkSuite(name: "archiving.story", run: runStoryArchivingBenchmarks),
    BenchmarkSuite(name: "archiving.single", run: runSingleModelArchivingBenchmarks),
    BenchmarkSuite(name: "keyed", run: runKeyedArchiveBenchmarks),
    BenchmarkSuite(name: "keyed-declaration", run: runKeyedDeclarationBenchmarks),
    BenchmarkSuite(name: "records", run: runRecordStoreBenchmarks),
    BenchmarkSuite(name: "stores", run: runStoreBenchmarks),
    BenchmarkSuite(name: "memory-cache", run: runMemoryCacheBenchmarks),
    BenchmarkSuite(name: "cache-manager", run: runCacheBenchmarks),
    BenchmarkSuite(name: "cache-memory", run: runMemoryTierBenchmarks),
    BenchmarkSuite(name: "cache-shapes", run: runCacheShapeBenchmarks),
    BenchmarkSuite(name: "cache-blobs", run: runBlobBenchmarks),
    BenchmarkSuite(name: "crc32c", run: runChecksumBenchmarks),
    BenchmarkSuite(name: "processes", run: runProcessBenchmarks),
    BenchmarkSuite(name: "scale", run: runScaleBenchmarks),
]
