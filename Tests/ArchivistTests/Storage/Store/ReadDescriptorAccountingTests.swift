import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An entry read pins its file with the descriptor it read through until the read is over
/// (``FileIdentity/unpin(_:)``, after any discard judged by it): probes that every descriptor a
/// read opens is closed exactly once, on every path (a good entry, nothing there, a corrupt or
/// misplaced entry, a folder, a link, a FIFO, an empty file), and that no read closes a
/// descriptor it did not open or closed already.
@Suite struct ReadDescriptorAccountingTests {
    /// The descriptors open through a file system, and the closes of descriptors it did not
    /// have open (a double close, or someone else's descriptor).
    final class Ledger: Sendable {
        let open = Locked<[Int32: Int]>([:])
        let strayCloses = Locked<[Int32]>([])

        func fileSystem() -> FileSystem {
            var fs = FileSystem.posix
            let real = FileSystem.posix
            fs.open = { [self] path, flags, mode in
                let fd = real.open(path, flags, mode)
                if fd >= 0 { open.withLock { $0[fd, default: 0] += 1 } }
                return fd
            }
            fs.close = { [self] fd in
                let known = open.withLock { table -> Bool in
                    guard let n = table[fd] else { return false }
                    table[fd] = n == 1 ? nil : n - 1
                    return true
                }
                if !known { strayCloses.withLock { $0.append(fd) } }
                return real.close(fd)
            }
            return fs
        }
    }

    @Test func everyReadClosesWhatItOpenedOnce() throws {
        try withTemporaryDirectory { dir throws in
            let ledger = Ledger()
            let store = try DiskStore.open(at: dir, fileSystem: ledger.fileSystem())
            func key(_ p: String) -> DiskKey {
                DiskKey(folder: FolderPath(["shared-caches", MD5.hexDigest(of: "t")]), name: EntryName(parameter: p))
            }
            let large = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0) })
            for p in ["good", "small", "corrupt", "mismatch", "folder", "link", "fifo", "empty"] {
                try store.write(
                    p == "small" ? Data([1, 2, 3]) : large,
                    to: key(p),
                    typeName: "t",
                    parameter: p,
                    expiry: nil,
                    durability: .none
                )
            }
            // Damage: bad magic, another key's entry, a folder, a link, a FIFO, an empty file.
            let path = { (p: String) in store.path(of: key(p)) }
            var bad = try Data(contentsOf: URL(fileURLWithPath: path("corrupt")))
            bad[0] ^= 0xFF
            try bad.write(to: URL(fileURLWithPath: path("corrupt")))
            try FileManager.default.removeItem(atPath: path("mismatch"))
            try FileManager.default.copyItem(atPath: path("good"), toPath: path("mismatch"))
            try FileManager.default.removeItem(atPath: path("folder"))
            try FileManager.default.createDirectory(atPath: path("folder"), withIntermediateDirectories: false)
            try FileManager.default.removeItem(atPath: path("link"))
            try FileManager.default.createSymbolicLink(atPath: path("link"), withDestinationPath: path("good"))
            try FileManager.default.removeItem(atPath: path("fifo"))
            #expect(mkfifo(path("fifo"), 0o600) == 0)
            try Data().write(to: URL(fileURLWithPath: path("empty")))

            let before = ledger.open.withLock { $0 }
            var outcomes: [String: String] = [:]
            for round in 0..<3 {
                for p in ["good", "small", "missing", "corrupt", "mismatch", "folder", "link", "fifo", "empty"] {
                    for locking in [false, true] {
                        let outcome: String
                        do {
                            let read = try store.read(key(p), typeName: "t", parameter: p, locking: locking) { entry in
                                entry.payload
                            }
                            outcome = read.map { "\($0.count) bytes" } ?? "nothing"
                        } catch let error as StorageError {
                            outcome = "\(error.code)"
                        }
                        if round == 0 && !locking { outcomes[p] = outcome }
                    }
                }
            }
            #expect(
                outcomes["good"] == "10000 bytes" && outcomes["small"] == "3 bytes" && outcomes["missing"] == "nothing"
            )
            for p in ["corrupt", "mismatch", "folder", "link", "fifo", "empty"] {
                #expect(outcomes[p] != nil && !(outcomes[p]!.hasSuffix("bytes")), "\(p): \(outcomes[p] ?? "-")")
            }
            // Every descriptor the reads opened is closed again, and no read closed another.
            // (A damaged entry moved into the trash is deleted on the trash queue, whose walk
            // holds the trash lock's descriptor while it runs: wait for it first.)
            store.waitForTrash()
            #expect(ledger.open.withLock { $0 } == before)
            #expect(ledger.strayCloses.withLock { $0 }.isEmpty)
        }
    }

    /// `AtomicFile.readData` (the whole file as a `Data`) closes its descriptor on each path too.
    @Test func readDataClosesOnEveryPath() throws {
        try withTemporaryDirectory { dir throws in
            let ledger = Ledger()
            let fs = ledger.fileSystem()
            let file = dir.path + "/file"
            let folder = dir.path + "/folder"
            let link = dir.path + "/link"
            try Data(repeating: 7, count: 5_000).write(to: URL(fileURLWithPath: file))
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
            var kept: [Data] = []
            for path in [file, folder, link, dir.path + "/missing"] {
                if let data = try? AtomicFile.readData(path: path, fileSystem: fs) { kept.append(data) }
            }
            #expect(kept.count == 1 && kept.first == Data(repeating: 7, count: 5_000))
            #expect(ledger.open.withLock { $0 }.isEmpty)
            #expect(ledger.strayCloses.withLock { $0 }.isEmpty)
        }
    }
}
