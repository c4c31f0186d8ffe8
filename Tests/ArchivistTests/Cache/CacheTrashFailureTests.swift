import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// A deletion of the trash that fails runs on a background queue, where no caller waits for
/// it: it is counted, and the next `flush()` throws its error, once.
@Suite struct CacheTrashFailureTests {
    /// Puts a file where the trash folder belongs, so that the next walk cannot open it.
    private func spoilTrash(_ dir: URL) throws {
        let trash = dir.appendingPathComponent(".archivist/trash")
        try FileManager.default.removeItem(at: trash)
        try Data("not a folder".utf8).write(to: trash)
    }

    @Test func aFailedTrashWalkIsCountedAndHandedOverOnce() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            store.waitForTrash()
            #expect(store.trash.spares.trashFailures.count == 0)
            try spoilTrash(dir)
            store.emptyTrash(completion: nil)
            store.waitForTrash()
            #expect(store.trash.spares.trashFailures.count == 1)
            let failure = try #require(store.takeUnreportedTrashFailure())
            #expect(failure.message.contains("deleting cleared entries in the trash failed"))
            #expect(failure.errno != nil)
            #expect(store.takeUnreportedTrashFailure() == nil)  // told once
            #expect(store.trash.spares.trashFailures.count == 1)  // still counted
        }
    }

    @Test func flushThrowsTheFailureOnceAfterSavingTheIndex() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try cache.store("letter", for: .message)
            try cache.flush()
            try spoilTrash(dir)
            cache.caches.emptyTrash(completion: nil)  // as a clear or an open starts it
            let error = try #require(throws: CacheError.self) { try cache.flush() }
            #expect(error.code == .fileSystem)
            try cache.flush()  // told once
            #expect(try cache.value(String.self, for: .message) == "letter")
        }
    }

    /// A clear whose trash is not a folder (a file put at its name from outside) makes the
    /// folder again and clears: it never reports entries cleared that stay readable.
    @Test func aClearWhoseTrashIsAFileStillClears() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try cache.store("letter", for: .message)
            try cache.flush()
            try spoilTrash(dir)
            _ = try cache.clear(.type(.message))
            try cache.flush()
            #expect(try cache.value(String.self, for: .message) == nil)
            #expect(cache.totalUsage.entryCount == 0)
            #expect(entryFiles(under: dir).isEmpty)
        }
    }
}
