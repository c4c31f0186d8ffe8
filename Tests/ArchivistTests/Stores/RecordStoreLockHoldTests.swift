import Foundation
import Testing
@testable import Archivist
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `RecordStore`'s compaction writes and syncs its snapshot — as long as the records —
/// without holding `records.lock`: only its rename, the folder's sync and the log's reset run
/// under the lock (iOS terminates a suspended app that holds a file lock in a shared
/// container, `0xdead10cc`). An append still syncs its one batch under the lock: a failed sync
/// must be able to cut the entry back.
@Suite struct RecordStoreLockHoldTests {
    /// The path of the open file `fd`.
    static func path(of fd: Int32) -> String? {
        #if canImport(Darwin)
        var buffer = [CChar](repeating: 0, count: Int(MAXPATHLEN))
        guard fcntl(fd, F_GETPATH, &buffer) == 0 else { return nil }
        return String(cString: buffer)
        #else
        return try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
        #endif
    }

    /// Every `fsync` of a temporary file: its size, and whether `records.lock` was held.
    final class SyncRecorder: Sendable {
        struct Sync: Sendable {
            var size: Int64
            var lockHeld: Bool
        }

        let syncs = Locked<[Sync]>([])
        let fileSystem: FileSystem

        init(lockPath: String) {
            var fileSystem = FileSystem.posix
            let real = fileSystem.fsync
            let syncs = syncs
            fileSystem.fsync = { fd in
                var status = stat()
                if let path = RecordStoreLockHoldTests.path(of: fd), path.split(separator: "/").last?.hasPrefix(".tmp-") == true,
                   fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG {
                    let held = LockHoldTests.isLocked(lockPath)
                    syncs.withLock { $0.append(Sync(size: Int64(status.st_size), lockHeld: held)) }
                }
                return real(fd)
            }
            self.fileSystem = fileSystem
        }
    }

    @Test func aCompactionsSnapshotIsSyncedWithoutTheLock() throws {
        try withTemporaryDirectory { dir in
            let recorder = SyncRecorder(lockPath: dir.path + "/records.lock")
            let configuration = RecordStore<FaultRecord>.Configuration(durability: .file, compactionThreshold: 4 << 10)
            let store = try RecordStore<FaultRecord>(directory: dir, configuration: configuration, fileSystem: recorder.fileSystem)
            for start in stride(from: 0, to: 600, by: 20) {
                try store.upsert(contentsOf: (start..<start + 20).map { FaultRecord(id: $0, text: "record \($0)") })
            }
            try store.compact()
            #expect(store.all().count == 600)
            let syncs = recorder.syncs.withLock { $0 }
            let snapshots = syncs.filter { $0.size > 1 << 10 }   // a log's reset is its header alone
            #expect(snapshots.count >= 2)   // automatic compactions, and the explicit one
            #expect(snapshots.allSatisfy { !$0.lockHeld })
            let reopened = try RecordStore<FaultRecord>(directory: dir, configuration: configuration)
            #expect(reopened.all() == store.all())
        }
    }
}
