import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// The snapshot of the size index is read in place: its directory at open, a page of records
/// when one is asked for. What it holds, merged with what changed since, is what an index
/// built in memory from the same changes holds.
@Suite struct SnapshotFileTests {
    private typealias Record = PersistentIndex.Record

    private static let folders = [FolderPath([]), FolderPath(["a"]), FolderPath(["a", "b"]), FolderPath(["c"])]

    private func key(_ folder: Int, _ parameter: String?) -> DiskKey {
        DiskKey(folder: Self.folders[folder], name: EntryName(parameter: parameter))
    }

    private func record(_ i: Int) -> Record {
        Record(logical: Int64(100 + i), allocated: Int64(4096 * (1 + i % 3)), lastAccess: Double(i))
    }

    /// An index in memory of `count` entries over the folders, some of them single entries.
    private func populated(_ count: Int) -> PersistentIndex.SizeIndex {
        var index = PersistentIndex.SizeIndex()
        for i in 0..<count { index.set(key(i % Self.folders.count, i % 50 == 7 ? nil : "p\(i)"), record(i)) }
        return index
    }

    private func reloaded(_ index: PersistentIndex.SizeIndex, epoch: UInt64 = 9) throws -> PersistentIndex.SizeIndex {
        let bytes = try #require(index.snapshot().serialized(epoch: epoch)).bytes
        let (loaded, saved) = try #require(PersistentIndex.SizeIndex.deserialize(bytes))
        #expect(saved == epoch)
        return loaded
    }

    private func expectSame(_ a: PersistentIndex.SizeIndex, _ b: PersistentIndex.SizeIndex, keys: [DiskKey]) {
        for folder in Self.folders { #expect(a.usage(of: folder) == b.usage(of: folder)) }
        for key in keys { #expect(a.record(key) == b.record(key)) }
    }

    /// Counts around a page's worth of records: every record, single entry and folder usage
    /// comes back, and nothing else.
    @Test(arguments: [0, 1, 101, 102, 103, 2_000])
    func aSnapshotRoundTripsEveryRecord(count: Int) throws {
        let index = populated(count)
        let loaded = try reloaded(index)
        let keys = (0..<(count + 20)).map { key($0 % Self.folders.count, $0 % 50 == 7 ? nil : "p\($0)") }
        expectSame(index, loaded, keys: keys)
        #expect(loaded.file?.cachedPageCount ?? 0 <= PersistentIndex.SnapshotFile.cachedPages)
        for folder in Self.folders {
            #expect(
                Set(loaded.leastRecentlyAccessed(in: folder).map(\.0))
                    == Set(index.leastRecentlyAccessed(in: folder).map(\.0))
            )
        }
    }

    /// Sets, replacements, removals, touches and a folder dropped after the load show through
    /// the saved records, and a snapshot of the result saves them: the same as an index that
    /// made every change in memory.
    @Test func changesSinceTheSnapshotShowThroughAndSaveAgain() throws {
        var reference = populated(1_000)
        var loaded = try reloaded(reference)
        var keys: [DiskKey] = []
        func both(_ change: (inout PersistentIndex.SizeIndex) -> Void) {
            change(&reference)
            change(&loaded)
        }
        for i in stride(from: 0, to: 1_000, by: 3) {
            let replaced = key(i % Self.folders.count, "p\(i)")
            keys.append(replaced)
            both { $0.set(replaced, record(i + 5_000)) }
        }
        for i in stride(from: 1, to: 1_000, by: 7) {
            let removed = key(i % Self.folders.count, "p\(i)")
            keys.append(removed)
            both { $0.remove(removed) }
        }
        for i in 2_000..<2_100 {
            let added = key(i % Self.folders.count, "p\(i)")
            keys.append(added)
            both { $0.set(added, record(i)) }
        }
        both { $0.touch(key(2, "p2"), at: 1e9) }
        both { _ = $0.detach(Self.folders[3]) }
        both { $0.remove(key(0, "p1")) }  // removed twice: nothing more
        expectSame(reference, loaded, keys: keys)
        #expect(loaded.record(key(2, "p2"))?.lastAccess == 1e9)
        let again = try reloaded(loaded, epoch: 10)
        expectSame(reference, again, keys: keys)
        #expect(again.record(key(2, "p2"))?.lastAccess == 1e9)
    }

    /// Journal records say what each change replaced, so replaying them over a loaded
    /// snapshot reads no page, and gives what reading them would.
    @Test func aReplayWithTheReplacedSizesReadsNoPage() throws {
        var reference = populated(600)
        var loaded = try reloaded(reference)
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: 600, by: 5) {
            let changed = key(i % Self.folders.count, "p\(i)")
            let change: PersistentIndex.Change = i % 10 == 0 ? .remove(changed) : .set(changed, record(i + 1))
            let before = reference.record(changed)
            reference.apply(change)
            PersistentIndex.encode(change, before: before, into: &bytes)
        }
        PersistentIndex.decodeJournal(bytes[...]).apply(to: &loaded)
        #expect(loaded.file?.cachedPageCount == 0)
        for folder in Self.folders { #expect(reference.usage(of: folder) == loaded.usage(of: folder)) }
    }

    /// A directory or length that does not add up is refused before any page is read.
    @Test func aDamagedDirectoryOrLengthIsRefused() throws {
        let bytes = try #require(populated(300).snapshot().serialized(epoch: 3)).bytes
        #expect(PersistentIndex.SizeIndex.deserialize(bytes) != nil)
        var flipped = bytes
        flipped[30] ^= 0x40  // in the directory
        #expect(PersistentIndex.SizeIndex.deserialize(flipped) == nil)
        #expect(PersistentIndex.SizeIndex.deserialize(Array(bytes.dropLast())) == nil)
        #expect(PersistentIndex.SizeIndex.deserialize(bytes + [0]) == nil)
        #expect(PersistentIndex.SizeIndex.deserialize(Array(bytes.prefix(40))) == nil)
    }

    /// Pages whose first digests the directory gives out of order — a directory that checks
    /// (its CRC32C made to match) but does not describe its pages — are found by the lookup
    /// that reads them: the index is marked damaged for a rescan, and no lookup goes astray.
    @Test func aDirectoryThatDoesNotDescribeItsPagesIsFoundAtTheLookup() throws {
        var index = PersistentIndex.SizeIndex()
        let keys = (0..<300).map { DiskKey(folder: FolderPath([]), name: EntryName(parameter: "p\($0)")) }
        for (i, key) in keys.enumerated() { index.set(key, record(i)) }
        var bytes = try #require(index.snapshot().serialized(epoch: 4)).bytes
        // One folder, the root: its fences start after the layer count (no older layers),
        // the folder count, the depth, the single-entry flag, the since epoch, the entry count
        // and two usage words, the count of records in the pages and the first page.
        let header = PersistentIndex.SnapshotFile.headerLength
        let fences = header + 1 + 4 + 1 + 1 + 8 + 8 + 8 + 8 + 4 + 4
        let directoryLength = Int(bytes[14]) | Int(bytes[15]) << 8 | Int(bytes[16]) << 16 | Int(bytes[17]) << 24
        #expect(directoryLength == fences - header + 3 * PersistentIndex.PageFences.stride)
        // The first two pages' digests swapped, their checksums left in place.
        for i in 0..<16 { bytes.swapAt(fences + i, fences + PersistentIndex.PageFences.stride + i) }
        let checksum = CRC32C.checksum(
            bytes[header..<(header + directoryLength)],
            seed: CRC32C.checksum(bytes[0..<header])
        )
        withUnsafeBytes(of: checksum.littleEndian) {
            for (i, byte) in $0.enumerated() { bytes[header + directoryLength + i] = byte }
        }

        let (loaded, _) = try #require(PersistentIndex.SizeIndex.deserialize(bytes))
        #expect(!loaded.isDamaged)
        var found = 0
        for (i, key) in keys.enumerated() {
            if let got = loaded.record(key) {
                #expect(got == record(i))
                found += 1
            }
        }
        #expect(loaded.isDamaged)
        #expect(found < keys.count)
    }

    /// A page that fails its checksum marks the index damaged; the store's next size or
    /// `contains` repairs it by a rescan, exact again.
    @Test func aDamagedPageIsFoundWhenReadAndRepairedByARescan() throws {
        try withTemporaryDirectory { dir throws in
            let folder = FolderPath([MD5.hexDigest(of: "pages")])
            let keys = (0..<400).map { DiskKey(folder: folder, name: EntryName(parameter: "p\($0)")) }
            do {
                let store = try DiskStore.open(at: dir)
                for (i, key) in keys.enumerated() {
                    try store.write(
                        Data(count: i),
                        to: key,
                        typeName: "t",
                        parameter: nil,
                        expiry: nil,
                        durability: .none
                    )
                }
                try store.flush()
            }
            // One byte of every page of records flipped, in place.
            let path = dir.path + "/.archivist/index"
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let pages = bytes.count / PersistentIndex.snapshotPageSize - 1
            #expect(pages == 4)
            for page in 1...pages { bytes[page * PersistentIndex.snapshotPageSize + 20] ^= 0x01 }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.write(contentsOf: bytes)
            try handle.close()

            let store = try DiskStore.open(at: dir)
            #expect(store.usage(of: folder).entryCount == 400)  // from the directory
            _ = store.sizes(of: keys[0])  // reads a damaged page
            #expect(store.index.readState { $0.index.isDamaged })
            let files = entryFiles(under: dir)
            #expect(store.usage(of: FolderPath([])).entryCount == files.count)
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(files.values.reduce(0, +)))
            #expect(!store.index.readState { $0.index.isDamaged })
            for key in keys {
                let relative = String(store.path(of: key).dropFirst(store.rootPath.count + 1))
                #expect(store.sizes(of: key)?.logical == files[relative].map(Int64.init))
            }
        }
    }
}
