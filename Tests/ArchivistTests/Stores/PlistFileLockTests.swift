import Foundation
import Testing

@testable import Archivist

/// One plist file has one lock in a process however its path is spelled: on a
/// case-insensitive volume (APFS and HFS+ as Apple formats them) `Settings.plist` and
/// `settings.plist` are one file. A folder reached through a symbolic link is the same
/// situation on any file system.
struct PlistFileLockTests {
    @Test(.timeLimit(.minutes(20))) func twoSpellingsOfOneFileShareOneLock() throws {
        try withTemporaryDirectory { dir throws in
            let real = dir.appendingPathComponent("real")
            try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
            let link = dir.appendingPathComponent("link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
            let first = real.appendingPathComponent("Settings.plist")
            let second = link.appendingPathComponent("Settings.plist")
            // Nested on one thread: two locks on one file would wait for each other forever;
            // one lock is re-entrant.
            let nested = try PlistFileLock.withExclusive(forPlistAt: first) {
                try PlistFileLock.withExclusive(forPlistAt: second) { true }
            }
            #expect(nested)
            let holds = try #require(PlistFileLock.holdHistogram(forPlistAt: second))
            #expect(holds.count == 1)  // the outer hold; the nested one re-entered it
            #expect(PlistFileLock.holdHistogram(forPlistAt: first) == holds)
        }
    }
}
