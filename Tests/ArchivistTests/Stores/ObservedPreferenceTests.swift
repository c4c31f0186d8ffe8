#if canImport(Observation)
import Foundation
import Observation
import Testing
@testable import Archivist

/// `ObservedPreference` follows its key's changes, from this process and from another opener
/// of the file (which these stores treat as another process), and goes away when released.
@Suite struct ObservedPreferenceTests {
    private let count = PreferenceKey<Int>("count", default: 0)
    private let name = PreferenceKey<String>("name", default: "guest")

    /// Preferences in a fresh folder whose file exists, so its change signal can be watched.
    private func openPreferences(in folder: ScratchFolder) throws -> Preferences {
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        try preferences.set(0, for: count, durability: .none)
        return preferences
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func valueFollowsAnotherOpenersWrite() async throws {
        let folder = try ScratchFolder()
        let preferences = try openPreferences(in: folder)
        let model = ObservedPreference(count, in: preferences, pollingInterval: .milliseconds(100))
        #expect(model.value == 0)

        let other = try Preferences(store: PlistStore(directory: folder.url))
        try other.set(7, for: count, durability: .none)
        #expect(await eventually { model.value == 7 })
        try other.set("zoe", for: name, durability: .none)  // another key: the value stays
        #expect(await eventually { preferences[name] == "zoe" })
        #expect(model.value == 7)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func valueFollowsThisProcesssWritesAndWritesThrough() async throws {
        let folder = try ScratchFolder()
        let preferences = try openPreferences(in: folder)
        let model = ObservedPreference(count, in: preferences, pollingInterval: .milliseconds(100))

        model.value = 3
        #expect(model.value == 3 && preferences[count] == 3 && model.lastError == nil)
        try model.set(4)
        #expect(model.value == 4 && preferences[count] == 4)

        try preferences.set(5, for: count)  // straight through the Preferences
        #expect(await eventually { model.value == 5 })
        let twin = ObservedPreference(count, in: preferences, pollingInterval: .milliseconds(100))
        twin.value = 6
        #expect(await eventually { model.value == 6 })

        try model.reset()
        #expect(model.value == 0 && preferences[count] == 0)
        #expect(await eventually { twin.value == 0 })
        try await preferences.flush()
        #expect(try Preferences(store: PlistStore(directory: folder.url))[count] == 0)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func observationTrackingFiresOnAnotherOpenersWrite() async throws {
        let folder = try ScratchFolder()
        let preferences = try openPreferences(in: folder)
        let model = ObservedPreference(count, in: preferences, pollingInterval: .milliseconds(100))
        let fired = Locked(false)
        withObservationTracking {
            _ = model.value
        } onChange: {
            fired.withLock { $0 = true }
        }

        let other = try Preferences(store: PlistStore(directory: folder.url))
        try other.set(9, for: count, durability: .none)
        #expect(await eventually { fired.withLock { $0 } })
        #expect(model.value == 9)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor @Test func aReleasedModelIsDeallocatedAndStopsObserving() async throws {
        let folder = try ScratchFolder()
        let preferences = try openPreferences(in: folder)
        let subscribers = { preferences.file.state.withLock { $0.subscribers.count } }
        weak var released: ObservedPreference<Int>?
        do {
            let model = ObservedPreference(count, in: preferences, pollingInterval: .milliseconds(100))
            released = model
            try preferences.set(1, for: count)
            #expect(await eventually { model.value == 1 })  // the observing task has run
            #expect(subscribers() == 1)
        }
        #expect(await eventually { released == nil }, "the observing task does not keep the model")
        #expect(await eventually { subscribers() == 0 }, "deinit ends the change stream")
        try preferences.set(2, for: count)  // nobody left to tell
        #expect(preferences[count] == 2)
    }
}
#endif
