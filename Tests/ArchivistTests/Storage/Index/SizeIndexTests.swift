import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// The size index remembers the folder of the last set and its nodes, so a run of sets into one
/// folder skips the walk; the write path reads a temporary's sizes with `statx` (no time
/// stamps) rather than `fstat`. Neither may make the index disagree with the disk.
@Suite struct SizeIndexTests {
    private typealias Record = PersistentIndex.Record

    private func key(_ folder: [String], _ parameter: String?) -> DiskKey {
        DiskKey(folder: FolderPath(folder.map { MD5.hexDigest(of: $0) }), name: EntryName(parameter: parameter))
    }

    private func record(_ logical: Int64, access: Double = 0) -> Record {
        Record(logical: logical, allocated: (logical + 4095) / 4096 * 4096, lastAccess: access)
    }

    /// Sets into a folder, the folder (or a parent) detached, sets into it again: the folder
    /// and every folder above it count only what was set after the detach, whether the set
    /// found the remembered folder or walked.
    @Test(arguments: [["a"], ["a", "b"], ["c", "d", "e"]])
    func aDetachedFolderIsNotCountedByLaterSets(folder: [String]) {
        var index = PersistentIndex.SizeIndex()
        for i in 0..<5 { index.set(key(folder, "p\(i)"), record(100)) }
        index.set(key(["other"], "x"), record(7))  // the remembered folder moves away and back
        for i in 5..<10 { index.set(key(folder, "p\(i)"), record(100)) }
        let top = FolderPath([MD5.hexDigest(of: folder[0])])
        #expect(index.detach(top).entryCount == 10)
        #expect(index.usage(of: key(folder, nil).folder) == DiskUsage())
        for i in 0..<3 { index.set(key(folder, "q\(i)"), record(10)) }
        #expect(index.usage(of: key(folder, nil).folder).entryCount == 3)
        #expect(index.usage(of: key(folder, nil).folder).logicalBytes == 30)
        #expect(index.usage(of: top).logicalBytes == 30)
        #expect(index.usage(of: FolderPath([])).logicalBytes == 37)
        #expect(index.usage(of: FolderPath([])).entryCount == 4)
        #expect(index.record(key(folder, "p0")) == nil)
    }

    /// A journal's set replaces the entry's sizes, keeps the later last access, and reports
    /// the usage it replaced; a set of the same sizes twice counts once.
    @Test func aJournalSetReplacesSizesAndKeepsTheLaterAccess() {
        var index = PersistentIndex.SizeIndex()
        let entry = key(["a"], "p")
        #expect(index.apply(.set(entry, record(100, access: 50))) == DiskUsage())
        var replaced = DiskUsage()
        replaced.logicalBytes = 100
        replaced.allocatedBytes = 4096
        replaced.entryCount = 1
        #expect(index.apply(.set(entry, record(200, access: 10))) == replaced)
        #expect(index.record(entry) == record(200, access: 50))
        index.apply(.set(entry, record(200, access: 60)))
        #expect(index.record(entry) == record(200, access: 60))
        #expect(index.usage(of: FolderPath([])).entryCount == 1)
        #expect(index.usage(of: FolderPath([])).logicalBytes == 200)
    }

    /// After a run of writes (sizes from `statx` on Linux), a rescan of the disk (sizes from
    /// `lstat`) gives every entry the same logical and allocated size as the index.
    @Test func aRescanAgreesWithTheIndexEntryByEntry() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let sizes = [0, 1, 100, 4_000, 4_096, 5_000, 70_000, 100_000, 300_000]
            var keys: [DiskKey] = []
            for (i, size) in sizes.enumerated() {
                for folder in [["a"], ["a", "b"]] {
                    let key = key(folder, "p\(i)")
                    keys.append(key)
                    try store.write(
                        Data(repeating: UInt8(i), count: size),
                        to: key,
                        typeName: "t",
                        parameter: "p\(i)",
                        expiry: nil,
                        durability: .none
                    )
                }
            }
            try store.write(
                Data(count: 10),
                to: keys[3],
                typeName: "t",
                parameter: "p1",
                expiry: nil,
                durability: .none
            )
            let scanned = try store.index.scan()
            for key in keys {
                let indexed = try #require(store.sizes(of: key))
                let found = try #require(scanned.record(key))
                #expect(indexed.logical == found.logical)
                #expect(indexed.allocated == found.allocated)
                var status = stat()
                #expect(lstat(store.path(of: key), &status) == 0)
                #expect(indexed.allocated == Int64(status.st_blocks) * 512)
            }
            #expect(store.usage(of: FolderPath([])) == scanned.usage(of: FolderPath([])))
        }
    }

    /// The status call reports what `fstat` does for a file it did not create (sizes, mode and identity).
    @Test func statusWithoutTimesMatchesFstat() throws {
        try withTemporaryDirectory { dir throws in
            let path = dir.path + "/f"
            try Data(repeating: 1, count: 12_345).write(to: URL(fileURLWithPath: path))
            #expect(chmod(path, 0o640) == 0)
            let fd = open(path, O_RDONLY)
            #expect(fd >= 0)
            defer { close(fd) }
            var status = stat()
            #expect(fstat(fd, &status) == 0)
            let reported = try #require(FileSystem.posix.statusWithoutTimes(fd))
            #expect(reported.sizes.logical == 12_345)
            #expect(reported.sizes.allocated == Int64(status.st_blocks) * 512)
            #expect(reported.mode == status.st_mode)
            #expect(reported.device == UInt64(status.st_dev))
            #expect(reported.inode == UInt64(status.st_ino))
            #expect(FileSystem.posix.statusWithoutTimes(-1) == nil)
        }
    }
}
