import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A write that finds a folder at its entry's path moves the folder into the trash and renames
/// again. Before, when that second rename failed, the folder's removal was not journaled
/// (`mutate` saw only the error): the index went on counting what the folder held, though it
/// was gone from the disk, and no intent word was left set to repair it.
@Suite struct DiskStoreFolderInTheWayTests {
    @Test func aFolderMovedOutOfTheWayLeavesTheIndexEvenWhenTheRenameThenFails() throws {
        try withTemporaryDirectory { dir throws in
            let key = DiskKey(folder: FolderPath([MD5.hexDigest(of: "t")]), name: EntryName(parameter: "p"))
            let entryPath = dir.path + "/" + key.folder.relativePath + "/" + key.name.fileName
            // What a scan counts as an entry inside the folder in the way.
            try FileManager.default.createDirectory(atPath: entryPath, withIntermediateDirectories: true)
            try Data(repeating: 7, count: 500).write(to: URL(fileURLWithPath: entryPath + "/value"))

            let renamesToEntry = Locked(0)
            var fs = FileSystem.posix
            let rename = fs.rename
            fs.rename = { from, to in
                guard to == entryPath else { return rename(from, to) }
                // The first attempt meets the folder (EISDIR); the one after clearing it fails.
                if renamesToEntry.withLock({
                    $0 += 1
                    return $0
                }) == 1 {
                    return rename(from, to)
                }
                errno = EIO
                return -1
            }
            let store = try DiskStore.open(at: dir, fileSystem: fs)
            #expect(store.usage(of: FolderPath([])).entryCount == 1)  // the scan counted the folder's file

            #expect(throws: StorageError.self) {
                try store.write(
                    Data(repeating: 1, count: 100),
                    to: key,
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
            }
            #expect(renamesToEntry.withLock { $0 } == 2)
            store.waitForTrash()
            let files = entryFiles(under: dir)
            #expect(files.isEmpty)
            #expect(store.usage(of: FolderPath([])).entryCount == 0)
            #expect(store.usage(of: FolderPath([])).logicalBytes == 0)
            #expect(!store.index.shared.intent)
        }
    }

    /// Removing an entry journals one record; only a folder found at its path (moved into the
    /// trash) adds the clear of what a scan counted inside it. Either way the index agrees with
    /// the disk.
    @Test func aRemovalJournalsTheFoldersClearOnlyForAFolder() throws {
        try withTemporaryDirectory { dir throws in
            let folder = FolderPath([MD5.hexDigest(of: "t")])
            let file = DiskKey(folder: folder, name: EntryName(parameter: "file"))
            let inTheWay = DiskKey(folder: folder, name: EntryName(parameter: "folder"))
            // What a scan counts as an entry inside the folder in the way.
            let folderPath = dir.path + "/" + folder.relativePath + "/" + inTheWay.name.fileName
            try FileManager.default.createDirectory(atPath: folderPath, withIntermediateDirectories: true)
            try Data(repeating: 7, count: 500).write(to: URL(fileURLWithPath: folderPath + "/value"))
            let store = try DiskStore.open(at: dir)
            try store.write(
                Data(repeating: 1, count: 100),
                to: file,
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            #expect(store.usage(of: FolderPath([])).entryCount == 2)

            func journaled(_ body: () throws -> Void) throws -> [PersistentIndex.Change] {
                let start = try #require(store.index.readJournal(from: 0)).count
                try body()
                return PersistentIndex.decodeJournal(try #require(store.index.readJournal(from: start))[...]).changes
            }
            var removed = false
            let fileRecords = try journaled { removed = try store.remove(file) }
            #expect(removed)
            #expect(fileRecords == [.remove(file)])
            let folderRecords = try journaled { removed = try store.remove(inTheWay) }
            #expect(removed)
            #expect(folderRecords == [.remove(inTheWay), .clear(inTheWay.shadowingFolder)])
            let missRecords = try journaled { removed = try store.remove(file) }
            #expect(!removed)
            #expect(missRecords.isEmpty)
            store.waitForTrash()
            #expect(entryFiles(under: dir).isEmpty)
            #expect(store.usage(of: FolderPath([])) == (try store.index.scan()).usage(of: FolderPath([])))
        }
    }
}
