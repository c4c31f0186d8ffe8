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
/// must be able to cut the entry back. The snapshot is read and decoded without the lock too,
/// on open and when catching up after another opener compacted: the hold replays the log and
/// installs.
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
                if let path = RecordStoreLockHoldTests.path(of: fd),
                    path.split(separator: "/").last?.hasPrefix(".tmp-") == true,
                    fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG
                {
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
            let store = try RecordStore<FaultRecord>(
                directory: dir,
                configuration: configuration,
                fileSystem: recorder.fileSystem
            )
            for start in stride(from: 0, to: 600, by: 20) {
                try store.upsert(contentsOf: (start..<start + 20).map { FaultRecord(id: $0, text: "record \($0)") })
            }
            try store.compact()
            #expect(store.all().count == 600)
            let syncs = recorder.syncs.withLock { $0 }
            let snapshots = syncs.filter { $0.size > 1 << 10 }  // a log's reset is its header alone
            #expect(snapshots.count >= 2)  // automatic compactions, and the explicit one
            #expect(snapshots.allSatisfy { !$0.lockHeld })
            let reopened = try RecordStore<FaultRecord>(directory: dir, configuration: configuration)
            #expect(reopened.all() == store.all())
        }
    }

    /// Every `open` of `records.snapshot`, and whether `records.lock` was held then.
    final class SnapshotReadRecorder: Sendable {
        let reads = Locked<[Bool]>([])
        let fileSystem: FileSystem

        init(lockPath: String) {
            var fileSystem = FileSystem.posix
            let real = fileSystem.open
            let reads = reads
            fileSystem.open = { path, flags, mode in
                if path.hasSuffix("/records.snapshot") {
                    let held = LockHoldTests.isLocked(lockPath)
                    reads.withLock { $0.append(held) }
                }
                return real(path, flags, mode)
            }
            self.fileSystem = fileSystem
        }
    }

    /// A store of 20,000 records, compacted by another opener: opening it, and catching up
    /// with it after the other opener compacted again, read and decode the snapshot without
    /// `records.lock`, and each take one hold of it.
    @Test func theSnapshotIsDecodedWithoutTheLockOnOpenAndAfterAnotherOpenerCompacted() throws {
        try withTemporaryDirectory { dir in
            let configuration = RecordStore<FaultRecord>.Configuration(durability: .none, compactionThreshold: 64 << 20)
            let writer = try RecordStore<FaultRecord>(directory: dir, configuration: configuration)
            for start in stride(from: 0, to: 20_000, by: 2_000) {
                try writer.upsert(
                    contentsOf: (start..<start + 2_000).map { FaultRecord(id: $0, text: "record number \($0)") }
                )
            }
            try writer.compact()
            let recorder = SnapshotReadRecorder(lockPath: dir.path + "/records.lock")
            let openStart = ContinuousClock.now
            let reader = try RecordStore<FaultRecord>(
                directory: dir,
                configuration: configuration,
                fileSystem: recorder.fileSystem
            )
            let openTime = ContinuousClock.now - openStart
            #expect(reader.count == 20_000)
            let openHolds = reader.crossProcessLockHolds
            #expect(openHolds.count == 1)
            #expect(recorder.reads.withLock { $0 } == [false])

            try writer.upsert(FaultRecord(id: 20_000, text: "one more"))
            try writer.compact()
            let refreshStart = ContinuousClock.now
            try reader.refresh()
            let refreshTime = ContinuousClock.now - refreshStart
            #expect(reader.count == 20_001)
            let holds = reader.crossProcessLockHolds
            #expect(holds.count == 2)  // the open's, and the catch-up's one short hold
            #expect(recorder.reads.withLock { $0 } == [false, false])
            #expect(reader.snapshotDecodeCounts == .init(withoutLock: 2, underLock: 0))
            // Durations are printed, not asserted: a loaded machine stretches any hold.
            let openHold = Duration.nanoseconds(Int64(openHolds.longestNanoseconds))
            let longest = Duration.nanoseconds(Int64(holds.longestNanoseconds))
            print(
                "20,000 records: open \(openTime), its hold of records.lock \(openHold); catch-up after a compaction "
                    + "\(refreshTime), the longer of the two holds \(longest)"
            )
        }
    }

    /// A refresh that finds nothing new takes no lock; one that finds new entries reads them
    /// holding the lock shared, so readers do not wait for each other.
    @Test func aRefreshReadsNewEntriesUnderTheSharedLock() throws {
        try withTemporaryDirectory { dir in
            let operations = Locked<[Int32]>([])
            var fileSystem = FileSystem.posix
            let real = fileSystem.flock
            fileSystem.flock = { fd, operation in
                operations.withLock { $0.append(operation) }
                return real(fd, operation)
            }
            let configuration = RecordStore<FaultRecord>.Configuration(durability: .none)
            let writer = try RecordStore<FaultRecord>(directory: dir, configuration: configuration)
            let reader = try RecordStore<FaultRecord>(
                directory: dir,
                configuration: configuration,
                fileSystem: fileSystem
            )
            operations.withLock { $0 = [] }
            try reader.refresh()
            #expect(operations.withLock { $0 }.isEmpty)  // nothing new: no lock at all
            try writer.upsert(FaultRecord(id: 1, text: "new"))
            try reader.refresh()
            #expect(operations.withLock { $0 } == [LOCK_SH, LOCK_UN])
            #expect(reader.record(id: 1) == FaultRecord(id: 1, text: "new"))
        }
    }
}
