import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private enum Tint: String, PlistConvertible { case red, blue }

/// Every `Preferences` on one file in a process shares one state, as `UserDefaults` instances
/// do: a set through one is read through every other, and by `PlistStore` reads of the file,
/// as soon as it returns, while the file is still written later. Each test holds the
/// background write (the state's queue suspended) so that the file cannot be what the reads
/// see.
@Suite struct PreferencesSharedStateTests {
    private let firstLogin = PreferenceKey<Bool>("firstLogin", default: false)
    private let count = PreferenceKey<Int>("count", default: 0)

    /// Runs `body` with the background writes of `preferences`' file held, then lets them run.
    private func holdingWrites<R>(of preferences: Preferences, _ body: () throws -> R) rethrows -> R {
        preferences.file.queue.suspend()
        defer { preferences.file.queue.resume() }
        return try body()
    }

    @Test func aFreshInstanceReadsASetAtOnce() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        try holdingWrites(of: preferences) {
            try preferences.set(true, for: firstLogin)  // seed 003: setBool:YES forKey:@"firstLogin"
            #expect(
                try PlistStore(directory: folder.url).snapshot(of: "Preferences").root["firstLogin"] == nil,
                "the file is not written yet"
            )
            let fresh = try Preferences(store: PlistStore(directory: folder.url))
            #expect(fresh[firstLogin])
            #expect(fresh.file === preferences.file)
        }
    }

    @Test func aPreferencesReopenedRightAfterNineTypedSetsReadsEqualValues() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url, format: .binary)
        let preferences = try Preferences(store: store, name: "Settings")
        let flag = PreferenceKey<Bool>("flag", default: false)
        let number = PreferenceKey<Int>("number", default: 0)
        let ratio = PreferenceKey<Double>("ratio", default: 0)
        let title = PreferenceKey<String>("title", default: "")
        let date = PreferenceKey<Date>("date", default: .distantPast)
        let blob = PreferenceKey<Data>("blob", default: Data())
        let list = PreferenceKey<[String]>("list", default: [])
        let table = PreferenceKey<[String: Int]>("table", default: [:])
        let tint = PreferenceKey<Tint>("tint", default: .red)
        let when = Date(timeIntervalSince1970: 1_700_000_000.25)
        try holdingWrites(of: preferences) {
            try preferences.set(true, for: flag)
            try preferences.set(-7, for: number)
            try preferences.set(0.125, for: ratio)
            try preferences.set("小明", for: title)
            try preferences.set(when, for: date)
            try preferences.set(Data([0, 1, 254]), for: blob)
            try preferences.set(["a", "b"], for: list)
            try preferences.set(["x": 1], for: table)
            try preferences.set(.blue, for: tint)
            let reopened = try Preferences(store: PlistStore(directory: folder.url), name: "Settings.plist")
            #expect(reopened[flag] == true)
            #expect(reopened[number] == -7)
            #expect(reopened[ratio] == 0.125)
            #expect(reopened[title] == "小明")
            #expect(reopened[date] == when)
            #expect(reopened[blob] == Data([0, 1, 254]))
            #expect(reopened[list] == ["a", "b"])
            #expect(reopened[table] == ["x": 1])
            #expect(reopened[tint] == .blue)
        }
        try preferences.flush()
        let root = try PlistStore(directory: folder.url).snapshot(of: "Settings").root
        #expect(root.count == 9, "and the file gets them all")
    }

    @Test func anotherInstancesSetIsSeenByTheNextReadAndAfterReload() throws {
        let folder = try ScratchFolder()
        let first = try Preferences(store: PlistStore(directory: folder.url))
        let second = try Preferences(store: PlistStore(directory: folder.url))
        try holdingWrites(of: first) {
            try first.set(3, for: count)
            #expect(second[count] == 3)
            try second.reload()
            #expect(second[count] == 3, "a reload keeps the unwritten set on top")
            try second.removeValue(for: count)
            #expect(first[count] == 0, "a removal is shared too")
        }
    }

    @Test func aPlistStoreReadSeesUnwrittenChanges() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        try store.set("kept", forKey: "other", in: "Preferences")
        try store.set(1, forKey: "gone", in: "Preferences")
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        try holdingWrites(of: preferences) {
            try preferences.set(5, for: count)
            try preferences.removeValue(for: PreferenceKey<Int>("gone", default: 0))
            #expect(try store.value(forKey: "count", in: "Preferences") == .int(5))
            #expect(try store.value(Int.self, forKey: "count", in: "Preferences") == 5)
            #expect(try store["Preferences"] == ["count": .int(5), "other": "kept"])
            #expect(try store.value(forKey: "gone", in: "Preferences") == nil)
            #expect(try store.snapshot(of: "Preferences").root["count"] == nil, "the file is not written yet")
        }
    }

    @Test func twoSpellingsThroughASymbolicLinkShareOneState() throws {
        let folder = try ScratchFolder()
        let real = folder.url.appendingPathComponent("prefs", isDirectory: true)
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let link = folder.url.appendingPathComponent("alias", isDirectory: true)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let direct = try Preferences(store: PlistStore(directory: real))
        let linked = try Preferences(store: PlistStore(directory: link))
        #expect(direct.file === linked.file)
        try holdingWrites(of: direct) {
            try linked.set(9, for: count)
            #expect(direct[count] == 9)
        }
    }

    @Test func aFolderMadeAfterTheFirstOpenKeepsOneState() throws {
        let folder = try ScratchFolder()
        let missing = folder.url.appendingPathComponent("later/prefs", isDirectory: true)
        let first = try Preferences(store: PlistStore(directory: missing))
        try first.set(1, for: count)
        try first.flush()  // makes the folder, the file and its lock file
        try holdingWrites(of: first) {
            try first.set(2, for: count)
            let second = try Preferences(store: PlistStore(directory: missing))
            #expect(second.file === first.file, "found by its path, then by its lock file's identity")
            #expect(second[count] == 2)
        }
    }

    @MainActor @Test func theLastInstanceWritesWhatIsPendingAndReleasesTheState() async throws {
        let folder = try ScratchFolder()
        weak var released: PreferencesFile?
        do {
            let first = try Preferences(store: PlistStore(directory: folder.url))
            let second = try Preferences(store: PlistStore(directory: folder.url))
            released = first.file
            first.file.queue.suspend()
            try first.set(4, for: count)
            try second.set(true, for: firstLogin)
            first.file.queue.resume()
        }
        let root = try PlistStore(directory: folder.url).snapshot(of: "Preferences").root
        #expect(root == ["count": .int(4), "firstLogin": .bool(true)], "the deinitializers wrote the sets")
        #expect(await eventually { released == nil }, "the scheduled write ran and let the state go")
        #expect(try Preferences(store: PlistStore(directory: folder.url))[count] == 4)
    }

    @Test func theBackgroundWriteRunsInsideABackgroundActivity() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        let reasons = Locked<[String]>([])
        let ended = DispatchSemaphore(value: 0)
        preferences.file.activityStarter.withLock {
            $0 = { reason, block in
                reasons.withLock { $0.append(reason) }
                DispatchQueue.global().async {
                    block(false)  // returns once the write is done
                    ended.signal()
                }
            }
        }
        try preferences.set(6, for: count)
        #expect(ended.wait(timeout: .now() + 30) == .success, "the background write started an activity")
        #expect(reasons.withLock { $0 } == ["Archivist: writing preferences"])
        #expect(try PlistStore(directory: folder.url).snapshot(of: "Preferences").root["count"] == .int(6))
    }
}
