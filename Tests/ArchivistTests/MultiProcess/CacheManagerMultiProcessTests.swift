// Starts worker processes: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistTestSupport
import Foundation
import Testing
@testable import Archivist
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Several real processes (`ArchivistProcessWorker`'s `cache-*` modes) on one cache root.
@Suite struct CacheManagerMultiProcessTests {
    /// Runs the worker in `mode` and returns the child.
    static func spawn(_ mode: String, _ arguments: [String]) throws -> ChildProcess {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        return try ChildProcess(worker, [mode] + arguments)
    }

    /// A writer's in-flight temporary survives another process's rescan of the root: each
    /// temporary names its owner, and a sweep deletes only those of dead processes. (Before
    /// owner-aware names a rescan deleted every temporary, and the writer's rename failed with
    /// ENOENT about once per 300–500 stores.)
    @Test func aRescanInAnotherProcessNeverDeletesAWritersTemporary() throws {
        let folder = try ScratchFolder()
        let root = folder.file("root").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let writer = try Self.spawn("cache-write", [root, "0", "7", "1500", "64", folder.file("progress-0").path])
        let rescanner = try Self.spawn("cache-reopen", [root, "150"])
        ChildProcess.waitForAll([writer, rescanner])
        ChildProcess.waitForAll([try Self.spawn("cache-check", [root, "1", "64", folder.file("progress-0").path])])
    }

    /// Two writers on one root, then a fresh process: every committed write is there, sizes
    /// equal a walk of the files, `contains` is exact. (Before the shared journal, each process
    /// saved its own size index over the other's: 373 entries / 1.24 MB for 682 files /
    /// 2.23 MB, and `contains` wrong for 309 of 1,000 keys.)
    @Test func twoWritersLeaveExactSizesAndContainsForAFreshProcess() throws {
        let folder = try ScratchFolder()
        let root = folder.file("root").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let progress = (0..<2).map { folder.file("progress-\($0)").path }
        let writers = try (0..<2).map { w in
            try Self.spawn("cache-write", [root, String(w), String(100 + w), "600", "128", progress[w]])
        }
        ChildProcess.waitForAll(writers)
        ChildProcess.waitForAll([try Self.spawn("cache-check", [root, "2", "128"] + progress)])
    }

    /// Three writers and two readers on one root at once: readers never see a torn value or
    /// one older than what its writer had committed before the read began (the memory tier's
    /// bound), and a fresh process then finds every committed write, exact sizes and
    /// `contains`, and no temporary.
    @Test func writersAndReadersOnOneRootLoseNothingAndReadNothingStale() throws {
        let folder = try ScratchFolder()
        let root = folder.file("root").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let progress = (0..<3).map { folder.file("progress-\($0)").path }
        for path in progress { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let writers = try (0..<3).map { w in
            try Self.spawn("cache-write", [root, String(w), String(200 + w), "500", "64", progress[w]])
        }
        let readers = try (0..<2).map { _ in try Self.spawn("cache-read", [root, "3", "64", "1500"] + progress) }
        ChildProcess.waitForAll(writers + readers)
        ChildProcess.waitForAll([try Self.spawn("cache-check", [root, "3", "64"] + progress)])
    }

    /// `ARCHIVIST_XPROCESS_KILLS` sets the number of kills (120 by default).
    static let kills = ProcessInfo.processInfo.environment["ARCHIVIST_XPROCESS_KILLS"].flatMap(Int.init) ?? 120

    /// One writer is killed with SIGKILL at random moments and restarted, again and again, while
    /// two others and a reader go on: the survivors never fail (no lost temporary, no wedged
    /// lock), and a fresh process finds every committed write (or the killed one's in-flight
    /// one), exact sizes and `contains`, and no temporary.
    @Test func killingOneWriterRepeatedlyWhileOthersGoOnLosesNothing() throws {
        let folder = try ScratchFolder()
        let root = folder.file("root").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let progress = (0..<3).map { folder.file("progress-\($0)").path }
        for path in progress { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        // Writers 0 and 1 go on throughout (enough operations to outlast the kills).
        let steady = try (0..<2).map { w in
            try Self.spawn(
                "cache-write",
                [root, String(w), String(300 + w), String(40 * Self.kills), "64", progress[w]]
            )
        }
        var rng = SplitMix64(seed: 0xDEAD)
        for round in 0..<Self.kills {
            let victim = try Self.spawn("cache-write", [root, "2", String(1_000 + round), "0", "64", progress[2]])
            usleep(UInt32.random(in: 2_000..<40_000, using: &rng))
            let status = victim.kill()
            if status & 0x7F != SIGKILL {
                Issue.record("round \(round): the victim ended by itself, wait status \(status)")
                break
            }
        }
        let reader = try Self.spawn("cache-read", [root, "3", "64", "300"] + progress)
        ChildProcess.waitForAll(steady + [reader])
        // The last incarnation's pending operation is settled by the checker's rules.
        ChildProcess.waitForAll([try Self.spawn("cache-check", [root, "3", "64"] + progress)])
    }
}
#endif
