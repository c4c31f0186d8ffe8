import Foundation
import Testing

@testable import Archivist

/// A durable set or removal is reported to this instance's change streams like a deferred
/// one: when it returns, naming its key, not from another process.
@Suite struct PreferencesDurableChangeTests {
    private let count = PreferenceKey<Int>("count", default: 0)

    @Test func aDurableSetAndRemovalAreReported() async throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        let changes = preferences.changes(pollingInterval: nil)
        try preferences.set(7, for: count, durability: .file)
        let set = await firstElement(of: changes, within: .seconds(30))
        #expect(set == Preferences.Change(keys: ["count"], isFromAnotherProcess: false))
        let removals = preferences.changes(for: count, pollingInterval: nil)
        try preferences.removeValue(for: count, durability: .file)
        #expect(
            await firstElement(of: removals, within: .seconds(30))
                == Preferences.Change(keys: ["count"], isFromAnotherProcess: false)
        )
    }
}
