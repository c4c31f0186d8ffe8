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
/// ends in a slash, a file system mounted inside the folder. The mount test needs root and a
/// working `mount`; elsewhere it does nothing.
@Suite struct FolderRemovalBoundaryTests {
    /// `trash/` where `trash` is a link: a trailing slash makes the kernel follow the link
    /// despite `O_NOFOLLOW`, so the walk must refuse it as it refuses `trash`.
    @Test(arguments: ["/", "//"]) func aLinkGivenWithATrailingSlashIsNotFollowed(suffix: String) throws {
        try withTemporaryDirectory { dir throws in
            let outside = dir.appendingPathComponent("outside")
            try FileManager.default.createDirectory(
                at: outside.appendingPathComponent("inner"),
                withIntermediateDirectories: true
            )
            try Data("keep".utf8).write(to: outside.appendingPathComponent("inner/file"))
            #expect(symlink(outside.path, dir.path + "/trash") == 0)
            let error = #expect(throws: StorageError.self) {
                try FolderRemoval.removeContents(of: dir.path + "/trash" + suffix)
            }
            #expect(error?.errno == ENOTDIR || error?.errno == ELOOP)
            #expect(try Data(contentsOf: outside.appendingPathComponent("inner/file")) == Data("keep".utf8))
        }
    }

    /// A real folder given with a trailing slash is still emptied.
    @Test func aFolderGivenWithATrailingSlashIsEmptied() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            try FileManager.default.createDirectory(
                at: trash.appendingPathComponent("a"),
                withIntermediateDirectories: true
            )
            try Data("x".utf8).write(to: trash.appendingPathComponent("a/file"))
            try FolderRemoval.removeContents(of: trash.path + "/")
            #expect(allPaths(under: trash).isEmpty)
        }
    }

    // Runs mount and umount as processes: macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// A tmpfs mounted on a folder in the trash: its contents stay (as with FileManager's
    /// `FTS_XDEV` walk before), everything else goes, and the walk says `EXDEV`.
    @Test func aFileSystemMountedInsideIsNotEntered() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            let mounted = trash.appendingPathComponent("m")
            try FileManager.default.createDirectory(at: mounted, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(
                at: trash.appendingPathComponent("x"),
                withIntermediateDirectories: true
            )
            try Data("x".utf8).write(to: trash.appendingPathComponent("x/file"))
            guard mount(["-t", "tmpfs", "none", mounted.path]) else {
                try skip("cannot mount a tmpfs here (needs root)")
                return
            }
            defer { _ = unmount(mounted.path) }
            try Data("keep".utf8).write(to: mounted.appendingPathComponent("kept"))

            let error = #expect(throws: StorageError.self) { try FolderRemoval.removeContents(of: trash.path) }
            #expect(error?.errno == EXDEV)
            #expect(try Data(contentsOf: mounted.appendingPathComponent("kept")) == Data("keep".utf8))
            #expect(!FileManager.default.fileExists(atPath: trash.appendingPathComponent("x").path))
        }
    }

    /// Runs `mount` with `arguments` when root; whether it mounted.
    private func mount(_ arguments: [String]) -> Bool {
        guard geteuid() == 0,
            let tool = ["/usr/bin/mount", "/bin/mount"].first(where: FileManager.default.isExecutableFile(atPath:)),
            let child = try? ChildProcess(tool, arguments)
        else { return false }
        return ChildProcess.succeeded(child.wait())
    }

    /// Detaches the mount at `path` (lazily, so a busy one goes too).
    private func unmount(_ path: String) -> Bool {
        guard
            let tool = ["/usr/bin/umount", "/bin/umount"].first(where: FileManager.default.isExecutableFile(atPath:)),
            let child = try? ChildProcess(tool, ["-l", path])
        else { return false }
        return ChildProcess.succeeded(child.wait())
    }
    #endif
}
