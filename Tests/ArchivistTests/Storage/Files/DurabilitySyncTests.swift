import Foundation
import Testing

@testable import Archivist

/// Which flush each ``Durability`` asks of the file system: the file before its rename, the
/// folder after it, and the drive-cache flush (`F_FULLFSYNC` on Apple platforms) only for
/// ``Durability/fullSync``.
struct DurabilitySyncTests {
    static let expected: [(Durability, ordered: Int, full: Int)] = [
        (.none, 0, 0), (.file, 1, 0), (.fileAndFolder, 2, 0), (.fullSync, 0, 2),
    ]

    @Test(arguments: expected.indices)
    func eachDurabilityFlushesWhatItPromises(row: Int) throws {
        let (durability, ordered, full) = Self.expected[row]
        let flushes = Locked((ordered: 0, full: 0))
        var fileSystem = FileSystem.posix
        let real = FileSystem.posix
        fileSystem.fsync = { fd in
            flushes.withLock { $0.ordered += 1 }
            return real.fsync(fd)
        }
        fileSystem.fullFsync = { fd in
            flushes.withLock { $0.full += 1 }
            return real.fullFsync(fd)
        }
        try withTemporaryDirectory { dir throws in
            let url = dir.appendingPathComponent("entry")
            _ = try AtomicFile.write(Data("value".utf8), to: url, durability: durability, fileSystem: fileSystem)
            #expect(try AtomicFile.read(path: url.path) == Array("value".utf8))
        }
        let counts = flushes.withLock { $0 }
        #expect(counts.ordered == ordered && counts.full == full, "\(durability): \(counts)")
    }
}
