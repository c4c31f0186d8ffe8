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

            try await other.store("h", for: .hots)                    // another type: not reported
            try await other.removeValue(for: .apiStrategy, parameter: "/b")
            let removed = try #require(await changes.next())
            #expect(removed.target == .someEntry && removed.isFromAnotherProcess)

            try await other.clear(.type(.apiStrategy))
            let cleared = try #require(await changes.next())
            #expect(cleared.target == .allEntries && cleared.isFromAnotherProcess)

            try await mine.removeValue(for: .apiStrategy, parameter: "/a")   // already cleared: no change
            try await mine.clear(.location(.sharedCaches))
            let ownClear = try #require(await changes.next())
            #expect(ownClear.target == .allEntries && !ownClear.isFromAnotherProcess)
        }
    }
}
