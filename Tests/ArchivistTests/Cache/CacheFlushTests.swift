import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

// Starts worker processes: macOS and Linux only.
#if os(macOS) || os(Linux)
/// `flush()` saves the size index and waits for the trash, so a process may exit right after
/// it; without it nothing stored is lost either — the next open rescans and finishes the trash.
@Suite struct CacheFlushTests {
    private func runWorker(_ root: URL, flushing: Bool) throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        ChildProcess.waitForAll([
            try ChildProcess(worker, ["store-then-exit", root.path, flushing ? "flush" : "no-flush"])
        ])
    }

    @Test func afterFlushTheIndexIsSavedAndTheTrashIsEmpty() throws {
        try withTemporaryDirectory { dir throws in
            try runWorker(dir, flushing: true)
            #expect(try Data(contentsOf: dir.appendingPathComponent(".archivist/dirty")) == Data("C".utf8))
            let index = try #require(try AtomicFile.read(path: dir.path + "/.archivist/index"))
            let saved = try #require(PersistentIndex.SizeIndex.deserialize(index)).0
            #expect(saved.usage(of: FolderPath([])).entryCount == 100)
            #expect(saved.usage(of: FolderPath([])).logicalBytes == Int64(entryFiles(under: dir).values.reduce(0, +)))
            #expect(allPaths(under: dir.appendingPathComponent(".archivist/trash")).isEmpty)
        }
    }

    @Test func exitingWithoutFlushLosesNothing() throws {
        try withTemporaryDirectory { dir throws in
            try runWorker(dir, flushing: false)
            let cache = try CacheManager<UmaskCache>(root: CacheRoot(directory: dir), user: "u")
            #expect(cache.totalUsage.entryCount == 100)
            #expect(cache.totalSize == entryFiles(under: dir).values.reduce(0, +))
            #expect(try cache.value(String.self, for: .document, parameter: "49") == String(repeating: "v", count: 500))
            #expect(try cache.value(String.self, for: .user, parameter: "0") == nil)
            try cache.flush()
            #expect(allPaths(under: dir.appendingPathComponent(".archivist/trash")).isEmpty)
            #expect(try Data(contentsOf: dir.appendingPathComponent(".archivist/dirty")) == Data("C".utf8))
        }
    }
}
#endif

/// Trash a previous process left is deleted in the background after the open returns (as
/// `Reliability.md` says); meanwhile no size counts it, and `flush()` waits for it.
@Suite struct CacheLeftoverTrashTests {
    @Test func leftoverTrashIsNeverCountedAndFlushDeletesIt() throws {
        try withTemporaryDirectory { dir throws in
            do {
                let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
                try cache.store("kept", for: .hots)
                try cache.flush()  // its open's own trash deletion must not race the leftovers below
            }
            // What a process that cleared and then died leaves: a big folder in the trash.
            let leftover = dir.appendingPathComponent(".archivist/trash/0123abcd/deep")
            try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: true)
            for i in 0..<50 { try Data(repeating: 1, count: 1_000).write(to: leftover.appendingPathComponent("\(i)")) }

            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            // Whether or not the background deletion has started, the sizes are the entries'.
            #expect(cache.totalSize == entryFiles(under: dir).values.reduce(0, +))
            #expect(cache.totalUsage.entryCount == 1)
            try cache.flush()
            #expect(allPaths(under: dir.appendingPathComponent(".archivist/trash")).isEmpty)
            #expect(cache.totalSize == entryFiles(under: dir).values.reduce(0, +))
            #expect(try cache.value(String.self, for: .hots) == "kept")
        }
    }
}
