import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A rescan an open finds due on a large root runs in the background: the open returns at
/// once, reads are served while the walk goes on, its progress can be read, and what needs the
/// size index waits for it and then answers exactly. A small root's rescan stays in the open.
@Suite struct BackgroundRescanTests {
    private static let count = 300

    private func key(_ i: Int) -> DiskKey {
        DiskKey(folder: FolderPath([MD5.hexDigest(of: "t")]), name: EntryName(parameter: "p\(i)"))
    }

    /// A root of `count` entries whose marker then says its last run did not save the index
    /// (a rescan is due at the next open), opened again through the link `dir-<name>`.
    private func dirtyRoot(_ dir: URL) throws -> URL {
        do {
            let store = try DiskStore.open(at: dir)
            for i in 0..<Self.count {
                try store.write(
                    Data(repeating: UInt8(i % 251), count: 50 + i),
                    to: key(i),
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
            }
            try store.flush()
        }
        try Data("D".utf8).write(to: dir.appendingPathComponent(".archivist/dirty"))
        return try linkedFolder(dir, "again")
    }

    @Test func aLargeRootsRescanRunsWhileTheOpenReturnsAndReadsAreServed() throws {
        try withTemporaryDirectory { dir throws in
            let link = try dirtyRoot(dir)
            defer { try? FileManager.default.removeItem(at: link) }
            // An abandoned temporary in `.archivist`, which the rescan's first step sweeps: its
            // unlink holds the rescan until the test lets it go (the open's own sweep is
            // refused, so the file is still there for the rescan's).
            let me = TemporaryName.identity
            let name =
                AtomicFile.temporaryPrefix + String(me.pid, radix: 16) + "." + String(me.namespace, radix: 16) + "."
                + String(me.incarnation &+ 1, radix: 16) + ".1"
            let leftover = link.path + "/.archivist/" + name
            try Data([1]).write(to: URL(fileURLWithPath: leftover))
            let sweeps = Locked(0)
            let release = DispatchSemaphore(value: 0)
            var fs = FileSystem.posix
            let unlink = fs.unlink
            fs.unlink = { path in
                guard path == leftover else { return unlink(path) }
                if sweeps.withLock({
                    $0 += 1
                    return $0
                }) == 1 {
                    errno = EBUSY
                    return -1
                }
                _ = release.wait(timeout: .now() + 30)
                return unlink(path)
            }

            let store = try DiskStore.open(at: link, fileSystem: fs, backgroundRescanAbove: Self.count)
            let deadline = ContinuousClock.now + .seconds(30)
            while sweeps.withLock({ $0 }) < 2 && ContinuousClock.now < deadline { usleep(1_000) }
            #expect(sweeps.withLock { $0 } == 2)  // the rescan is under way, held
            let rebuild = try #require(store.rebuild)
            #expect(rebuild.itemsExamined == 0)
            // A read needs no index.
            let read = try store.read(key(7), typeName: "t", parameter: nil) { $0.payloadBytes.count }
            #expect(read == 57)

            release.signal()
            #expect(store.usage(of: FolderPath([])).entryCount == Self.count)  // waits for the rescan
            #expect(store.rebuild == nil)
            #expect(!store.index.shared.intent)
            let files = entryFiles(under: dir)
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(files.values.reduce(0, +)))
        }
    }

    /// Below the threshold (or without one) the rescan is done when the open returns.
    @Test(arguments: [nil, count + 1])
    func aSmallRootsRescanIsDoneWhenTheOpenReturns(threshold: Int?) throws {
        try withTemporaryDirectory { dir throws in
            let link = try dirtyRoot(dir)
            defer { try? FileManager.default.removeItem(at: link) }
            let words = try Data(contentsOf: dir.appendingPathComponent(".archivist/shared"))
            let epoch = words.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self) }
            let store = try DiskStore.open(at: link, backgroundRescanAbove: threshold)
            #expect(store.index.shared.epoch == epoch &+ 1)  // rescanned, before the open returned
            #expect(!store.index.shared.intent)
            #expect(store.rebuild == nil)
            #expect(store.index.readState { $0.index.usage(of: FolderPath([])).entryCount } == Self.count)
        }
    }
}
