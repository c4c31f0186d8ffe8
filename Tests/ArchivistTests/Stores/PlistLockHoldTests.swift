import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plist's writers hold its lock (`.lock.<name>`) for no sync: the new version is written
/// and synced before the lock is taken, renamed under it, and its folder synced after it
/// (iOS terminates a suspended app that holds a file lock in a shared container, `0xdead10cc`,
/// and an `F_FULLFSYNC` may take tens of milliseconds).
@Suite struct PlistLockHoldTests {
    /// Every `fsync` a store made through the file system below, and whether the plist's lock
    /// was held by anyone at the time.
    final class SyncRecorder: Sendable {
        let syncs = Locked<[Bool]>([])
        let fileSystem: FileSystem

        init(lockPaths: [String]) {
            var fileSystem = FileSystem.posix
            let real = fileSystem.fsync
            let syncs = syncs
            fileSystem.fsync = { fd in
                let held = lockPaths.contains { LockHoldTests.isLocked($0) }
                syncs.withLock { $0.append(held) }
                return real(fd)
            }
            self.fileSystem = fileSystem
        }
    }

    @Test(arguments: [PlistStore.Format.xml, .binary])
    func noSyncRunsUnderThePlistsLock(format: PlistStore.Format) throws {
        try withTemporaryDirectory { dir in
            let defaults = dir.appendingPathComponent("defaults", isDirectory: true)
            try FileManager.default.createDirectory(at: defaults, withIntermediateDirectories: true)
            let seed = try PropertyListSerialization.data(fromPropertyList: ["seeded": 1], format: .xml, options: 0)
            try seed.write(to: defaults.appendingPathComponent("seeded.plist"))
            let folder = dir.appendingPathComponent("plists", isDirectory: true)
            let locks = ["prefs", "seeded", "Preferences"].map { folder.path + "/.lock." + $0 }
            let recorder = SyncRecorder(lockPaths: locks)
            let store = PlistStore(
                directory: folder,
                format: format,
                defaultFileURL: { name in
                    name == "seeded" ? defaults.appendingPathComponent("seeded.plist") : nil
                },
                fileSystem: recorder.fileSystem
            )
            try store.set(1, forKey: "a", in: "prefs")  // the file's first version
            try store.set(2, forKey: "b", in: "prefs")
            try store.update("prefs") { $0["c"] = 3 }
            #expect(try store.removeValue(forKey: "a", in: "prefs") == 1)
            try store.write(["whole": 1], to: "prefs")
            #expect(try store["seeded", "seeded"] == 1)  // seeded from its default
            let preferences = try Preferences(store: store)
            try preferences.set(5, for: PreferenceKey("count", default: 0))
            try preferences.flush()  // the set's background write, now
            #expect(preferences[PreferenceKey("count", default: 0)] == 5)
            let syncs = recorder.syncs.withLock { $0 }
            #expect(syncs.count >= 14)  // seven writes: the file's and the folder's each
            #expect(syncs.allSatisfy { !$0 })
        }
    }
}
