import ArchivistTestSupport
import Foundation
import Testing
@testable import Archivist
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `FolderRemoval` must never go past: a link in the folder's place even when the path
/// ends in a slash.
@Suite struct FolderRemovalBoundaryTests {
    /// `trash/` where `trash` is a link: a trailing slash makes the kernel follow the link
    /// despite `O_NOFOLLOW`, so the walk must refuse it as it refuses `trash`.
    @Test(arguments: ["/", "//"]) func aLinkGivenWithATrailingSlashIsNotFollowed(suffix: String) throws {
        try withTemporaryDirectory { dir throws in
            let outside = dir.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: outside.appendingPathComponent("inner"), withIntermediateDirectories: true)
            try Data("keep".utf8).write(to: outside.appendingPathComponent("inner/file"))
            #expect(symlink(outside.path, dir.path + "/trash") == 0)
            let error = #expect(throws: CacheError.self) { try FolderRemoval.removeContents(of: dir.path + "/trash" + suffix) }
            #expect(error?.errno == ENOTDIR || error?.errno == ELOOP)
            #expect(try Data(contentsOf: outside.appendingPathComponent("inner/file")) == Data("keep".utf8))
        }
    }

    /// A real folder given with a trailing slash is still emptied.
    @Test func aFolderGivenWithATrailingSlashIsEmptied() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            try FileManager.default.createDirectory(at: trash.appendingPathComponent("a"), withIntermediateDirectories: true)
            try Data("x".utf8).write(to: trash.appendingPathComponent("a/file"))
            try FolderRemoval.removeContents(of: trash.path + "/")
            #expect(allPaths(under: trash).isEmpty)
        }
    }
}
