import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// Change streams across real processes: another process's write wakes a subscriber through
/// its change signal, with no poll running; and with no writer a subscribed manager does not
/// wake at all.
@Suite(.timeLimit(.minutes(20))) struct ChangeSignalMultiProcessTests {
    /// The worker's cache type (`WorkerCache` in Tests/ProcessWorker): the same name and
    /// location, so the same folder.
    enum SignalCache: String, CacheType {
        case items
        var location: CacheLocation { .sharedCaches }
    }

    private func openCache(_ root: URL) throws -> CacheManager<SignalCache> {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return try CacheManager<SignalCache>(root: CacheRoot(directory: root))
    }

    // Starts worker processes: macOS and Linux only.
    #if os(macOS) || os(Linux)
    @Test func anotherProcessesStoreArrivesBySignalNotByThePoll() async throws {
        let folder = try ScratchFolder()
        let root = folder.file("root")
        let cache = try openCache(root)
        // Only a signal can deliver: with the signal established, no poll runs by default.
        let changes = cache.changes(of: .items)
        #expect(!cache.isPollingForChanges)
        let writer = try CacheManagerMultiProcessTests.spawn("cache-store", [root.path, "p", "from the worker"])
        let change = await firstElement(of: changes, within: .seconds(60)) { $0.isFromAnotherProcess }
        ChildProcess.waitForAll([writer])
        #expect(change?.target == .someEntry)
        let wakeups = cache.changeWakeups
        #expect(wakeups.deliveredBySignal >= 1 && wakeups.deliveredByPoll == 0 && wakeups.polls == 0)
        #expect(try await cache.value(String.self, for: .items, parameter: "p") == "from the worker")
    }
    #endif

    @Test func withoutWritersASubscribedManagerDoesNotWake() async throws {
        let folder = try ScratchFolder()
        let cache = try openCache(folder.file("root"))
        let changes = cache.changes(of: .items)
        #expect(!cache.isPollingForChanges)  // the signal is established: no timer
        // A measurement window, not a wait for an event: nothing may wake the manager in it.
        // The poll that ran every 50 ms while anyone subscribed looked 12 times in 600 ms.
        try await Task.sleep(for: .milliseconds(600))
        let wakeups = cache.changeWakeups
        #expect(wakeups.signals == 0 && wakeups.polls == 0, "\(wakeups)")
        withExtendedLifetime(changes) {}
    }

    // Starts worker processes: macOS and Linux only.
    #if os(macOS) || os(Linux)
    @Test func anotherProcessesRecordArrivesWithoutPolling() async throws {
        let folder = try ScratchFolder()
        let store = try RecordStore<WorkerRecord>(directory: folder.url, configuration: .init(durability: .none))
        let changes = store.changes(pollingInterval: nil)  // signals alone
        let writer = try CacheManagerMultiProcessTests.spawn("records-upsert", [folder.url.path, "signal", "1"])
        let change = await firstElement(of: changes, within: .seconds(60)) { $0.isFromAnotherProcess }
        ChildProcess.waitForAll([writer])
        #expect(change?.upserted == ["signal-0"])
        #expect(store.contains(id: "signal-0"))
    }
    #endif
}
