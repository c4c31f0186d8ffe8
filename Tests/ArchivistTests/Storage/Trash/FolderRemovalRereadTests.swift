import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `FolderRemoval` reading a folder again: a subfolder only when removing it says `ENOTEMPTY`
/// after a pass that deleted in it (what a file system whose `readdir` skips entries deleted
/// under it leaves), at most `maximumRereads` times. Entries the pass did not see are added
/// through the walk's hook, called just before each removal of a subfolder, so every run takes
/// the same path.
@Suite struct FolderRemovalRereadTests {
    /// A file added to a subfolder after it was read to its end: its removal says `ENOTEMPTY`,
    /// the walk reads it again, deletes the file, removes the folder, and throws nothing.
    @Test func aFileAddedAfterASubfolderWasReadIsDeletedByReadingItAgain() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            try makeFolder(trash.appendingPathComponent("a"), files: 3)
            try makeFolder(trash.appendingPathComponent("b"), files: 3)
            let calls = Calls()
            try FolderRemoval.removeContents(of: trash.path) { name in
                calls.names.append(name)
                if name == "a" && calls.count("a") == 1 { create(trash.path + "/a/late") }
            }
            #expect(allPaths(under: trash).isEmpty)
            #expect(calls.count("a") == 2)
            #expect(calls.count("b") == 1)  // removed at the first try: read once
        }
    }

    /// The same deeper than the levels kept open, where the walk returns through `..` and must
    /// open the folder by name again below a folder it reopened.
    @Test func aFileAddedBelowTheOpenLevelsIsDeletedByReadingItAgain() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            let depth = FolderRemoval.openLevels + 4
            var path = trash.path
            for level in 0..<depth {
                path += "/d\(level)"
                try makeFolder(URL(fileURLWithPath: path), files: 2)
            }
            let target = "d\(FolderRemoval.openLevels + 2)"
            let targetPath = (0...(FolderRemoval.openLevels + 2)).reduce(trash.path) { $0 + "/d\($1)" }
            let calls = Calls()
            try FolderRemoval.removeContents(of: trash.path) { name in
                calls.names.append(name)
                if name == target && calls.count(target) == 1 { create(targetPath + "/late") }
            }
            #expect(allPaths(under: trash).isEmpty)
            #expect(calls.count(target) == 2)
            #expect(calls.names.count == depth + 1)
        }
    }

    /// A folder another process keeps filling (a new file before every removal) ends the walk:
    /// read `maximumRereads` more times, then a typed error naming it; the rest is deleted.
    @Test func aFolderKeptFillingEndsTheWalkWithATypedError() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            let filled = trash.appendingPathComponent("filled")
            try makeFolder(filled, files: 2)
            try makeFolder(trash.appendingPathComponent("other/inner"), files: 2)
            let calls = Calls()
            let error = #expect(throws: StorageError.self) {
                try FolderRemoval.removeContents(of: trash.path) { name in
                    calls.names.append(name)
                    if name == "filled" { create(filled.path + "/late\(calls.count(name))") }
                }
            }
            #expect(error?.fileURL?.path == filled.path)
            #expect(calls.count("filled") == FolderRemoval.maximumRereads + 1)
            #expect(allPaths(under: trash).sorted() == ["filled", "filled/late\(FolderRemoval.maximumRereads + 1)"])
        }
    }

    /// A subfolder whose pass deleted nothing is not read again: its listing was whole, so what
    /// is there now was added after it (or cannot be deleted), and the walk ends with an error.
    @Test func aSubfolderWhosePassDeletedNothingIsNotReadAgain() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            try FileManager.default.createDirectory(
                at: trash.appendingPathComponent("empty"),
                withIntermediateDirectories: true
            )
            let calls = Calls()
            let error = #expect(throws: StorageError.self) {
                try FolderRemoval.removeContents(of: trash.path) { name in
                    calls.names.append(name)
                    create(trash.path + "/empty/late\(calls.count(name))")
                }
            }
            #expect(error?.fileURL?.lastPathComponent == "empty")
            #expect(calls.names == ["empty"])
        }
    }

    /// An entry added to the folder itself while it is emptied (after its subfolder was read)
    /// is deleted too, whether or not the pass still lists it: the folder is read once more
    /// after a pass that deleted in it.
    @Test func anEntryAddedToTheFolderItselfIsDeleted() throws {
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            try makeFolder(trash.appendingPathComponent("a"), files: 2)
            let calls = Calls()
            try FolderRemoval.removeContents(of: trash.path) { name in
                calls.names.append(name)
                if calls.names.count == 1 { create(trash.path + "/late") }
            }
            #expect(allPaths(under: trash).isEmpty)
            #expect(calls.names == ["a"])
        }
    }

    /// The names the hook was called with.
    private final class Calls {
        var names: [String] = []
        func count(_ name: String) -> Int { names.filter { $0 == name }.count }
    }

    /// Creates `url` and its parents, with `files` files in it.
    private func makeFolder(_ url: URL, files: Int) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for file in 0..<files { try Data("x".utf8).write(to: url.appendingPathComponent("\(file)")) }
    }
}

/// Creates an empty file at `path`, as another process would.
private func create(_ path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    #expect(fd >= 0)
    if fd >= 0 { close(fd) }
}
