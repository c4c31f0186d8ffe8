import Foundation
import Testing
@testable import Archivist

/// Regression tests for bugs the crash and fault-injection tests found.
@Suite struct RecoveryRegressionTests {
    /// Found by the crash test: a kill during a background save of the size index left its
    /// temporary in `.archivist`, which the rescan's entry walk skips, so it stayed forever.
    @Test func aRescanSweepsAnInterruptedIndexSave() throws {
        try withTemporaryDirectory { dir throws in
            do {
                let store = try DiskStore.open(at: dir)
                try store.write(Data([1, 2, 3]), to: DiskKey(folder: FolderPath(["f"]), name: .single),
                                typeName: "t", parameter: nil, expiry: nil, durability: .none)
                try store.flush()
            }
            let stale = dir.appendingPathComponent(".archivist/.tmp-0123456789abcdef")
            try Data("half an index".utf8).write(to: stale)
            try Data("D".utf8).write(to: dir.appendingPathComponent(".archivist/dirty"))
            let store = try DiskStore.open(at: dir)
            #expect(!FileManager.default.fileExists(atPath: stale.path))
            #expect(store.usage(of: FolderPath([])).entryCount == 1)
        }
    }

    /// Found by the fault sweep: when the folder sync of a `.fileAndFolder` write failed after
    /// the rename, the store threw as if nothing had changed, yet the new entry was on disk,
    /// missing from the size index and the memory tier. Now it is counted, served, and the
    /// error says it is in place.
    @Test func aFailedFolderSyncAfterTheRenameCountsTheNewEntry() throws {
        try withTemporaryDirectory { dir throws in
            let injector = FaultInjector()
            let cache = try CacheManager<FaultCache>(root: CacheRoot(directory: dir), user: "u",
                                                     configuration: .init(), fileSystem: injector.fileSystem)
            try cache.store("old", for: .document)
            injector.arm(.init(operation: .fsync, n: 2, persistent: false, errno: EIO))   // file, then folder
            let error = #expect(throws: CacheError.self) { try cache.store("new", for: .document) }
            #expect(injector.disarm() == 1)
            #expect(error?.message.contains("in place") == true)
            #expect(try cache.value(String.self, for: .document) == "new")
            #expect(cache.totalSize == entryFiles(under: dir).values.reduce(0, +))
        }
    }
}
