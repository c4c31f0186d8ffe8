import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The trash's deletion (`FolderRemoval`): everything inside the folder goes, the folder stays;
/// links are unlinked, never followed; any depth on a small stack; two emptiers at once; an
/// entry it cannot delete gives a typed error once the rest is gone.
@Suite struct FolderRemovalTests {
    static let nothingSticks: Comment =
        "no folder can be made undeletable here (neither permissions nor the immutable attribute hold)"

    /// Files, hidden files, empty and nested folders, and a name that is not UTF-8.
    @Test func nestedFoldersAndFilesAreDeletedAndTheFolderStays() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            for folder in ["a/b/c/d/e", "a/empty", "f", ".hidden/g"] {
                try FileManager.default.createDirectory(
                    at: trash.appendingPathComponent(folder),
                    withIntermediateDirectories: true
                )
            }
            for file in ["a/1", "a/b/2", "a/b/c/d/e/3", ".hidden/.4", "f/5", "6"] {
                try Data(repeating: 1, count: 100).write(to: trash.appendingPathComponent(file))
            }
            let notUTF8 = Array((trash.path + "/a/b/").utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), 0]
            let fd = open(notUTF8, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            #expect(fd >= 0)
            close(fd)

            try FolderRemoval.removeContents(of: trash.path)
            #expect(allPaths(under: trash).isEmpty)
            var status = stat()
            #expect(lstat(trash.path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
        }
    }

    /// A folder that is not there is already empty.
    @Test func aMissingFolderIsAlreadyEmpty() throws {
        try withTemporaryDirectory { dir throws in
            try FolderRemoval.removeContents(of: dir.appendingPathComponent("absent").path)
        }
    }

    /// Links to a file, to a folder with contents (outside the trash) and to nothing are
    /// unlinked; their targets are untouched.
    @Test func linksAreUnlinkedAndTheirTargetsLeftIntact() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            let outside = dir.appendingPathComponent("outside")
            try FileManager.default.createDirectory(
                at: trash.appendingPathComponent("nested"),
                withIntermediateDirectories: true
            )
            try FileManager.default.createDirectory(
                at: outside.appendingPathComponent("inner"),
                withIntermediateDirectories: true
            )
            try Data("keep".utf8).write(to: outside.appendingPathComponent("file"))
            try Data("keep".utf8).write(to: outside.appendingPathComponent("inner/file"))
            #expect(symlink(outside.path, trash.path + "/to-folder") == 0)
            #expect(symlink(outside.path + "/file", trash.path + "/nested/to-file") == 0)
            #expect(symlink(outside.path + "/inner", trash.path + "/nested/to-inner") == 0)
            #expect(symlink(dir.path + "/nowhere", trash.path + "/dangling") == 0)

            try FolderRemoval.removeContents(of: trash.path)
            #expect(allPaths(under: trash).isEmpty)
            #expect(try Data(contentsOf: outside.appendingPathComponent("file")) == Data("keep".utf8))
            #expect(try Data(contentsOf: outside.appendingPathComponent("inner/file")) == Data("keep".utf8))
        }
    }

    /// The folder itself being a link: refused (`ENOTDIR` on Linux, `ELOOP` on Apple platforms),
    /// the link's target untouched.
    @Test func aFolderThatIsALinkIsNotFollowed() throws {
        try withTemporaryDirectory { dir throws in
            let outside = dir.appendingPathComponent("outside")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try Data("keep".utf8).write(to: outside.appendingPathComponent("file"))
            #expect(symlink(outside.path, dir.path + "/trash") == 0)
            let error = #expect(throws: StorageError.self) { try FolderRemoval.removeContents(of: dir.path + "/trash") }
            #expect(error?.errno == ENOTDIR || error?.errno == ELOOP)
            #expect(try Data(contentsOf: outside.appendingPathComponent("file")) == Data("keep".utf8))
        }
    }

    /// A store's clear of a folder holding a link to a file outside the root: the clear's
    /// deletion unlinks the link, the file stays.
    @Test func aClearedFolderWithALinkOutsideLeavesItsTargetIntact() throws {
        try withTemporaryDirectory { dir throws in
            let root = dir.appendingPathComponent("root")
            let outside = dir.appendingPathComponent("outside")
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent("cleared/sub"),
                withIntermediateDirectories: true
            )
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            try Data("keep".utf8).write(to: outside.appendingPathComponent("file"))
            #expect(symlink(outside.path, root.path + "/cleared/sub/link") == 0)
            let store = try DiskStore.open(at: root)
            try store.clear([FolderPath(["cleared"])])
            store.waitForTrash()
            #expect(allPaths(under: root.appendingPathComponent(".archivist/trash")).isEmpty)
            #expect(try Data(contentsOf: outside.appendingPathComponent("file")) == Data("keep".utf8))
        }
    }

    /// A chain of 2,000 folders (far past the levels kept open, so the walk climbs back
    /// through `..`), emptied on a thread with a 512 KiB stack.
    @Test func aDeepTreeIsDeletedOnASmallStack() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            try FileManager.default.createDirectory(at: trash, withIntermediateDirectories: true)
            try makeChain(in: trash.path, depth: 2_000)
            let path = trash.path
            try onThread(stackSize: 512 * 1024) { try FolderRemoval.removeContents(of: path) }
            #expect(allPaths(under: trash).isEmpty)
        }
    }

    /// Two threads emptying one trash at once: entries vanishing under one walk (deleted by the
    /// other) are no error, and nothing is left.
    @Test func twoThreadsEmptyingOneTrashBothSucceed() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            for round in 0..<3 {
                try fillTrash(trash, seed: UInt64(round))
                let errors = Locked<[String]>([])
                DispatchQueue.concurrentPerform(iterations: 2) { _ in
                    do { try FolderRemoval.removeContents(of: trash.path) } catch {
                        errors.withLock { $0.append("\(error)") }
                    }
                }
                #expect(errors.withLock { $0 }.isEmpty)
                #expect(allPaths(under: trash).isEmpty)
            }
        }
    }

    // Starts worker processes: macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// The same with two processes (`ArchivistProcessWorker empty-folder`), as two stores'
    /// trash queues on one root do.
    @Test func twoProcessesEmptyingOneTrashBothSucceed() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            for round in 0..<2 {
                try fillTrash(trash, seed: UInt64(10 + round))
                let children = try (0..<2).map { _ in try ChildProcess(worker, ["empty-folder", trash.path]) }
                ChildProcess.waitForAll(children)
                #expect(allPaths(under: trash).isEmpty)
            }
        }
    }
    #endif

    /// A subfolder whose entries cannot be deleted (unreadable when not root; immutable as
    /// root, where permissions do not bind): the walk deletes everything else, ends, and throws
    /// `permissionDenied` naming it.
    @Test func anUndeletableSubfolderGivesATypedErrorAndTheRestIsDeleted() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            let stuck = trash.appendingPathComponent("a/stuck")
            for name in ["a/1", "b", "c/d/e"] {
                try FileManager.default.createDirectory(
                    at: trash.appendingPathComponent(name).deletingLastPathComponent(),
                    withIntermediateDirectories: true
                )
                try Data("x".utf8).write(to: trash.appendingPathComponent(name))
            }
            guard let restore = try makeUndeletable(stuck) else {
                try skip(Self.nothingSticks)
                return
            }
            defer { restore() }

            let error = #expect(throws: StorageError.self) { try FolderRemoval.removeContents(of: trash.path) }
            #expect(error?.code == .permissionDenied)
            #expect(error?.fileURL?.path.hasPrefix(stuck.path) == true)
            #expect(Set(allPaths(under: trash)).isSubset(of: ["a", "a/stuck", "a/stuck/file"]))
            #expect(allPaths(under: trash).contains("a/stuck"))
            restore()
            try FolderRemoval.removeContents(of: trash.path)
            #expect(allPaths(under: trash).isEmpty)
        }
    }

    /// The same in a store's trash: its deletion (which keeps the error to itself, as always)
    /// ends, the queue drains, and the next deletion finishes the job.
    @Test func aStoresTrashWithAnUndeletableSubfolderStillDrains() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            store.waitForTrash()  // the open's own deletion must not race the leftovers below
            let leftover = dir.appendingPathComponent(".archivist/trash/0123abcd")
            let stuck = leftover.appendingPathComponent("stuck")
            try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: true)
            try Data("x".utf8).write(to: leftover.appendingPathComponent("other"))
            guard let restore = try makeUndeletable(stuck) else {
                try skip(Self.nothingSticks)
                return
            }
            defer { restore() }
            try store.clear([FolderPath(["nothing"])])
            store.waitForTrash()
            #expect(
                allPaths(under: dir.appendingPathComponent(".archivist/trash")).sorted() == [
                    "0123abcd", "0123abcd/stuck", "0123abcd/stuck/file",
                ]
            )
            restore()
            try store.clear([FolderPath(["nothing"])])
            store.waitForTrash()
            #expect(allPaths(under: dir.appendingPathComponent(".archivist/trash")).isEmpty)
        }
    }

    /// Makes `url` a folder holding `file` that cannot be deleted: unreadable (chmod 0) when
    /// not root, immutable as root. Returns the undo, or `nil` where neither sticks.
    private func makeUndeletable(_ url: URL) throws -> (() -> Void)? {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: url.appendingPathComponent("file"))
        let restore: () -> Void
        if geteuid() == 0 {
            restore = try makeReadOnly(url)
        } else {
            chmod(url.path, 0)
            let path = url.path
            restore = { chmod(path, 0o700) }
        }
        if canCreateFile(in: url) {
            restore()
            return nil
        }
        return restore
    }

    /// A chain `d/d/…/d` of `depth` folders under `path`, with a file at every tenth level,
    /// made through descriptors (its path is longer than `PATH_MAX`).
    private func makeChain(in path: String, depth: Int) throws {
        var fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw StorageError.posix("open", path: path, errno: errno) }
        for level in 0..<depth {
            guard mkdirat(fd, "d", 0o700) == 0 else { throw StorageError.posix("mkdirat", path: path, errno: errno) }
            if level % 10 == 0 {
                let file = openat(fd, "f", O_WRONLY | O_CREAT, 0o600)
                close(file)
            }
            let next = openat(fd, "d", O_RDONLY | O_DIRECTORY)
            close(fd)
            guard next >= 0 else { throw StorageError.posix("openat", path: path, errno: errno) }
            fd = next
        }
        close(fd)
    }

    /// Fills `trash` with a seeded mix: folders of files, nested folders, a deep chain, links.
    private func fillTrash(_ trash: URL, seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for folder in 0..<8 {
            let base = trash.appendingPathComponent("\(folder)/x/y")
            try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
            for file in 0..<Int.random(in: 20..<80, using: &rng) {
                try Data(count: Int.random(in: 0..<200, using: &rng)).write(to: base.appendingPathComponent("\(file)"))
            }
            #expect(symlink(trash.path, base.path + "/loop") == 0)
        }
        try FileManager.default.createDirectory(
            at: trash.appendingPathComponent("deep"),
            withIntermediateDirectories: true
        )
        try makeChain(in: trash.path + "/deep", depth: 300)
    }
}
