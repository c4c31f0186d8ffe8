import Foundation
import Testing

@testable import Archivist

/// `CacheManager.changes(of:)`: this manager's writes at once, another store's (here: a manager
/// on another link to the same folder, as another process would be) within a poll.
@Suite struct CacheChangeTests {
    private func manager(_ dir: URL, via name: String) throws -> CacheManager<ShopCache> {
        try CacheManager<ShopCache>(root: CacheRoot(directory: linkedFolder(dir, name)), user: "u")
    }

    @Test func ownAndOtherStoresChangesOfTheTypeAreReported() async throws {
        try await withTemporaryDirectory { dir in
            let mine = try manager(dir, via: "mine")
            let other = try manager(dir, via: "other")
            var changes = mine.changes(of: .apiStrategy).makeAsyncIterator()

            try await mine.store("a", for: .apiStrategy, parameter: "/a")
            let own = try #require(await changes.next())
            #expect(own.target == .entry(parameter: "/a") && !own.isFromAnotherProcess)

            try await other.store("b", for: .apiStrategy, parameter: "/b")
            let stored = try #require(await changes.next())
            #expect(stored.target == .someEntry && stored.isFromAnotherProcess)

            try await other.store("h", for: .hots)  // another type: not reported
            try await other.removeValue(for: .apiStrategy, parameter: "/b")
            let removed = try #require(await changes.next())
            #expect(removed.target == .someEntry && removed.isFromAnotherProcess)

            try await other.clear(.type(.apiStrategy))
            let cleared = try #require(await changes.next())
            #expect(cleared.target == .allEntries && cleared.isFromAnotherProcess)

            try await mine.removeValue(for: .apiStrategy, parameter: "/a")  // already cleared: no change
            try await mine.clear(.location(.sharedCaches))
            let ownClear = try #require(await changes.next())
            #expect(ownClear.target == .allEntries && !ownClear.isFromAnotherProcess)
        }
    }

    /// How often a manager polls: as configured; else only where a signal is missing.
    @Test func thePollingIntervalIsTheConfiguredOneOrOnlyAFallback() {
        typealias Manager = CacheManager<ShopCache>
        #expect(Manager.pollingInterval(configured: nil, signalsEstablished: true) == nil)
        #expect(Manager.pollingInterval(configured: nil, signalsEstablished: false) == .seconds(1))
        #expect(Manager.pollingInterval(configured: .seconds(30), signalsEstablished: true) == .seconds(30))
        #expect(Manager.pollingInterval(configured: .seconds(30), signalsEstablished: false) == .seconds(30))
        #expect(Manager.Configuration().changePollingInterval == nil)
    }

    @Test func noPollRunsByDefaultWhereTheSignalIsEstablished() throws {
        try withTemporaryDirectory { dir in
            let mine = try manager(dir, via: "quiet")
            let changes = mine.changes(of: .apiStrategy)
            #expect(!mine.isPollingForChanges)
            withExtendedLifetime(changes) {}
        }
    }

    @Test func withoutASignalTheManagerPolls() throws {
        try withTemporaryDirectory { dir in
            let mine = try manager(dir, via: "unsignalled")
            mine.changeHub.refuseSignals()  // as if the system refused them
            let changes = mine.changes(of: .apiStrategy)
            #expect(mine.isPollingForChanges)
            withExtendedLifetime(changes) {}
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func anExplicitIntervalDeliversAChangeWhoseSignalNeverCame() async throws {
        try await withTemporaryDirectory { dir in
            let configuration = CacheManager<ShopCache>.Configuration(changePollingInterval: .milliseconds(20))
            let mine = try CacheManager<ShopCache>(
                root: CacheRoot(directory: linkedFolder(dir, "polled")),
                user: "u",
                configuration: configuration
            )
            mine.changeHub.refuseSignals()
            let other = try manager(dir, via: "writer")
            var changes = mine.changes(of: .apiStrategy).makeAsyncIterator()
            #expect(mine.isPollingForChanges)
            try await other.store("b", for: .apiStrategy, parameter: "/b")
            let change = try #require(await changes.next())
            #expect(change.isFromAnotherProcess)
            let wakeups = mine.changeWakeups
            #expect(wakeups.deliveredByPoll >= 1 && wakeups.signals == 0, "\(wakeups)")
        }
    }
}
