import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read of an entry whose size the store's index holds makes no `fstat` (one `read` of the
/// size it expects); a file of another size — replaced behind the index's back, as by another
/// process this one has not caught up with, or read short — is read whole all the same, and
/// only a really bad one is discarded.
@Suite struct IndexedSizeReadTests {
    private static func key(_ parameter: String) -> DiskKey {
        DiskKey(folder: FolderPath([MD5.hexDigest(of: "f")]), name: EntryName(parameter: parameter))
    }

    /// The bytes of a valid entry file for `parameter` holding `payload`.
    private static func entryFile(_ payload: Data, parameter: String) -> Data {
        let header = EntryHeader(
            typeName: "t",
            parameter: parameter,
            writeDate: Date(timeIntervalSince1970: 1),
            expiry: nil,
            payloadLength: payload.count,
            payloadChecksum: payload.withUnsafeBytes { CRC32C.checksum($0) }
        )
        return Data(header.encoded()) + payload
    }

    /// Counts the `fstat` calls a store makes.
    final class Probe: Sendable {
        let statuses = Locked(0)
        /// When set, no `read` returns more than this many bytes.
        let readCap = Locked<Int?>(nil)

        func fileSystem() -> FileSystem {
            var fs = FileSystem.posix
            fs.statusWithoutTimes = { [self] fd in
                statuses.withLock { $0 += 1 }
                return FileSystem.posix.statusWithoutTimes(fd)
            }
            fs.read = { [self] fd, buffer, count in
                FileSystem.posix.read(fd, buffer, min(count, readCap.withLock { $0 } ?? count))
            }
            return fs
        }
    }

    @Test(arguments: [1, 1_000, 100_000])
    func aReadOfAnIndexedEntryMakesNoFstat(count: Int) throws {
        try withTemporaryDirectory { dir throws in
            let probe = Probe()
            let store = try DiskStore.open(at: dir, fileSystem: probe.fileSystem())
            let payload = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            try store.write(payload, to: Self.key("p"), typeName: "t", parameter: "p", expiry: nil, durability: .none)
            let before = probe.statuses.withLock { $0 }
            #expect(try store.read(Self.key("p"), typeName: "t", parameter: "p") { Data($0.payloadBytes) } == payload)
            #expect(probe.statuses.withLock { $0 } == before)
        }
    }

    /// Another valid entry of the key put in place without the store: smaller, the same size
    /// and larger than the index says.
    @Test(arguments: [10, 100_000, 300_000])
    func anEntryReplacedBehindTheIndexIsReadWhole(newCount: Int) throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let key = Self.key("p")
            try store.write(
                Data(repeating: 1, count: 100_000),
                to: key,
                typeName: "t",
                parameter: "p",
                expiry: nil,
                durability: .none
            )
            let payload = Data((0..<newCount).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
            try Self.entryFile(payload, parameter: "p").write(to: URL(fileURLWithPath: store.path(of: key)))
            #expect(try store.read(key, typeName: "t", parameter: "p") { Data($0.payloadBytes) } == payload)
            #expect(try store.read(key, typeName: "t", parameter: "p") { Data($0.payloadBytes) } == payload)
        }
    }

    /// Reads that return fewer bytes than asked: the first `read` falls short of the size the
    /// index holds (then the file is read again, whole), or — for a file larger than the index
    /// says — returns exactly that size, which looks complete until the header disagrees.
    @Test(arguments: [false, true])
    func shortReadsOfAnIndexedEntryReadItWhole(largerFile: Bool) throws {
        try withTemporaryDirectory { dir throws in
            let probe = Probe()
            let store = try DiskStore.open(at: dir, fileSystem: probe.fileSystem())
            let key = Self.key("p")
            let original = Data((0..<50_000).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 3) })
            try store.write(original, to: key, typeName: "t", parameter: "p", expiry: nil, durability: .none)
            let indexed = try #require(store.sizes(of: key)).logical
            var expected = original
            if largerFile {
                expected = Data((0..<80_000).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 11) })
                try Self.entryFile(expected, parameter: "p").write(to: URL(fileURLWithPath: store.path(of: key)))
                probe.readCap.withLock { $0 = Int(indexed) }
            } else {
                probe.readCap.withLock { $0 = 4_096 }
            }
            #expect(try store.read(key, typeName: "t", parameter: "p") { Data($0.payloadBytes) } == expected)
            probe.readCap.withLock { $0 = nil }
            #expect(try store.read(key, typeName: "t", parameter: "p") { Data($0.payloadBytes) } == expected)
        }
    }

    /// A damaged entry of the size the index holds is still reported and discarded (its
    /// identity examined before the discard), and the next read misses.
    @Test func aDamagedIndexedEntryIsDiscarded() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let key = Self.key("p")
            try store.write(
                Data(repeating: 9, count: 10_000),
                to: key,
                typeName: "t",
                parameter: "p",
                expiry: nil,
                durability: .none
            )
            let url = URL(fileURLWithPath: store.path(of: key))
            var bytes = try Data(contentsOf: url)
            bytes[bytes.count - 5] ^= 0x20
            try bytes.write(to: url)
            let error = #expect(throws: StorageError.self) {
                try store.read(key, typeName: "t", parameter: "p") { _ in () }
            }
            #expect(error?.code == .corruptEntry)
            #expect(!FileManager.default.fileExists(atPath: url.path))
            #expect(try store.read(key, typeName: "t", parameter: "p") { _ in () } == nil)
        }
    }
}
