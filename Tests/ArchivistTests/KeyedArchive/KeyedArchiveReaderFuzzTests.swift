import Foundation
import Testing
@testable import Archivist
@testable import ArchivistKeyedArchive

/// Mutation fuzzing of the pure-Swift reader in a child process, so a crash fails the test
/// instead of killing the runner. 10,000 seeded cases by default (about 3 s in a debug build;
/// 100,000 took 32 s); set `ARCHIVIST_READER_FUZZ_CASES` for a longer run.
@Suite struct KeyedArchiveReaderFuzzTests {
    static var cases: Int {
        ProcessInfo.processInfo.environment["ARCHIVIST_READER_FUZZ_CASES"].flatMap(Int.init) ?? 10_000
    }

    @Test func seededMutationsGiveTypedAnswers() async throws {
        _ = try #require(KeyedArchiveFixtures.directory(), Comment(rawValue: KeyedArchiveFixtures.missingMessage))
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("archivist-reader-fuzz-\(UUID()).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let result = await #expect(processExitsWith: .success) { [log = log as String] in
            // The child inherits the environment, so it reads the case count itself.
            KeyedArchiveFuzz.runReader(seeds: [KeyedArchiveFuzz.seed], cases: KeyedArchiveReaderFuzzTests.cases, log: log)
        }
        if result == nil {
            Issue.record("child failed; last logged rounds: \(KeyedArchiveFuzz.lastLines(of: log))")
        }
    }
}
