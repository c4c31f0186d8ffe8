import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `Preferences`' default writes: memory at once, the file shortly after in one coalesced
/// background write; `flush()`, durable sets, failures kept for the next call, change streams.
@Suite struct PreferencesDeferredWriteTests {
    private let count = PreferenceKey<Int>("count", default: 0)
    private let name = PreferenceKey<String>("name", default: "guest")

    @Test func aSetIsReadAtOnceAndReachesTheFileWithoutAFlush() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        try preferences.set(42, for: count)
        #expect(preferences[count] == 42)
        #expect(try preferences.storedValue(for: count) == 42)
        let other = try Preferences(store: PlistStore(directory: folder.url))
        let deadline = ContinuousClock.now + .seconds(30)  // the bound is ~20 ms; the machine may be busy
        while other[count] != 42 && ContinuousClock.now < deadline { usleep(2_000) }
        #expect(other[count] == 42, "the background write reached the file")
    }

    @Test func manySetsCoalesceIntoFewWrites() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url, format: .binary))
        for index in 0..<1_000 {
            try preferences.set(index, for: PreferenceKey<Int>("key\(index % 50)", default: -1))
            try preferences.set(index, for: count)
        }
        try preferences.flush()
        let writes = preferences.fileWrites
        #expect(writes >= 1)
        #expect(writes < 100, "2,000 sets made \(writes) writes")
        let root = try PlistStore(directory: folder.url)["Preferences"]
        #expect(root["count"] == .int(999))
        #expect(root.count == 51)
        #expect(root["key49"] == .int(999))
    }

    @Test func flushMakesChangesVisibleToASecondPreferences() async throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        let other = try Preferences(store: PlistStore(directory: folder.url))
        try preferences.set(5, for: count)
        try preferences.set("amy", for: name)
        try await preferences.flush()
        #expect(other[count] == 5)
        #expect(other[name] == "amy")
        try preferences.removeValue(for: count)
        try await preferences.flush()
        #expect(other[count] == 0)
        try preferences.removeAll()
        #expect(preferences[name] == "guest")
        try await preferences.flush()
        #expect(try PlistStore(directory: folder.url)["Preferences"].isEmpty)
    }

    @Test func aDurableSetIsInTheFileWhenItReturns() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        try preferences.set("early", for: name)  // pending: written with the durable set
        for (index, durability) in Durability.allCases.enumerated() {
            try preferences.set(index, for: count, durability: durability)
            let root = try PlistStore(directory: folder.url)["Preferences"]
            #expect(root["count"] == .int(index))
            #expect(root["name"] == "early")
        }
        try preferences.removeValue(for: count, durability: .file)
        #expect(try PlistStore(directory: folder.url)["Preferences"]["count"] == nil)
        try preferences.removeAll(durability: .none)
        #expect(try PlistStore(directory: folder.url)["Preferences"].isEmpty)
    }

    @Test func writesMergeOnlyTheChangedKeysOntoAnotherWritersFile() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        let preferences = try Preferences(store: store)
        // The background write is held until the flush has written: its delay is short, and
        // a busy machine could otherwise run it between the set and the other writer's.
        preferences.file.queue.suspend()
        defer { preferences.file.queue.resume() }
        try preferences.set(1, for: count)
        try store.set("outside", forKey: "name", in: "Preferences")
        try store.set(9, forKey: "count", in: "Preferences")
        try preferences.flush()
        let root = try PlistStore(directory: folder.url)["Preferences"]
        #expect(root["name"] == "outside", "another writer's key survives")
        #expect(root["count"] == .int(1), "the last writer of a key wins")
    }

    @Test func pendingChangesAreWrittenWhenThePreferencesGoAway() throws {
        let folder = try ScratchFolder()
        do {
            let preferences = try Preferences(store: PlistStore(directory: folder.url))
            try preferences.set(77, for: count)
        }
        #expect(try PlistStore(directory: folder.url)["Preferences"]["count"] == .int(77))
    }

    @Test func aFailedBackgroundWriteIsThrownByTheNextFlushAndMemoryKeepsTheValue() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        let preferences = try Preferences(store: store)
        try preferences.set(1, for: count)
        try preferences.flush()
        try Data("damaged".utf8).write(to: preferences.fileURL)
        try preferences.set(2, for: count)
        #expect(preferences[count] == 2)
        let error = #expect(throws: StoreError.self) { try preferences.flush() }
        #expect(error?.code == .corrupt)
        #expect(preferences[count] == 2, "reads stay consistent with the unwritten set")
        try store.removeFile(named: "Preferences")
        try preferences.flush()  // the unwritten change is tried again, and lands
        #expect(try PlistStore(directory: folder.url)["Preferences"]["count"] == .int(2))
    }

    @Test func aFailedBackgroundWriteIsThrownByTheNextSetWhichMakesNoChange() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        try preferences.set(1, for: count)
        try preferences.flush()
        guard geteuid() != 0 else {
            try skip("root writes into a read-only folder")
            return
        }
        #expect(chmod(folder.url.path, 0o500) == 0)
        defer { chmod(folder.url.path, 0o700) }
        try preferences.set(2, for: count)
        // Wait for the background write to fail: another Preferences keeps reading 1 meanwhile.
        var error: StoreError?
        let deadline = ContinuousClock.now + .seconds(30)
        while error == nil && ContinuousClock.now < deadline {
            usleep(5_000)
            do {
                try preferences.set("probe", for: name)
                try preferences.removeValue(for: name)
            } catch let thrown as StoreError {
                error = thrown
            }
        }
        #expect(error?.code == .permissionDenied)
        #expect(preferences[count] == 2)
        #expect(chmod(folder.url.path, 0o700) == 0)
        try preferences.flush()
        #expect(try PlistStore(directory: folder.url)["Preferences"]["count"] == .int(2))
    }

    @Test func aFullDiskIsThrownByTheNextSetWhichMakesNoChange() throws {
        let folder = try ScratchFolder()
        let diskFull = Locked(false)
        var fileSystem = FileSystem.posix
        let (write, writev) = (fileSystem.write, fileSystem.writev)
        fileSystem.write = { fd, buffer, count in
            guard !diskFull.withLock({ $0 }) else {
                errno = ENOSPC
                return -1
            }
            return write(fd, buffer, count)
        }
        fileSystem.writev = { fd, vectors, count in
            guard !diskFull.withLock({ $0 }) else {
                errno = ENOSPC
                return -1
            }
            return writev(fd, vectors, count)
        }
        let preferences = try Preferences(store: PlistStore(directory: folder.url, fileSystem: fileSystem))
        try preferences.set(1, for: count)
        try preferences.flush()
        diskFull.withLock { $0 = true }
        try preferences.set(2, for: count)
        var error: StoreError?
        let deadline = ContinuousClock.now + .seconds(30)  // until the background write has failed
        while error == nil && ContinuousClock.now < deadline {
            usleep(5_000)
            do {
                try preferences.set("probe", for: name)
            } catch let thrown as StoreError {
                error = thrown
            }
        }
        #expect(error?.code == .noSpace)
        #expect(preferences[count] == 2, "memory keeps the unwritten set")
        // The file itself: a store's read, like every read in this process, sees the unwritten set.
        #expect(try PlistStore(directory: folder.url).snapshot(of: "Preferences").root["count"] == .int(1))
        diskFull.withLock { $0 = false }
        try preferences.flush()  // the unwritten set is tried again, and lands
        #expect(try PlistStore(directory: folder.url)["Preferences"]["count"] == .int(2))
        try preferences.set("after", for: name)  // the failure was reported: sets work again
        try preferences.flush()
        #expect(try PlistStore(directory: folder.url)["Preferences"]["name"] == "after")
    }

    @Test func changeStreamsSeeThisInstancesAndAnotherWritersChanges() async throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        try preferences.set(0, for: count, durability: .none)  // the folder exists: inotify can watch it
        let all = preferences.changes(pollingInterval: .milliseconds(200))
        let counts = preferences.changes(for: count, pollingInterval: .milliseconds(200))
        try preferences.set(1, for: count)
        let own = await firstElement(of: all, within: .seconds(30))
        #expect(own == Preferences.Change(keys: ["count"], isFromAnotherProcess: false))
        #expect(await firstElement(of: counts, within: .seconds(30))?.keys == ["count"])

        let foreign = preferences.changes(pollingInterval: .milliseconds(200))
        let other = try Preferences(store: PlistStore(directory: folder.url))
        try other.set("zoe", for: name)
        try await other.flush()
        let seen = await firstElement(of: foreign, within: .seconds(30)) { $0.isFromAnotherProcess }
        #expect(seen?.keys == ["name"])
        #expect(preferences[name] == "zoe")
    }
}
