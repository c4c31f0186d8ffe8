// Starts worker processes and the archivist tool: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistTestSupport
import Foundation
import Testing
@testable import Archivist

/// The same cache types as the worker's `statistics-script` mode (Tests/ProcessWorker).
private enum StatisticsCache: String, CacheType {
    case notes, drafts
    var location: CacheLocation { self == .notes ? .sharedCaches : .userCaches }
}

/// Statistics counted by several processes add up in the root's shared file: what each
/// process did, summed exactly, as the library and the `archivist` tool read it.
@Suite struct CacheStatisticsMultiProcessTests {
    /// One process after the other: no commit of one races the other's, so each read is
    /// served where the script says, and the split between memory and disk is exact too.
    @Test func twoProcessesOneAfterTheOtherCountExactly() throws {
        let folder = try ScratchFolder()
        let root = folder.url.appendingPathComponent("root")
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        for _ in 0..<2 { ChildProcess.waitForAll([try ChildProcess(worker, ["statistics-script", root.path, "3"])]) }
        let cache = try CacheManager<StatisticsCache>(root: CacheRoot(directory: root), user: "worker")
        for type in [StatisticsCache.notes, .drafts] {
            let counts = cache.statistics(of: type)
            #expect(counts.memoryHits == 2 * 3 * 6, "\(type)")
            #expect(counts.diskHits == 0, "\(type)")
            #expect(counts.bytesRead == 0, "\(type)")
            #expect(counts.misses == 2 * 3, "\(type)")
            #expect(counts.expiredReads == 2 * 3, "\(type)")
            #expect(counts.stores == 2 * 3 * 4, "\(type)")
            #expect(counts.removals == 2 * 3, "\(type)")
        }
    }

    @Test func twoProcessesScriptedCountsAddUp() throws {
        let folder = try ScratchFolder()
        let root = folder.url.appendingPathComponent("root")
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let rounds = 5
        let workers = try (0..<2).map { _ in try ChildProcess(worker, ["statistics-script", root.path, String(rounds)])
        }
        ChildProcess.waitForAll(workers)

        let cache = try CacheManager<StatisticsCache>(root: CacheRoot(directory: root), user: "worker")
        for type in [StatisticsCache.notes, .drafts] {
            let counts = cache.statistics(of: type)
            let perProcess = UInt64(rounds)
            #expect(counts.stores == 2 * perProcess * 4, "\(type)")
            // Which tier serves a read is the one thing timing decides across processes: a
            // write that races another process's commit does not keep its value in memory,
            // so the next read of it decodes the file. How many reads were served is exact.
            #expect(counts.hits == 2 * perProcess * 6, "\(type)")
            #expect((counts.bytesRead > 0) == (counts.diskHits > 0), "\(type)")
            #expect(counts.misses == 2 * perProcess, "\(type)")
            #expect(counts.expiredReads == 2 * perProcess, "\(type)")
            #expect(counts.removals == 2 * perProcess, "\(type)")
            #expect(counts.errorCount == 0, "\(type)")
            #expect(counts.bytesWritten > 0, "\(type)")
            #expect(counts.hitRate == 0.75, "\(type)")
        }
        // Every file either process wrote counts once in bytesWritten: the entries left on disk
        // are a part of it.
        #expect(cache.statistics.total.bytesWritten > UInt64(cache.totalSize))

        let run = try ToolRun(["stats", root.path, "--json"])
        #expect(run.status == 0)
        let total = try run.object().member("total", as: [String: Any].self)
        let library = cache.statistics.total
        #expect(try total.int("memoryHits") == Int(library.memoryHits))
        #expect(try total.int("stores") == Int(library.stores))
        #expect(try total.int("bytesWritten") == Int(library.bytesWritten))
        #expect(try total.int("reads") == Int(library.reads))
    }
}
#endif
