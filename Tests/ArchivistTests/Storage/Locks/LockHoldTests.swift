import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// No `flock` of a store is held across work whose length grows with the data: iOS terminates
/// a suspended app that holds a file lock in an app-group container (`0xdead10cc`). The trash
/// walk holds its lock a batch of ``FolderRemoval/batchSize`` entries at a time; a rescan of the
/// root walks it without the store's lock.
@Suite struct LockHoldTests {
    /// Makes `count` empty files in the folder `name` of `dir`, straight through POSIX calls
    /// (fast: no store write per file), named as entries when `asEntries`.
    private func makeFiles(_ count: Int, in dir: URL, folder name: String, asEntries: Bool = false) throws {
        let folder = dir.path + "/" + name
        try #require(mkdir(folder, 0o700) == 0)
        for i in 0..<count {
            let file = folder + "/" + (asEntries ? MD5.hexDigest(of: String(i)) : "e\(i)")
            let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            try #require(fd >= 0)
            _ = close(fd)
        }
    }

    /// What clearing a folder of `count` files showed of the trash lock's holds (those of the
    /// open's walk of the empty trash included: one, removing nothing).
    private struct ClearFigures {
        var holds: SpareFolders.TrashLockHolds
        var walk: Duration
    }

    private func clearFolder(of count: Int) throws -> ClearFigures {
        try withTemporaryDirectory { dir in
            let store = try DiskStore.open(at: dir)
            store.waitForTrash()
            try makeFiles(count, in: dir, folder: "a")
            let start = ContinuousClock.now
            try store.clear([FolderPath(["a"])])
            store.waitForTrash()
            let walk = ContinuousClock.now - start
            #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
            return ClearFigures(holds: store.trash.spares.trashLockHolds, walk: walk)
        }
    }

    /// Clearing 2,000 and then 20,000 entries: every hold of the trash lock removes at most a
    /// batch, so the number of entries one hold covers does not grow with the folder. (What a
    /// hold costs in time is the kernel's, and a loaded machine stretches it: the counts are
    /// what is asserted, the durations only printed.)
    @Test(arguments: [2_000, 20_000])
    func clearingHoldsTheTrashLockABatchAtATime(count: Int) throws {
        let clear = try clearFolder(of: count)
        let holds = clear.holds
        #expect(holds.removed >= count)  // the files, and their folder (removed or kept)
        #expect(holds.mostRemovedInOneHold <= FolderRemoval.batchSize)
        #expect(holds.durations.count >= UInt64(count / FolderRemoval.batchSize))
        let longest = Duration.nanoseconds(Int64(holds.durations.longestNanoseconds))
        print(
            "clearing \(count) entries: walk \(clear.walk), \(holds.durations.count) holds of the trash lock, "
                + "median ≤ \(holds.durations.percentile(0.5) ?? 0) ns, 99% ≤ \(holds.durations.percentile(0.99) ?? 0) ns, "
                + "longest \(longest), at most \(holds.mostRemovedInOneHold) entries in one"
        )
    }

    /// Whether a process holds the lock file at `path` (any mode): a lock taken on another
    /// open file description, even of this process, makes `LOCK_EX | LOCK_NB` fail.
    static func isLocked(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { _ = close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            _ = flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    /// What a store did through the file system below: each `unlinkat` it made, and whether a
    /// lock file was held then.
    final class UnlinkRecorder: Sendable {
        struct Call: Sendable {
            var path: String
            var flags: Int32
            var lockHeld: Bool
        }

        let calls = Locked<[Call]>([])
        let lockPath: String
        let fileSystem: FileSystem

        /// Records the `unlinkat` calls (the root-relative twin of `unlink` and `rmdir`) whose
        /// path contains `marker`, with whether `lockPath` was locked at the time.
        init(lockPath: String, recording marker: String) {
            self.lockPath = lockPath
            var fileSystem = FileSystem.posix
            let real = fileSystem.unlinkAt
            let calls = calls
            fileSystem.unlinkAt = { folder, path, flags in
                if path.contains(marker) {
                    let held = LockHoldTests.isLocked(lockPath)
                    calls.withLock { $0.append(Call(path: path, flags: flags, lockHeld: held)) }
                }
                return real(folder, path, flags)
            }
            self.fileSystem = fileSystem
        }
    }

    /// A folder emptied by the trash walk that once held many names is not removed inside a
    /// hold of the trash lock (ext4 took 0.2 s to remove one that held 100,000): it is set
    /// aside, and removed once the lock is released. Its spare slots are all taken, so it is
    /// not kept either.
    @Test func aLargeEmptiedFolderIsRemovedOnceTheTrashLockIsReleased() throws {
        try withTemporaryDirectory { dir in
            let recorder = UnlinkRecorder(lockPath: dir.path + "/.archivist/trash.lock", recording: ".archivist/spare/")
            let store = try DiskStore.open(at: dir, fileSystem: recorder.fileSystem)
            store.waitForTrash()
            for slot in 0..<SpareFolders.slots {
                try FileManager.default.createDirectory(
                    atPath: store.trash.spares.path + "/\(slot)",
                    withIntermediateDirectories: true
                )
            }
            try makeFiles(20_000, in: dir, folder: "a")
            var status = stat()
            try #require(stat(dir.path + "/a", &status) == 0)
            try #require(Int64(status.st_size) > FolderRemoval.largeFolderSize)
            try store.clear([FolderPath(["a"])])
            store.waitForTrash()
            let removals = recorder.calls.withLock { $0 }.filter { $0.flags & AT_REMOVEDIR != 0 }
            #expect(removals.count == 1)
            #expect(removals.allSatisfy { !$0.lockHeld })
            #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: store.trash.spares.path).sorted() == [
                    "0", "1", "2", "3",
                ]
            )
        }
    }

    /// Between two batches a walk holds folders of the trash open without the lock. Another
    /// walk may empty one of them and keep it as a spare, and a write may then make it an entry
    /// folder: the paused walk must not go on deleting in it. It finds, under the lock, that the
    /// folder is no longer where it left it, and starts over from the top.
    @Test func aWalkPausedBetweenBatchesNeverDeletesInAFolderKeptMeanwhile() throws {
        try withTemporaryDirectory { dir in
            let store = try DiskStore.open(at: dir)
            store.waitForTrash()
            try makeFiles(2_000, in: dir, folder: "a")  // grown past a block: worth keeping
            try store.clear([FolderPath(["a"])])
            store.waitForTrash()  // the store's own walk empties the trash…
            let kept = try FileManager.default.contentsOfDirectory(atPath: store.trash.spares.path)
            try #require(kept.count == 1)  // …and keeps the folder: this file system keeps grown folders
            // Again, but walked by hand: a first batch leaves the walk inside the item's folder.
            let spare = store.trash.spares.path + "/" + kept[0]
            try FileManager.default.removeItem(atPath: spare)
            try makeFiles(2_000, in: dir, folder: "b")
            let item = store.trash.path + "/" + SpareFolders.clearedPrefix + "paused"
            try #require(rename(dir.path + "/b", item) == 0)
            var paused = try FolderRemoval.Batches(of: store.trash.path)
            defer { paused.close() }
            #expect(try !paused.next(keeping: nil))
            // Another walk, alone in the trash, empties the rest and keeps the folder, which a
            // write then claims as an entry folder.
            try store.trash.spares.emptyTrash()
            try #require(try FileManager.default.contentsOfDirectory(atPath: store.trash.spares.path).count == 1)
            // Many entries: wherever the paused walk's reading position is, some come after it.
            let keys = (0..<100).map { DiskKey(folder: FolderPath(["c"]), name: EntryName(parameter: String($0))) }
            for key in keys {
                try store.write(
                    Data("new".utf8),
                    to: key,
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
            }
            try #require(try FileManager.default.contentsOfDirectory(atPath: store.trash.spares.path).isEmpty)
            // The paused walk goes on: it must leave the new entries alone.
            try paused.resume()
            while try !paused.next(keeping: nil) { try paused.resume() }
            for key in keys {
                let read = try store.read(key, typeName: "t", parameter: nil) { Data($0.payloadBytes) }
                #expect(read == Data("new".utf8))
            }
        }
    }

    /// A walk asked to stop (the background activity's time is up) stops between batches, the
    /// lock released; the next emptying removes the rest.
    @Test func aWalkAskedToStopLeavesTheRestToTheNextEmptying() throws {
        try withTemporaryDirectory { dir in
            let store = try DiskStore.open(at: dir)
            store.waitForTrash()
            try makeFiles(3 * FolderRemoval.batchSize, in: dir, folder: "a")
            try #require(rename(dir.path + "/a", store.trash.path + "/a") == 0)
            var asked = 0
            try store.trash.spares.emptyTrash(shouldStop: {
                asked += 1
                return true
            })
            #expect(asked == 1)
            #expect((1...FolderRemoval.batchSize).contains(store.trash.spares.trashLockHolds.mostRemovedInOneHold))
            #expect(!Self.isLocked(dir.path + "/.archivist/trash.lock"))
            #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).count > 1)
            try store.trash.spares.emptyTrash()
            #expect(allPaths(under: URL(fileURLWithPath: store.trash.path)).isEmpty)
        }
    }

    /// A root of `count` entries (empty files named as entries, in one folder) and one
    /// abandoned temporary beside them, which a rescan deletes as it walks.
    private func makeRoot(_ dir: URL, entries count: Int) throws {
        let folder = MD5.hexDigest(of: "many")
        try makeFiles(count, in: dir, folder: folder, asEntries: true)
        let temporary = dir.path + "/" + folder + "/" + abandonedTemporaryName()
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        _ = close(fd)
    }

    /// A rescan at open — the marker says a previous run did not save its index — walks the
    /// root without the store's lock (which it holds only to decide and to install the scan):
    /// the abandoned temporary the walk deletes is deleted while no process holds the lock.
    @Test func aRescanAtOpenWalksTheRootWithoutTheLock() throws {
        try withTemporaryDirectory { dir in
            do {
                let first = try DiskStore.open(at: dir)
                first.waitForTrash()
            }
            var dirty = UInt8(ascii: "D")
            let marker = open(dir.path + "/.archivist/dirty", O_WRONLY | O_CLOEXEC)
            try #require(marker >= 0 && pwrite(marker, &dirty, 1, 0) == 1)
            _ = close(marker)
            let count = 100_000
            try makeRoot(dir, entries: count)
            let recorder = UnlinkRecorder(lockPath: dir.path + "/.archivist/lock", recording: ".tmp-")
            let start = ContinuousClock.now
            let store = try DiskStore.open(at: dir, fileSystem: recorder.fileSystem)
            let opening = ContinuousClock.now - start
            let calls = recorder.calls.withLock { $0 }
            #expect(calls.count == 1)
            #expect(calls.allSatisfy { !$0.lockHeld })
            #expect(store.usage(of: FolderPath([])).entryCount == count)
            let longest = store.longestLockHold
            print(
                "rescan at open of \(count) entries: open \(opening), \(store.lockHolds.count) holds of the store's lock, longest \(longest)"
            )
            #expect(longest < opening / 4)
            // The figures of the other holds that grew with the entries: a fold of the journal
            // (flush), and another store's open, which reads the snapshot.
            let folding = ContinuousClock.now
            try store.flush()
            let folded = ContinuousClock.now - folding
            let link = try linkedFolder(dir, "other")
            defer { try? FileManager.default.removeItem(at: link) }
            let loading = ContinuousClock.now
            let other = try DiskStore.open(at: link)
            let loaded = ContinuousClock.now - loading
            #expect(other.usage(of: FolderPath([])).entryCount == count)
            print(
                "\(count) entries: flush \(folded), longest hold \(store.longestLockHold); another store's open \(loaded), "
                    + "longest hold \(other.longestLockHold)"
            )
            #expect(store.longestLockHold < max(opening, folded) / 4)
            #expect(other.longestLockHold < loaded / 4)
        }
    }

    /// A rescan inside a change — a holder died between its file change and its record — walks
    /// the root without the store's lock too, and the change goes ahead once it is installed.
    @Test func aRescanBeforeAChangeWalksTheRootWithoutTheLock() throws {
        try withTemporaryDirectory { dir in
            let recorder = UnlinkRecorder(lockPath: dir.path + "/.archivist/lock", recording: ".tmp-")
            let store = try DiskStore.open(at: dir, fileSystem: recorder.fileSystem)
            try makeRoot(dir, entries: 2_000)
            store.index.shared.intent = true  // as a holder killed between a change and its record leaves it
            let epoch = store.index.shared.epoch
            let key = DiskKey(folder: FolderPath([MD5.hexDigest(of: "other")]), name: .single)
            try store.write(Data("x".utf8), to: key, typeName: "t", parameter: nil, expiry: nil, durability: .none)
            let calls = recorder.calls.withLock { $0 }
            #expect(calls.count == 1)
            #expect(calls.allSatisfy { !$0.lockHeld })
            #expect(store.index.shared.epoch == epoch + 1)
            #expect(!store.index.shared.intent)
            let files = entryFiles(under: dir)
            #expect(store.usage(of: FolderPath([])).entryCount == files.count)
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(files.values.reduce(0, +)))
        }
    }

    /// Every read of the index snapshot and write of a temporary in `.archivist` a store made
    /// through the file system below, and whether the store's lock was held then.
    final class SnapshotIORecorder: Sendable {
        let reads = Locked<[Bool]>([])
        let writes = Locked<[Bool]>([])
        let fileSystem: FileSystem

        init(root: URL) {
            let lockPath = root.path + "/.archivist/lock"
            var fileSystem = FileSystem.posix
            let (realRead, realPread, realWrite, realWritev) = (
                fileSystem.read, fileSystem.pread, fileSystem.write, fileSystem.writev
            )
            let (reads, writes) = (reads, writes)
            @Sendable func note(_ fd: Int32, _ list: Locked<[Bool]>, if matches: (String) -> Bool) {
                guard let path = RecordStoreLockHoldTests.path(of: fd), matches(path) else { return }
                let held = LockHoldTests.isLocked(lockPath)
                list.withLock { $0.append(held) }
            }
            @Sendable func isSnapshotTemporary(_ path: String) -> Bool { path.contains("/.archivist/.tmp-") }
            fileSystem.read = { fd, buffer, count in
                note(fd, reads) { $0.hasSuffix("/.archivist/index") }
                return realRead(fd, buffer, count)
            }
            fileSystem.pread = { fd, buffer, count, offset in
                note(fd, reads) { $0.hasSuffix("/.archivist/index") }
                return realPread(fd, buffer, count, offset)
            }
            fileSystem.write = { fd, buffer, count in
                note(fd, writes, if: isSnapshotTemporary)
                return realWrite(fd, buffer, count)
            }
            fileSystem.writev = { fd, vectors, count in
                note(fd, writes, if: isSnapshotTemporary)
                return realWritev(fd, vectors, count)
            }
            self.fileSystem = fileSystem
        }
    }

    /// Folding the journal into a snapshot (`flush`, and a write that finds the journal long)
    /// writes the snapshot without the store's lock, and another store's catch-up reads the new
    /// snapshot without it too: both grow with the entries.
    @Test func snapshotsAreWrittenAndReadWithoutTheLock() throws {
        try withTemporaryDirectory { dir in
            let recorder = SnapshotIORecorder(root: dir)
            let writer = try DiskStore.open(at: dir, fileSystem: recorder.fileSystem)
            let folder = FolderPath([MD5.hexDigest(of: "fold")])
            for i in 0..<200 {
                try writer.write(
                    Data(count: 10),
                    to: DiskKey(folder: folder, name: EntryName(parameter: String(i))),
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
            }
            // Another store of the root (a process of its own, as far as the lock and journal go).
            let link = try linkedFolder(dir, "reader")
            defer { try? FileManager.default.removeItem(at: link) }
            let reader = try DiskStore.open(at: link, fileSystem: recorder.fileSystem)
            let epoch = writer.index.shared.epoch
            try writer.flush()
            #expect(writer.index.shared.epoch == epoch + 1)
            #expect(reader.usage(of: folder).entryCount == 200)  // reloads the new epoch's snapshot
            let reads = recorder.reads.withLock { $0 }
            let writes = recorder.writes.withLock { $0 }
            // the opens' and the catch-up's; the first open's and the fold's
            #expect(reads.count >= 2 && writes.count >= 2)
            #expect(reads.allSatisfy { !$0 })
            #expect(writes.allSatisfy { !$0 })
        }
    }
}
