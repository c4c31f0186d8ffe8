// Runs the archivist tool as a process, and an exit test: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistInspection
import Foundation
import Testing
@testable import Archivist

/// `archivist inspect` on every NSKeyedArchiver fixture (archives written by Foundation on
/// Apple platforms and Linux, and broken ones), and on every hostile input the reader's fuzz
/// tests make: an answer every time, never a crash or a hang.
@Suite struct InspectHostileInputTests {
    @Test(.needsKeyedArchiveFixtures, arguments: KeyedArchiveFixtures.expectations.map(\.path))
    func everyFixtureInspectsAsAKeyedArchiveOrShowsWhyNot(path: String) throws {
        let directory = try #require(
            KeyedArchiveFixtures.directory(),
            Comment(rawValue: KeyedArchiveFixtures.missingMessage)
        )
        let file = directory.appendingPathComponent(path).path
        let run = try ToolRun(["inspect", file, "--json"])
        #expect(run.status == 0 || run.status == 1, "\(run.errors)")
        let inspection = try run.object()
        let kind = try inspection.member("kind", as: String.self)
        let damage = try inspection.member("damage", as: [String].self)
        #expect(["keyed archive", "property list"].contains(kind))
        #expect(run.status == (damage.isEmpty ? 0 : 1))
        // A damaged archive still shows its property list, so a person can see why.
        #expect(!(try inspection.member("nodes", as: [Any].self)).isEmpty)
        let expectation = try #require(KeyedArchiveFixtures.expectations.first { $0.path == path }).outcome
        if case .decodes = expectation {
            #expect(kind == "keyed archive")
            #expect(damage.isEmpty)
        }
        let text = try ToolRun(["inspect", file])
        #expect(text.status == run.status)
        #expect(text.output.hasPrefix(file + ": "))
    }

    @Test(.needsKeyedArchiveFixtures) func archivesWrittenOnApplePlatformsShowTheirObjects() throws {
        let directory = try #require(
            KeyedArchiveFixtures.directory(),
            Comment(rawValue: KeyedArchiveFixtures.missingMessage)
        )
        let run = try ToolRun(["inspect", directory.appendingPathComponent("fq/recentapps.sfl2").path])
        #expect(run.status == 0)
        #expect(run.output.contains("NSKeyedArchiver archive (binary property list)"))
        #expect(run.output.contains("root: @1 NSDictionary dictionary, 2 entries"))
        #expect(run.output.contains("\"Name\": @14 \"Terminal\""))
        #expect(run.output.contains("\"visibility\": @11 0"))
        #expect(run.output.contains("\"visibility\": 0 (shared @11)"))  // one NSNumber object, referenced ten times
        #expect(run.output.contains("\"Bookmark\": @15 data, 680 bytes: 626f6f6ba8020000"))

        let note = try ToolRun(["inspect", directory.appendingPathComponent("rust-nskeyedunarchiver/note.plist").path])
        #expect(note.output.contains("root: @1 Note < NSObject (instance)"))
        #expect(note.output.contains("title: @2 \"Some cool title\""))
    }

    /// Shards run side by side, each in a child process with its own seed.
    static let shards = 4

    @Test(.needsKeyedArchiveFixtures, arguments: 0..<shards) func hostileInputsNeverCrashInspectOrConvert(
        shard: Int
    ) async throws {
        _ = try #require(KeyedArchiveFixtures.directory(), Comment(rawValue: KeyedArchiveFixtures.missingMessage))
        let cases = Sanitizer.active == nil ? 10_000 : 1_000
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("archivist-inspect-fuzz-\(UUID()).log")
            .path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let seed = KeyedArchiveFuzz.seed &+ 0x1000 &+ UInt64(shard)
        let result = await #expect(processExitsWith: .success) {
            [log = log as String, seed = seed as UInt64, cases = cases as Int, shard = shard as Int] in
            InspectionFuzz.run(seed: seed, cases: cases, truncations: shard == 0, log: log)
        }
        if result == nil {
            Issue.record(
                "shard \(shard) (seed \(seed)) failed; last logged inputs: \(KeyedArchiveFuzz.lastLines(of: log))"
            )
        }
    }
}
#endif
