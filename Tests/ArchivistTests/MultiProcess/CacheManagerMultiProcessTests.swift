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
        let folder = try StoreScratchFolder()
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
        let folder = try StoreScratchFolder()
        let root = folder.file("root").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let progress = (0..<2).map { folder.file("progress-\($0)").path }
        let writers = try (0..<2).map { w in
            try Self.spawn("cache-write", [root, String(w), String(100 + w), "600", "128", progress[w]])
        }
        ChildProcess.waitForAll(writers)
        ChildProcess.waitForAll([try Self.spawn("cache-check", [root, "2", "128"] + progress)])
    }
}
