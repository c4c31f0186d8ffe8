import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Several `DiskStore`s on one root, each opened through its own symbolic link so the process
/// keeps them apart: each has its own index, lock descriptor and journal position, exactly as
/// separate processes would (`flock` locks of separate open files exclude each other even in
/// one process). The real-process tests are in `MultiProcess/CacheManagerMultiProcessTests`.
@Suite struct DiskStoreSharingTests {
    private func write(_ store: DiskStore, _ key: DiskKey, bytes: Int) throws {
        try store.write(
            Data(repeating: 7, count: bytes),
            to: key,
            typeName: "t",
            parameter: nil,
            expiry: nil,
            durability: .none
        )
    }

    /// `count` stores on the folder `dir`, through links `dir-link<i>` (kept alive by the caller).
    private func stores(_ dir: URL, _ count: Int) throws -> [DiskStore] {
        try (0..<count).map { i in try storeThroughLink(dir, "link\(i)") }
    }

    private func onDisk(_ dir: URL) -> (count: Int, bytes: Int64) {
        let files = entryFiles(under: dir)
        return (files.count, Int64(files.values.reduce(0, +)))
    }

    /// Before the shared journal each store saved its own index over the others' and marked it
    /// clean: two writers left a fresh opener 373 entries for 682 files.
    @Test func storesWritingOneRootAllReportExactSizesAndContains() throws {
        try withTemporaryDirectory { dir throws in
            let (a, b) = try {
                let s = try stores(dir, 2)
                return (s[0], s[1])
            }()
            var rng = SplitMix64(seed: 42)
            for i in 0..<300 {
                let writer = Bool.random(using: &rng) ? a : b
                let k = hashedKey(["x", "y"][i % 2], "p\(Int.random(in: 0..<60, using: &rng))")
                if Int.random(in: 0..<5, using: &rng) == 0 {
                    try writer.remove(k)
                } else {
                    try write(writer, k, bytes: Int.random(in: 1..<2_000, using: &rng))
                }
                if i % 50 == 49 {
                    let disk = onDisk(dir)
                    for store in [a, b] {
                        #expect(store.usage(of: FolderPath([])).entryCount == disk.count, "step \(i)")
                        #expect(store.usage(of: FolderPath([])).logicalBytes == disk.bytes, "step \(i)")
                    }
                }
            }
            try a.clear([FolderPath([MD5.hexDigest(of: "x")])])
            let fresh = try stores(dir, 3)[2]
            let disk = onDisk(dir)
            for store in [a, b, fresh] {
                #expect(store.usage(of: FolderPath([])).entryCount == disk.count)
                #expect(store.usage(of: FolderPath([])).logicalBytes == disk.bytes)
                for p in 0..<60 {
                    for folder in ["x", "y"] {
                        let k = hashedKey(folder, "p\(p)")
                        #expect(store.contains(k) == FileManager.default.fileExists(atPath: store.path(of: k)))
                    }
                }
            }
        }
    }

    /// Two stores filling one nested folder in turns, either of them clearing the folder or its
    /// parent now and then: each store applies the other's records to its index through the
    /// same set path as its own (which remembers the last folder set and its nodes), so after
    /// every step both must count exactly the files on disk — entries, logical and allocated
    /// bytes — in the folder, its parent and the root.
    @Test func interleavedSetsAndClearsOfOneFolderKeepEveryIndexExact() throws {
        try withTemporaryDirectory { dir throws in
            let (a, b) = try {
                let s = try stores(dir, 2)
                return (s[0], s[1])
            }()
            let parent = FolderPath([MD5.hexDigest(of: "p")])
            let folder = FolderPath(parent.components + [MD5.hexDigest(of: "f")])
            var rng = SplitMix64(seed: 7)
            for step in 0..<240 {
                let store = Bool.random(using: &rng) ? a : b
                switch Int.random(in: 0..<20, using: &rng) {
                case 0: try store.clear([folder])
                case 1: try store.clear([parent])
                default:
                    let parameter = "k\(Int.random(in: 0..<40, using: &rng))"
                    try store.write(
                        Data(repeating: 1, count: Int.random(in: 0..<9_000, using: &rng)),
                        to: DiskKey(folder: folder, name: EntryName(parameter: parameter)),
                        typeName: "t",
                        parameter: parameter,
                        expiry: nil,
                        durability: .none
                    )
                }
                var expected = DiskUsage()
                for (relative, size) in entryFiles(under: dir) {
                    var status = stat()
                    #expect(lstat(dir.path + "/" + relative, &status) == 0)
                    expected.entryCount += 1
                    expected.logicalBytes += Int64(size)
                    expected.allocatedBytes += Int64(status.st_blocks) * 512
                }
                for reader in [a, b] {
                    #expect(reader.usage(of: folder) == expected, "step \(step)")
                    #expect(reader.usage(of: parent) == expected, "step \(step)")
                    #expect(reader.usage(of: FolderPath([])) == expected, "step \(step)")
                }
            }
        }
    }

    /// A process killed between its rename and its journal record leaves the intent word set;
    /// the next process to change anything rescans, so the entry the record lacked is counted.
    @Test func aHolderThatDiedBeforeItsRecordIsRepairedByTheNextWriter() throws {
        try withTemporaryDirectory { dir throws in
            let (a, b) = try {
                let s = try stores(dir, 2)
                return (s[0], s[1])
            }()
            try write(a, hashedKey("x", "1"), bytes: 100)
            // What a kill -9 between rename and record leaves: a file the journal lacks, intent set.
            a.index.shared.intent = true
            let orphan = hashedKey("x", "2")
            let header = [UInt8](repeating: 0, count: 0).withUnsafeBytes {
                EntryHeader(typeName: "t", parameter: nil, writeDate: Date(), expiry: nil, payload: $0).encoded()
            }
            try Data(header).write(to: URL(fileURLWithPath: a.path(of: orphan)))
            try write(b, hashedKey("y", "3"), bytes: 50)
            #expect(!b.index.shared.intent)
            let disk = onDisk(dir)
            for store in [a, b] {
                #expect(store.contains(orphan))
                #expect(store.usage(of: FolderPath([])).entryCount == disk.count)
                #expect(store.usage(of: FolderPath([])).logicalBytes == disk.bytes)
            }
        }
    }

    /// A long journal is folded into a snapshot; the other stores reload it and stay exact.
    @Test func aFoldedJournalIsReloadedByTheOthers() throws {
        try withTemporaryDirectory { dir throws in
            let (a, b) = try {
                let s = try stores(dir, 2)
                return (s[0], s[1])
            }()
            for i in 0..<40 { try write(a, hashedKey("x", "\(i)"), bytes: 10 + i) }
            try b.flush()
            for i in 40..<50 { try write(b, hashedKey("x", "\(i)"), bytes: 10 + i) }
            let disk = onDisk(dir)
            #expect(a.usage(of: FolderPath([])).entryCount == disk.count)
            #expect(a.usage(of: FolderPath([])).logicalBytes == disk.bytes)
            let changes = a.changes(since: 0)
            #expect(changes.changes.contains { $0.name == nil && $0.origin == 0 })  // "anything may have changed"
        }
    }
}
