import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The change streams of `Preferences` name the file's change signal when they start
/// observing — after the folder's device and inode, as writers do — and poll only where no
/// signal is observed, or where a stream asks for a poll.
@Suite struct PreferencesChangeSignalTests {
    private let count = PreferenceKey<Int>("count", default: 0)

    @Test func aFolderMadeAfterTheOpenIsObservedUnderTheWritersName() throws {
        let folder = try ScratchFolder()
        let prefs = folder.url.appendingPathComponent("prefs", isDirectory: true)
        let preferences = try Preferences(store: PlistStore(directory: prefs))
        try FileManager.default.createDirectory(at: prefs, withIntermediateDirectories: true)
        let stream = preferences.changes()
        defer { withExtendedLifetime(stream) {} }
        let writers = PlistStore.changeSignal(of: preferences.fileURL)
        #expect(writers.isIdentified)
        #expect(preferences.file.observedSignalName == writers.name)
    }

    @MainActor @Test func aStreamStartedBeforeTheFolderExistsPollsUntilItCanObserveTheSignal() async throws {
        let folder = try ScratchFolder()
        let prefs = folder.url.appendingPathComponent("prefs", isDirectory: true)
        let preferences = try Preferences(store: PlistStore(directory: prefs))
        let stream = preferences.changes()
        defer { withExtendedLifetime(stream) {} }
        #expect(preferences.file.observedSignalName == nil)
        #expect(preferences.file.isPolling, "no signal yet: the fallback poll runs")
        try FileManager.default.createDirectory(at: prefs, withIntermediateDirectories: true)
        let name = PlistStore.changeSignal(of: preferences.fileURL).name
        #expect(await eventually { preferences.file.observedSignalName == name }, "the poll observes the signal")
        #expect(await eventually { !preferences.file.isPolling }, "and then stops")
    }

    @Test func byDefaultNoPollRunsWhileTheSignalIsObserved() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        let stream = preferences.changes(for: count)
        defer { withExtendedLifetime(stream) {} }
        #expect(preferences.file.observedSignalName != nil)
        #expect(!preferences.file.isPolling)
    }

    /// A change that raises no signal here: the file rewritten in place through a hard link
    /// in another folder (no writer posts, and `inotify` reports it to that folder's
    /// watchers only).
    @Test func anExplicitIntervalPollsBesideTheSignalAndSeesAChangeWithoutOne() async throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url.appendingPathComponent("prefs", isDirectory: true))
        try store.set(1, forKey: "count", in: "Preferences")
        let preferences = try Preferences(store: store)
        let elsewhere = folder.url.appendingPathComponent("elsewhere", isDirectory: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let alias = elsewhere.appendingPathComponent("alias.plist")
        #expect(link(preferences.fileURL.path, alias.path) == 0)

        let changes = preferences.changes(pollingInterval: .milliseconds(50))
        #expect(preferences.file.observedSignalName != nil)
        #expect(preferences.file.isPolling)
        let data = try PropertyListSerialization.data(fromPropertyList: ["count": 2], format: .xml, options: 0)
        let handle = try FileHandle(forWritingTo: alias)
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: data)
        try handle.close()
        let change = await firstElement(of: changes, within: .seconds(30))
        #expect(change == Preferences.Change(keys: ["count"], isFromAnotherProcess: true))
        #expect(preferences[count] == 2)
    }
}
