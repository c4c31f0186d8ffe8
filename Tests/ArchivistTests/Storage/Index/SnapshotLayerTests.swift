import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The snapshot is a stack of layers: a fold writes what changed since the last one, a lookup
/// reads the newest layer that holds a record, a folder cleared since a layer does not see it,
/// and a missing or damaged layer is repaired by a rescan.
@Suite struct SnapshotLayerTests {
    private typealias Record = PersistentIndex.Record
    private typealias SizeIndex = PersistentIndex.SizeIndex

    private static let folders = [FolderPath([]), FolderPath(["a"]), FolderPath(["a", "b"]), FolderPath(["c"])]

    private func key(_ folder: Int, _ parameter: String?) -> DiskKey {
        DiskKey(folder: Self.folders[folder], name: EntryName(parameter: parameter))
    }

    /// Writes an entry of `count` zero bytes of type `t` at `key`, not synced.
    private static func put(_ count: Int, at key: DiskKey, in store: DiskStore) throws {
        try store.write(Data(count: count), to: key, typeName: "t", parameter: nil, expiry: nil, durability: .none)
    }

    private func record(_ i: Int) -> Record {
        Record(logical: Int64(100 + i), allocated: Int64(4096 * (1 + i % 3)), lastAccess: Double(i))
    }

    /// `index` saved as a layer of `epoch` on the layers whose bytes `layers` holds by epoch
    /// (`merging` of them merged in), and loaded again from the bytes; the new bytes join `layers`.
    private func folded(
        _ index: SizeIndex,
        epoch: UInt64,
        merging: Int = 0,
        layers: inout [UInt64: [UInt8]]
    ) throws -> SizeIndex {
        let serialized = try #require(index.snapshot().serialized(epoch: epoch, merging: merging))
        let known = layers
        let (loaded, saved) = try #require(SizeIndex.deserialize(serialized.bytes, base: { known[$0] }))
        #expect(saved == epoch)
        layers[epoch] = serialized.bytes
        return loaded
    }

    private func expectSame(_ a: SizeIndex, _ b: SizeIndex, keys: [DiskKey]) {
        for folder in Self.folders { #expect(a.usage(of: folder) == b.usage(of: folder)) }
        for key in keys { #expect(a.record(key) == b.record(key), "\(key)") }
        for folder in Self.folders {
            #expect(
                a.leastRecentlyAccessed(in: folder).map(\.1) == b.leastRecentlyAccessed(in: folder).map(\.1)
            )
        }
    }

    /// Sets, replacements, removals of records an older layer holds, and a folder cleared and
    /// filled again, each saved as a layer on the one before: a lookup through the stack finds
    /// what an index kept in memory holds, and a merge of every layer says the same.
    @Test func lookupsGoThroughTheLayersNewestFirst() throws {
        var reference = SizeIndex()
        var index = SizeIndex()
        func apply(_ change: PersistentIndex.Change) {
            reference.apply(change)
            index.apply(change)
        }
        let keys = (0..<900).map { key($0 % Self.folders.count, $0 % 50 == 7 ? nil : "p\($0)") }
        for i in 0..<600 { apply(.set(keys[i], record(i))) }
        var layers: [UInt64: [UInt8]] = [:]
        index = try folded(index, epoch: 1, merging: index.snapshot().layers.count, layers: &layers)
        // Layer 2: replacements, removals of layer 1's records, new entries.
        for i in stride(from: 0, to: 600, by: 5) { apply(.set(keys[i], record(i + 1_000))) }
        for i in stride(from: 1, to: 600, by: 7) { apply(.remove(keys[i])) }
        for i in 600..<700 { apply(.set(keys[i], record(i))) }
        index = try folded(index, epoch: 2, layers: &layers)
        #expect(index.bases.map(\.epoch) == [1])
        expectSame(reference, index, keys: keys)
        // Layer 3: a folder cleared and filled again: the older layers no longer count for it.
        apply(.clear(Self.folders[2]))
        for i in stride(from: 2, to: 900, by: 4) { apply(.set(keys[i], record(i + 2_000))) }
        for i in stride(from: 3, to: 300, by: 11) { apply(.remove(keys[i])) }
        index = try folded(index, epoch: 3, layers: &layers)
        #expect(index.bases.map(\.epoch) == [2, 1])
        expectSame(reference, index, keys: keys)
        // Every layer merged into one: the same records, nothing stacked on.
        let merged = try folded(index, epoch: 4, merging: 3, layers: &layers)
        #expect(merged.bases.isEmpty)
        expectSame(reference, merged, keys: keys)
    }

    /// A fold of a few changes to a large snapshot writes a layer of about their records, not
    /// the snapshot; the layer below stays under its epoch's name, and a store opened afresh
    /// reads the stack to the same sizes as the files.
    @Test func aFoldWritesOnlyWhatChanged() throws {
        try withTemporaryDirectory { dir throws in
            let folder = FolderPath([MD5.hexDigest(of: "fold")])
            func key(_ i: Int) -> DiskKey { DiskKey(folder: folder, name: EntryName(parameter: "p\(i)")) }
            let internalPath = dir.path + "/.archivist/"
            func fileSize(_ name: String) -> Int? {
                (try? FileManager.default.attributesOfItem(atPath: internalPath + name)[.size] as? Int) ?? nil
            }
            do {
                let store = try DiskStore.open(at: dir)
                for i in 0..<3_000 {
                    try Self.put(10, at: key(i), in: store)
                }
                try store.flush()
                let epoch = store.index.shared.epoch
                let whole = try #require(fileSize("index"))
                #expect(whole > 3_000 * PersistentIndex.snapshotRecordSize)
                for i in 0..<10 {
                    try Self.put(20, at: key(i), in: store)
                }
                #expect(try store.remove(key(20)))
                try store.flush()
                #expect(store.index.shared.epoch == epoch + 1)
                #expect(store.index.readState { $0.journalOffset } == 0)
                // Eleven records: the header, the directory and one page.
                #expect(try #require(fileSize("index")) <= 2 * PersistentIndex.snapshotPageSize)
                #expect(fileSize(String(store.index.layerPath(of: epoch).split(separator: "/").last!)) == whole)
            }
            let files = entryFiles(under: dir)
            let store = try DiskStore.open(at: dir)
            #expect(store.index.readState { $0.index.bases.count } == 1)
            #expect(store.usage(of: folder).entryCount == 2_999)
            // The tools read the stack too: the index comparison, and the newest layer's summary.
            let comparison = try DiskStore.compareIndex(rootPath: store.rootPath, files: files.mapValues(Int64.init))
            #expect(comparison.agrees)
            #expect(comparison.indexedEntries == 2_999)
            let top = try [UInt8](Data(contentsOf: URL(fileURLWithPath: internalPath + "index")))
            if case .indexSnapshot(let summary?) = PersistentIndex.internalFileSummary(of: .indexSnapshot, bytes: top) {
                #expect(summary.entries == 2_999)
                #expect(summary.version == 4)
            } else {
                Issue.record("no summary of the newest layer")
            }
            #expect(store.usage(of: folder).logicalBytes == Int64(files.values.reduce(0, +)))
            for i in 0..<3_000 {
                let relative = String(store.path(of: key(i)).dropFirst(store.rootPath.count + 1))
                #expect(store.sizes(of: key(i))?.logical == files[relative].map(Int64.init))
            }
        }
    }

    /// A layer the snapshot stacks on that is missing, or damaged, is repaired by a rescan at
    /// the next open: exact sizes, not a crash.
    @Test(arguments: [false, true])
    func aMissingOrDamagedLayerIsRepairedByARescan(damaged: Bool) throws {
        try withTemporaryDirectory { dir throws in
            let folder = FolderPath([MD5.hexDigest(of: "layers")])
            func key(_ i: Int) -> DiskKey { DiskKey(folder: folder, name: EntryName(parameter: "p\(i)")) }
            let layer: String
            do {
                let store = try DiskStore.open(at: dir)
                // Large enough that a fold of one change stacks on it rather than merging it.
                for i in 0..<2_000 {
                    try Self.put(i % 50, at: key(i), in: store)
                }
                try store.flush()
                layer = store.index.layerPath(of: store.index.shared.epoch)
                try Self.put(7, at: key(1), in: store)
                try store.flush()
                #expect(FileManager.default.fileExists(atPath: layer))
            }
            if damaged {
                var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: layer)))
                bytes[30] ^= 0x01  // in the directory: its checksum fails
                try Data(bytes).write(to: URL(fileURLWithPath: layer))
            } else {
                try FileManager.default.removeItem(atPath: layer)
            }
            let files = entryFiles(under: dir)
            let store = try DiskStore.open(at: dir)
            #expect(store.usage(of: folder).entryCount == 2_000)
            #expect(store.usage(of: folder).logicalBytes == Int64(files.values.reduce(0, +)))
            for i in 0..<2_000 {
                let relative = String(store.path(of: key(i)).dropFirst(store.rootPath.count + 1))
                #expect(store.sizes(of: key(i))?.logical == files[relative].map(Int64.init))
            }
            // The repair saved one layer and removed the others.
            #expect(store.index.readState { $0.index.bases.isEmpty })
            #expect(!FileManager.default.fileExists(atPath: layer))
        }
    }

    /// A fold merges a newest layer no more than twice the bytes gathered, keeps the stack at
    /// the cap when it can within the budget, and never reads more than the budget.
    @Test func aFoldMergesLayersGeometricallyWithinItsBudget() {
        let page = PersistentIndex.snapshotPageSize
        let budget = PersistentIndex.foldMergeBudget
        // A small change on a large base: a layer of its own.
        #expect(PersistentIndex.layersToMerge(changedBytes: 2 * page, layerBytes: [40 * budget]) == 0)
        // Layers no larger than twice what is gathered are merged, a larger one stops it.
        #expect(
            PersistentIndex.layersToMerge(changedBytes: 2 * page, layerBytes: [2 * page, 4 * page, 32 * page]) == 2
        )
        #expect(PersistentIndex.layersToMerge(changedBytes: 2 * page, layerBytes: [5 * page, 4 * page]) == 0)
        #expect(PersistentIndex.layersToMerge(changedBytes: 2 * page, layerBytes: [3 * page, 100 * page]) == 1)
        // Past the cap, the newest are merged whatever their size, within the budget.
        let deep = [Int](repeating: budget / 2, count: PersistentIndex.snapshotLayerCap) + [40 * budget]
        #expect(PersistentIndex.layersToMerge(changedBytes: page, layerBytes: deep) == 1)
        // Equal layers below the cap merge as a binary counter does, up to the budget.
        let equal = [Int](repeating: budget / 4, count: PersistentIndex.snapshotLayerCap) + [40 * budget]
        #expect(PersistentIndex.layersToMerge(changedBytes: page, layerBytes: equal) == 3)
        // Not beyond the budget: a stack of layers too large to merge is left as it is.
        let heavy = [Int](repeating: budget, count: PersistentIndex.snapshotLayerCap) + [40 * budget]
        #expect(PersistentIndex.layersToMerge(changedBytes: page, layerBytes: heavy) == 0)
    }

    /// A merge of every layer in the background (what a stack past the cap schedules) leaves one
    /// layer and removes the others; a flush meanwhile does not wait for the fold queue.
    @Test func theMergeRunsInTheBackgroundAndFlushDoesNotWaitForIt() throws {
        try withTemporaryDirectory { dir throws in
            let folder = FolderPath([MD5.hexDigest(of: "merge")])
            @Sendable func key(_ i: Int) -> DiskKey { DiskKey(folder: folder, name: EntryName(parameter: "p\(i)")) }
            let store = try DiskStore.open(at: dir)
            for i in 0..<400 {
                try Self.put(i, at: key(i), in: store)
            }
            try store.flush()
            let first = store.index.shared.epoch
            // The fold queue held: a flush that waited for it would never return.
            let held = DispatchSemaphore(value: 0)
            store.index.foldQueue.async { held.wait() }
            let flushed = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                for i in 0..<3 {
                    _ = try? store.write(
                        Data(count: 3),
                        to: key(i),
                        typeName: "t",
                        parameter: nil,
                        expiry: nil,
                        durability: .none
                    )
                    try? store.flush()
                }
                flushed.signal()
            }
            let returned = flushed.wait(timeout: .now() + 60) == .success
            held.signal()
            #expect(returned)
            #expect(store.index.shared.epoch > first)
            #expect(store.index.snapshotLayerCount > 1)
            // The background merge: one layer, the others removed.
            #expect(try store.index.foldJournal(merging: true) == .folded)
            #expect(store.index.snapshotLayerCount == 1)
            let layers = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/.archivist")
                .filter { $0.hasPrefix("index.") }
            #expect(layers.isEmpty)
            let files = entryFiles(under: dir)
            #expect(store.usage(of: folder).logicalBytes == Int64(files.values.reduce(0, +)))
        }
    }

    /// A fold that stops half-way — its new layer's rename fails once the layer below is linked
    /// to its epoch's name, or the journal cannot be emptied once the new layer is in place (the
    /// intent word then stays set, as a holder killed there leaves it) — leaves a root that two
    /// stores, and a store opened afresh, read to the files' exact sizes; the next fold stacks
    /// on a layer name the failed one left.
    @Test(arguments: [FaultInjector.Operation.rename, .ftruncate])
    func aFoldStoppedHalfWayLeavesExactSizes(operation: FaultInjector.Operation) throws {
        try withTemporaryDirectory { dir throws in
            let folder = FolderPath([MD5.hexDigest(of: "x")])
            func key(_ i: Int) -> DiskKey { DiskKey(folder: folder, name: EntryName(parameter: "p\(i)")) }
            func expectExact(_ store: DiskStore) {
                let files = entryFiles(under: dir)
                #expect(store.usage(of: FolderPath([])).entryCount == files.count)
                #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(files.values.reduce(0, +)))
                for i in 0..<2_001 {
                    let relative = String(store.path(of: key(i)).dropFirst(store.rootPath.count + 1))
                    #expect(store.sizes(of: key(i))?.logical == files[relative].map(Int64.init))
                }
            }
            do {
                let injector = FaultInjector()
                let a = try storeThroughLink(dir, "a", fileSystem: injector.fileSystem)
                let b = try storeThroughLink(dir, "b")
                for i in 0..<2_000 {
                    try a.write(
                        Data(count: i % 40),
                        to: key(i),
                        typeName: "t",
                        parameter: nil,
                        expiry: nil,
                        durability: .none
                    )
                }
                try a.flush()
                try a.write(Data(count: 77), to: key(1), typeName: "t", parameter: nil, expiry: nil, durability: .none)
                #expect(try a.remove(key(2)))
                injector.arm(.init(operation: operation, n: 1, persistent: false, errno: EIO))
                if operation == .rename {
                    #expect(throws: StorageError.self) { try a.flush() }
                    #expect(!a.index.shared.intent)  // nothing changed but a link
                } else {
                    #expect(try a.index.foldJournal() == .lost)
                    #expect(a.index.shared.intent)  // the next holder repairs
                }
                #expect(injector.disarm() == 1)
                try b.write(
                    Data(count: 5),
                    to: key(2_000),
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
                expectExact(a)
                expectExact(b)
                try a.flush()
                expectExact(b)
            }
            let store = try DiskStore.open(at: dir)
            expectExact(store)
        }
    }
}
