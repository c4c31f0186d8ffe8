import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Deferred sets keep reaching the file after the first background write: each background
/// write schedules the next one, so a set made after it is on disk — for another process too —
/// without a flush.
@Suite struct PreferencesRepeatedDeferredWriteTests {
    private let count = PreferenceKey<Int>("count", default: 0)

    /// Whether the preferences file in `folder` holds `value` for `count` within a bound meant
    /// for a busy machine (the background write comes ~20 ms after a set). It reads the file's
    /// bytes (`snapshot(of:)`): a `PlistStore` read in this process would also see the set
    /// before it is written.
    private func fileHolds(_ value: Int, in folder: ScratchFolder) -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if (try? PlistStore(directory: folder.url).snapshot(of: "Preferences").root["count"]) == .int(.init(value))
            {
                return true
            }
            usleep(2_000)
        }
        return false
    }

    @Test func eachOfSeveralDeferredSetsInARowReachesTheFile() throws {
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url))
        for value in 1...3 {
            try preferences.set(value, for: count)
            try #require(fileHolds(value, in: folder), "set \(value) never reached the file")
        }
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let check = try ChildProcess(worker, ["preferences-expect", folder.url.path, "Preferences", count.name, "3"])
        ChildProcess.waitForAll([check])
        // And a Preferences opened afterwards in this process.
        #expect(try Preferences(store: PlistStore(directory: folder.url))[count] == 3)
    }
}
