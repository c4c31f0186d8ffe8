import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

@Suite struct DiskStoreTests {
    private func key(_ folder: [String], _ parameter: String?) -> DiskKey {
        DiskKey(folder: FolderPath(folder.map { MD5.hexDigest(of: $0) }), name: EntryName(parameter: parameter))
    }

    private func write(_ store: DiskStore, _ key: DiskKey, bytes: Int, parameter: String?) throws {
        try store.write(
            Data(repeating: 7, count: bytes),
            to: key,
            typeName: "t",
            parameter: parameter,
            expiry: nil,
            durability: .none
        )
    }

    private func sizeOnDisk(_ dir: URL) -> Int64 {
        Int64(entryFiles(under: dir).values.reduce(0, +))
    }

    /// `path(of:)` writes the digest's hex in place: it must read as root, folder and file name joined.
    @Test func anEntrysPathIsTheRootTheFolderAndItsFileName() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            for key in [key(["a"], nil), key(["a", "b"], "p"), key(["c"], ""), key(["c", "d", "e"], "/v1/orders?ä")] {
                #expect(store.path(of: key) == store.rootPath + "/" + key.folder.relativePath + "/" + key.name.fileName)
            }
        }
    }

    /// A read without the key's lock (a manager without a memory tier) returns what a locked
    /// one does, and still removes a damaged file.
    @Test func anUnlockedReadReadsAndDiscardsLikeALockedOne() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let key = key(["a"], "p")
            try write(store, key, bytes: 100, parameter: "p")
            for locking in [true, false] {
                #expect(
                    try store.read(key, typeName: "t", parameter: "p", locking: locking) { $0.payload.count } == 100
                )
            }
            var bytes = try Data(contentsOf: URL(fileURLWithPath: store.path(of: key)))
            bytes[bytes.count - 1] ^= 1
            try bytes.write(to: URL(fileURLWithPath: store.path(of: key)))
            #expect(throws: StorageError.self) {
                try store.read(key, typeName: "t", parameter: "p", locking: false) { _ in () }
            }
            #expect(try store.read(key, typeName: "t", parameter: "p", locking: false) { _ in () } == nil)
            #expect(store.usage(of: FolderPath([])) == DiskUsage())
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 0xC0FFEE])
    func randomOperationsKeepTheIndexEqualToTheDisk(seed: UInt64) throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            var rng = SplitMix64(seed: seed)
            let folders = [["a"], ["a", "b"], ["c"], ["c", "d", "e"]]
            for step in 0..<400 {
                let folder = folders[Int.random(in: 0..<folders.count, using: &rng)]
                let parameter: String? = Bool.random(using: &rng) ? nil : "p\(Int.random(in: 0..<12, using: &rng))"
                let key = key(folder, parameter)
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<6: try write(store, key, bytes: Int.random(in: 0..<3_000, using: &rng), parameter: parameter)
                case 6..<8: try store.remove(key)
                case 8: _ = try store.read(key, typeName: "t", parameter: parameter) { $0.payload.count }
                default: try store.clear([FolderPath(folder.map { MD5.hexDigest(of: $0) })])
                }
                let root = store.usage(of: FolderPath([]))
                #expect(root.logicalBytes == sizeOnDisk(dir), "seed \(seed) step \(step)")
                #expect(root.entryCount == entryFiles(under: dir).count, "seed \(seed) step \(step)")
            }
            try store.clear(folders.map { FolderPath($0.map { MD5.hexDigest(of: $0) }) })
            #expect(store.usage(of: FolderPath([])) == DiskUsage())
            store.waitForTrash()
            #expect(entryFiles(under: dir).isEmpty)
            #expect(allPaths(under: dir.appendingPathComponent(".archivist/trash")).isEmpty)
        }
    }

    @Test func indexSurvivesACleanReopen() throws {
        try withTemporaryDirectory { dir throws in
            var expected = DiskUsage()
            do {
                let store = try DiskStore.open(at: dir)
                for i in 0..<50 { try write(store, key(["x"], "\(i)"), bytes: i * 10, parameter: "\(i)") }
                expected = store.usage(of: FolderPath([]))
                try store.flush()
            }
            #expect(try Data(contentsOf: dir.appendingPathComponent(".archivist/dirty")) == Data("C".utf8))
            let reopened = try DiskStore.open(at: dir)
            #expect(reopened.usage(of: FolderPath([])) == expected)
            #expect(expected.entryCount == 50)
        }
    }

    @Test func aCrashMarkerMakesTheNextOpenRescanAndSweepTemporaries() throws {
        try withTemporaryDirectory { dir throws in
            let folder = FolderPath([MD5.hexDigest(of: "x")])
            do {
                let store = try DiskStore.open(at: dir)
                try write(store, key(["x"], "a"), bytes: 100, parameter: "a")
                try store.flush()
            }
            // What a crash mid-write leaves: the marker, a new entry the saved index lacks,
            // and a temporary that never got renamed.
            try Data("D".utf8).write(to: dir.appendingPathComponent(".archivist/dirty"))
            let payload = [UInt8](repeating: 1, count: 500)
            let header = payload.withUnsafeBytes {
                EntryHeader(typeName: "t", parameter: "b", writeDate: Date(), expiry: nil, payload: $0)
            }
            try Data(header.encoded() + payload).write(
                to: dir.appendingPathComponent(folder.relativePath + "/" + EntryName(parameter: "b").fileName)
            )
            try Data("half".utf8).write(
                to: dir.appendingPathComponent(folder.relativePath + "/" + abandonedTemporaryName(1))
            )
            try Data("half".utf8).write(to: dir.appendingPathComponent(".archivist/" + abandonedTemporaryName(2)))
            let store = try DiskStore.open(at: dir)
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/.archivist/" + abandonedTemporaryName(2)))
            #expect(store.usage(of: folder).entryCount == 2)
            #expect(store.usage(of: FolderPath([])).logicalBytes == sizeOnDisk(dir))
            #expect(
                !FileManager.default.fileExists(
                    atPath: dir.path + "/" + folder.relativePath + "/" + abandonedTemporaryName(1)
                )
            )
        }
    }

    @Test(arguments: ["missing", "garbage", "bitflip"])
    func aMissingOrDamagedIndexIsRebuiltByAScan(damage: String) throws {
        try withTemporaryDirectory { dir throws in
            var expected = DiskUsage()
            do {
                let store = try DiskStore.open(at: dir)
                for i in 0..<20 { try write(store, key(["y", "z"], "\(i)"), bytes: 64 + i, parameter: "\(i)") }
                expected = store.usage(of: FolderPath([]))
                try store.flush()
            }
            let index = dir.appendingPathComponent(".archivist/index")
            switch damage {
            case "missing": try FileManager.default.removeItem(at: index)
            case "garbage": try Data("nonsense".utf8).write(to: index)
            default:
                var bytes = try Data(contentsOf: index)
                bytes[bytes.count / 2] ^= 0x40
                try bytes.write(to: index)
            }
            let reopened = try DiskStore.open(at: dir)
            #expect(reopened.usage(of: FolderPath([])).logicalBytes == expected.logicalBytes)
            #expect(reopened.usage(of: FolderPath([])).entryCount == expected.entryCount)
        }
    }

    @Test func leftoverTrashIsDeletedOnOpen() throws {
        try withTemporaryDirectory { dir throws in
            let leftover = dir.appendingPathComponent(".archivist/trash/old/deep")
            try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: true)
            try Data("x".utf8).write(to: leftover.appendingPathComponent("f"))
            let store = try DiskStore.open(at: dir)
            store.waitForTrash()
            #expect(allPaths(under: dir.appendingPathComponent(".archivist/trash")).isEmpty)
        }
    }

    @Test func byteLimitEvictsTheLeastRecentlyAccessedEntries() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let folder = ["lru"]
            for i in 0..<4 { try write(store, key(folder, "\(i)"), bytes: 900, parameter: "\(i)") }
            _ = try store.read(key(folder, "0"), typeName: "t", parameter: "0") { _ in () }  // 0 is now recent
            let evicted = try store.write(
                Data(repeating: 1, count: 900),
                to: key(folder, "4"),
                typeName: "t",
                parameter: "4",
                expiry: nil,
                durability: .none,
                byteLimit: 3_000
            )
            #expect(Set(evicted) == [key(folder, "1"), key(folder, "2")])
            #expect(store.contains(key(folder, "0")))
            #expect(store.contains(key(folder, "4")))
            #expect(store.usage(of: FolderPath(folder.map { MD5.hexDigest(of: $0) })).logicalBytes <= 3_000)
            #expect(store.usage(of: FolderPath([])).logicalBytes == sizeOnDisk(dir))
        }
    }
}
