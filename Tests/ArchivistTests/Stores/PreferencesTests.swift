import Foundation
import Testing

@testable import Archivist

private enum Theme: String, PlistConvertible { case light, dark }

extension PreferenceKey where Value == Bool {
    fileprivate static let firstLogin = PreferenceKey("firstLogin", default: false)
}

private enum Keys {
    static let launchCount = PreferenceKey<Int>("launchCount", default: 0)
    static let userName = PreferenceKey<String>("userName", default: "guest")
    static let theme = PreferenceKey<Theme>("theme", default: .light)
    static let recent = PreferenceKey<[String]>("recent", default: [])
    static let window = PreferenceKey<[String: Double]>("window", default: ["w": 800, "h": 600])
    static let lastOpened = PreferenceKey<Date>("lastOpened", default: .distantPast)
}

@Suite struct PreferencesTests {
    @Test func unsetKeysReadTheirDefaults() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        #expect(preferences[.firstLogin] == false)
        #expect(preferences[Keys.userName] == "guest")
        #expect(preferences[Keys.window] == ["w": 800, "h": 600])
        #expect(try preferences.storedValue(for: Keys.launchCount) == nil)
        #expect(!FileManager.default.fileExists(atPath: preferences.fileURL.path), "reading creates no file")
    }

    @Test(arguments: [PlistStore.Format.xml, .binary])
    func setPersistsAcrossInstances(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url, format: format)
        let preferences = try Preferences(store: store, name: "Settings")
        let opened = Date(timeIntervalSince1970: 1_700_000_123)
        try preferences.set(true, for: .firstLogin)
        try preferences.set(3, for: Keys.launchCount)
        try preferences.set("小明", for: Keys.userName)
        try preferences.set(.dark, for: Keys.theme)
        try preferences.set(["a.txt", "b.txt"], for: Keys.recent)
        try preferences.set(opened, for: Keys.lastOpened)
        #expect(preferences[.firstLogin])
        try preferences.flush()  // sets reach the file in the background; flush waits for it
        let reopened = try Preferences(store: PlistStore(directory: folder.url), name: "Settings.plist")
        #expect(reopened[.firstLogin] == true)
        #expect(reopened[Keys.launchCount] == 3)
        #expect(reopened[Keys.userName] == "小明")
        #expect(reopened[Keys.theme] == .dark)
        #expect(reopened[Keys.recent] == ["a.txt", "b.txt"])
        #expect(reopened[Keys.lastOpened] == opened)
        #expect(reopened.fileURL.lastPathComponent == "Settings.plist")
    }

    @Test func wrongTypeReadsTheDefaultButStoredValueThrows() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        try store.write(
            ["firstLogin": "YES", "launchCount": 2.5, "theme": "sepia", "recent": ["a", 1]],
            to: "Preferences"
        )
        let preferences = try Preferences(store: store)
        #expect(preferences[.firstLogin] == false)
        #expect(preferences[Keys.launchCount] == 0)
        #expect(preferences[Keys.theme] == .light, "an unknown raw value reads as the default")
        #expect(preferences[Keys.recent] == [])
        let error = #expect(throws: StoreError.self) { try preferences.storedValue(for: .firstLogin) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.key == "firstLogin")
        #expect(error?.fileURL == preferences.fileURL)
        try preferences.set(true, for: .firstLogin)
        #expect(try preferences.storedValue(for: .firstLogin) == true)
    }

    @Test func removingValuesRestoresDefaults() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        try preferences.set(5, for: Keys.launchCount)
        try preferences.set("amy", for: Keys.userName)
        try preferences.removeValue(for: Keys.launchCount)
        #expect(preferences[Keys.launchCount] == 0)
        #expect(preferences[Keys.userName] == "amy")
        try preferences.removeAll()
        #expect(preferences[Keys.userName] == "guest")
        try preferences.flush()
        #expect(try Preferences(store: PlistStore(directory: folder.url))[Keys.userName] == "guest")
    }

    @Test func firstLaunchSeedsFromTheBundledDefault() throws {
        let folder = try ScratchFolder()
        let defaultURL = try folder.writePlist(["userName": "shipped", "launchCount": 0], named: "Defaults.plist")
        let store = PlistStore(directory: folder.url.appendingPathComponent("Prefs")) { name in
            name == "Preferences" ? defaultURL : nil
        }
        let preferences = try Preferences(store: store)
        #expect(preferences[Keys.userName] == "shipped")
        #expect(FileManager.default.fileExists(atPath: preferences.fileURL.path))
    }

    @Test func corruptFileFailsToOpenUntilRemoved() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        try Data("\u{0}\u{1}garbage".utf8).write(to: try store.fileURL(for: "Preferences"))
        let error = #expect(throws: StoreError.self) { try Preferences(store: store) }
        #expect(error?.code == .corrupt)
        try store.removeFile(named: "Preferences")
        #expect(try Preferences(store: store)[.firstLogin] == false)
    }

    @Test func failedDurableWriteKeepsTheOldValueInMemory() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        let preferences = try Preferences(store: store)
        try preferences.set(1, for: Keys.launchCount, durability: .fileAndFolder)
        try Data("damaged".utf8).write(to: preferences.fileURL)
        let error = #expect(throws: StoreError.self) {
            try preferences.set(2, for: Keys.launchCount, durability: .fileAndFolder)
        }
        #expect(error?.code == .corrupt)
        #expect(preferences[Keys.launchCount] == 1)
    }

    @Test func readsServeOutsideChangesAndWritesMergeThem() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        let preferences = try Preferences(store: store)
        let other = try Preferences(store: PlistStore(directory: folder.url))
        try store.set("outside", forKey: "userName", in: "Preferences")
        #expect(preferences[Keys.userName] == "outside", "a change by another store is read at once")
        try preferences.set(7, for: Keys.launchCount)
        try preferences.flush()
        #expect(other[Keys.launchCount] == 7, "and one by another Preferences, once written")
        #expect(other[Keys.userName] == "outside")
        try store.set("again", forKey: "userName", in: "Preferences")
        try preferences.reload()
        #expect(preferences[Keys.userName] == "again")
        #expect(preferences[Keys.launchCount] == 7)
    }

    @Test(arguments: [PlistStore.Format.xml, .binary])
    func quickSuccessiveChangesOfOneSizeAreAllSeen(format: PlistStore.Format) throws {
        // Same size, same key, one after another within a clock tick: only the stamps'
        // strictly increasing modification times tell the versions apart.
        let folder = try ScratchFolder()
        let writer = try Preferences(store: PlistStore(directory: folder.url, format: format))
        let reader = try Preferences(store: PlistStore(directory: folder.url, format: format))
        for round in 0..<200 {
            try writer.set(round % 10, for: Keys.launchCount, durability: .fileAndFolder)
            #expect(reader[Keys.launchCount] == round % 10)
        }
    }

    @Test func concurrentWritersFromManyTasksAllLand() async throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url, format: .binary))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for index in 0..<20 {
                        try preferences.set(
                            writer * 1_000 + index,
                            for: PreferenceKey<Int>("w\(writer)-\(index)", default: -1)
                        )
                        try preferences.set(index, for: PreferenceKey<Int>("counter-\(writer)", default: -1))
                        _ = preferences[Keys.launchCount]
                    }
                }
            }
            try await group.waitForAll()
        }
        try await preferences.flush()
        let reopened = try Preferences(store: PlistStore(directory: folder.url))
        for candidate in [preferences, reopened] {
            for writer in 0..<8 {
                #expect(candidate[PreferenceKey<Int>("counter-\(writer)", default: -1)] == 19)
                for index in 0..<20 {
                    #expect(candidate[PreferenceKey<Int>("w\(writer)-\(index)", default: -1)] == writer * 1_000 + index)
                }
            }
        }
        #expect(try PlistStore(directory: folder.url)["Preferences"].count == 168)
    }
}
