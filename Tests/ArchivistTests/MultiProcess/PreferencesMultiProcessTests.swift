// Starts worker processes: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistTestSupport
import Foundation
import Testing
@testable import Archivist

/// `Preferences`' deferred writes across real processes (`ArchivistProcessWorker`'s
/// `preferences-deferred` and `preferences-expect` modes): processes setting different keys
/// at once lose none, whether they flush or leave their sets to the write at exit; a flush
/// is visible to another process at once; a change stream sees another process's change.
@Suite(.timeLimit(.minutes(20))) struct PreferencesMultiProcessTests {
    @Test func twoProcessesSettingDifferentKeysAtOnceLoseNothing() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let children = try [("a-", "flush"), ("b-", "exit")].map { prefix, ending in
            try ChildProcess(worker, ["preferences-deferred", folder.url.path, "Shared", prefix, "300", ending])
        }
        ChildProcess.waitForAll(children)
        let root = try PlistStore(directory: folder.url)["Shared"]
        let missing = ["a-", "b-"].flatMap { prefix in (0..<300).map { "\(prefix)\($0)" } }
            .filter { key in root[key] != .int(Int(key.dropFirst(2))!) }
        #expect(missing.isEmpty, "\(missing.count) keys lost, such as \(missing.prefix(5))")
        #expect(root.count == 600)
    }

    @Test func aFlushIsVisibleToAnotherProcessAtOnce() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url), name: "Shared")
        try preferences.set(31, for: PreferenceKey<Int>("answer", default: -1))
        try preferences.flush()
        let child = try ChildProcess(worker, ["preferences-expect", folder.url.path, "Shared", "answer", "31"])
        ChildProcess.waitForAll([child])
    }

    @Test func aChangeStreamSeesAnotherProcesssChange() async throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url), name: "Shared")
        try preferences.set(1, for: PreferenceKey<Int>("mine", default: -1), durability: .none)
        let changes = preferences.changes(
            for: PreferenceKey<Int>("other-0", default: -1),
            pollingInterval: .milliseconds(500)
        )
        let child = try ChildProcess(
            worker,
            ["preferences-deferred", folder.url.path, "Shared", "other-", "1", "exit"]
        )
        let change = await firstElement(of: changes, within: .seconds(60))
        ChildProcess.waitForAll([child])
        #expect(change == Preferences.Change(keys: ["other-0"], isFromAnotherProcess: true))
        #expect(preferences[PreferenceKey<Int>("other-0", default: -1)] == 0)
        #expect(preferences[PreferenceKey<Int>("mine", default: -1)] == 1)
    }
}
#endif
