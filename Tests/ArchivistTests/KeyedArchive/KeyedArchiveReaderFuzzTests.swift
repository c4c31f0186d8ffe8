// Fuzzes in an exit test (a child process): macOS and Linux only.
#if os(macOS) || os(Linux)
import Foundation
import Testing
@testable import Archivist
@testable import ArchivistKeyedArchive

/// Mutation fuzzing of the pure-Swift reader in child processes, so a crash fails the test
/// instead of killing the runner. 100,000 seeded cases in a plain build, split over
/// ``shards`` children that run in parallel, each with its own seed; 10,000 under a sanitizer
/// (``Sanitizer/active``), where each case costs several times more and the plain run has
/// already covered the inputs. `ARCHIVIST_READER_FUZZ_CASES` sets the total for a longer run.
@Suite struct KeyedArchiveReaderFuzzTests {
    /// Child processes, one per test argument: Swift Testing runs them side by side.
    static let shards = 4

    /// All cases of the run, over every shard.
    static var cases: Int {
        if let cases = ProcessInfo.processInfo.environment["ARCHIVIST_READER_FUZZ_CASES"].flatMap(Int.init) {
            return cases
        }
        return Sanitizer.active == nil ? 100_000 : 10_000
    }

    /// Shard `shard`'s seed: the committed seed plus the shard, so every shard is reproducible alone.
    static func seed(ofShard shard: Int) -> UInt64 { KeyedArchiveFuzz.seed &+ UInt64(shard) }

    @Test(.needsKeyedArchiveFixtures, arguments: 0..<shards) func seededMutationsGiveTypedAnswers(
        shard: Int
    ) async throws {
        _ = try #require(KeyedArchiveFixtures.directory(), Comment(rawValue: KeyedArchiveFixtures.missingMessage))
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("archivist-reader-fuzz-\(UUID()).log")
            .path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let seed = Self.seed(ofShard: shard)
        let cases = Self.cases / Self.shards + (shard == 0 ? Self.cases % Self.shards : 0)
        let result = await #expect(processExitsWith: .success) {
            [log = log as String, seed = seed as UInt64, cases = cases as Int] in
            KeyedArchiveFuzz.runReader(seeds: [seed], cases: cases, log: log)
        }
        if result == nil {
            Issue.record(
                """
                shard \(shard) (seed \(seed), \(cases) cases) failed; last logged rounds: \(KeyedArchiveFuzz.lastLines(of: log)). \
                Replay a round with KeyedArchiveFuzz.mutation(of:using:) from SplitMix64(seed: \(seed)).
                """
            )
        }
    }
}
#endif
