import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A snapshot save that fails (its rename fails here) must not leave the intent word set:
/// while it is set, every operation of every process on the root rescans it. A rescan bumps
/// the journal epoch, so an unchanged epoch after later operations proves there was none.
@Suite struct SnapshotSaveFailureTests {
    private func key(_ parameter: String) -> DiskKey {
        DiskKey(folder: FolderPath([MD5.hexDigest(of: "x")]), name: EntryName(parameter: parameter))
    }

    private func write(_ store: DiskStore, _ parameter: String, bytes: Int) throws {
        try store.write(
            Data(repeating: 3, count: bytes),
            to: key(parameter),
            typeName: "t",
            parameter: nil,
            expiry: nil,
            durability: .none
        )
    }

    private func expectExact(_ stores: [DiskStore], _ dir: URL) {
        let files = entryFiles(under: dir)
        for store in stores {
            #expect(store.usage(of: FolderPath([])).entryCount == files.count)
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(files.values.reduce(0, +)))
        }
    }

    /// Before, the failed `flush()` left the word set and the next write of either store rescanned.
    @Test(arguments: FaultInjector.Mode.allCases)
    func aFailedSaveWithoutAScanLeavesNoRescanBehind(mode: FaultInjector.Mode) throws {
        try withTemporaryDirectory { dir throws in
            let injector = FaultInjector(mode: mode)
            let a = try storeThroughLink(dir, "a", fileSystem: injector.fileSystem)
            let b = try storeThroughLink(dir, "b")
            try write(a, "1", bytes: 100)
            injector.arm(.init(operation: .rename, n: 1, persistent: false, errno: EIO))
            #expect(throws: StorageError.self) { try a.flush() }
            #expect(injector.disarm() == 1)
            #expect(!a.index.shared.intent)
            let epoch = a.index.shared.epoch
            try write(b, "2", bytes: 200)
            try write(a, "3", bytes: 300)
            #expect(a.index.shared.epoch == epoch)
            expectExact([a, b], dir)
        }
    }

    /// Before, a rescan whose save failed left the word set, so every later operation of
    /// every process (reads of sizes and `contains` included) rescanned again.
    @Test(arguments: FaultInjector.Mode.allCases)
    func aFailedSaveAfterAScanLeavesNoRescanBehind(mode: FaultInjector.Mode) throws {
        try withTemporaryDirectory { dir throws in
            let injector = FaultInjector(mode: mode)
            let a = try storeThroughLink(dir, "a", fileSystem: injector.fileSystem)
            let b = try storeThroughLink(dir, "b")
            try write(b, "1", bytes: 100)
            b.index.shared.intent = true  // as a holder killed between a change and its record leaves it
            injector.arm(.init(operation: .rename, n: 1, persistent: false, errno: EIO))
            #expect(a.usage(of: FolderPath([])).entryCount == 1)  // rescans; the snapshot's rename fails
            #expect(injector.disarm() == 1)
            #expect(!a.index.shared.intent)
            expectExact([a, b], dir)
            let epoch = a.index.shared.epoch
            #expect(b.contains(key("1")))
            try write(b, "3", bytes: 300)
            try write(a, "4", bytes: 400)
            #expect(b.contains(key("4")))
            #expect(a.index.shared.epoch == epoch)
            expectExact([a, b], dir)
        }
    }
}
