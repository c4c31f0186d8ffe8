import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// Recovery at its edges, each case one the crash and fault-injection sweeps reach only by
/// chance: an interrupted index save, an unfinished log reset, a failed compaction or remove-all,
/// a partial entry, a rename whose temporary cannot be checked.
@Suite struct RecoveryEdgeCaseTests {
    /// A kill during a background save of the size index leaves its temporary in `.archivist`,
    /// which the rescan's entry walk skips: the rescan sweeps it.
    @Test func aRescanSweepsAnInterruptedIndexSave() throws {
        try withTemporaryDirectory { dir throws in
            do {
                let store = try DiskStore.open(at: dir)
                try store.write(
                    Data([1, 2, 3]),
                    to: DiskKey(folder: FolderPath(["f"]), name: .single),
                    typeName: "t",
                    parameter: nil,
                    expiry: nil,
                    durability: .none
                )
                try store.flush()
            }
            let stale = dir.appendingPathComponent(".archivist/" + abandonedTemporaryName())
            try Data("half an index".utf8).write(to: stale)
            try Data("D".utf8).write(to: dir.appendingPathComponent(".archivist/dirty"))
            let store = try DiskStore.open(at: dir)
            #expect(!FileManager.default.fileExists(atPath: stale.path))
            #expect(store.usage(of: FolderPath([])).entryCount == 1)
        }
    }

    /// When the folder sync of a `.fileAndFolder` write fails after the rename, the new entry
    /// is on disk: it is counted and served, and the error says it is in place.
    @Test(arguments: FaultInjector.Mode.allCases)
    func aFailedFolderSyncAfterTheRenameCountsTheNewEntry(mode: FaultInjector.Mode) throws {
        try withTemporaryDirectory { dir throws in
            let injector = FaultInjector(mode: mode)
            let cache = try CacheManager<FaultCache>(
                root: CacheRoot(directory: dir),
                user: "u",
                configuration: .init(),
                fileSystem: injector.fileSystem
            )
            try cache.store("old", for: .document)
            injector.arm(.init(operation: .fsync, n: 2, persistent: false, errno: EIO))  // file, then folder
            let error = #expect(throws: CacheError.self) { try cache.store("new", for: .document) }
            #expect(injector.disarm() == 1)
            #expect(error?.message.contains("in place") == true)
            #expect(try cache.value(String.self, for: .document) == "new")
            #expect(cache.totalSize == entryFiles(under: dir).values.reduce(0, +))
        }
    }

    private func openRecords(
        _ dir: URL,
        _ fileSystem: FileSystem,
        durability: Durability = .file
    ) throws -> RecordStore<FaultRecord> {
        try RecordStore<FaultRecord>(
            directory: dir,
            configuration: .init(durability: durability),
            fileSystem: fileSystem
        )
    }

    /// When a compaction wrote its snapshot but could not reopen the reset log, the reset is
    /// finished before the next append, so no batch goes to the old, unlinked log.
    @Test func aBatchSavedAfterAnUnfinishedLogResetSurvivesReopening() throws {
        try withTemporaryDirectory { dir throws in
            let injector = FaultInjector()
            do {
                let store = try openRecords(dir, injector.fileSystem)
                try store.upsert(FaultRecord(id: 1, text: "one"))
                // Opens: snapshot temporary, its folder for the sync, log temporary, the new log.
                injector.arm(.init(operation: .open, n: 4, persistent: false, errno: EIO))
                try? store.compact()  // the snapshot is in place; only the log's reset is unfinished
                #expect(injector.disarm() == 1)
                try store.upsert(FaultRecord(id: 2, text: "two"))
            }
            #expect(try openRecords(dir, .posix).all().map(\.id) == [1, 2])
        }
    }

    /// A `removeAll` whose empty snapshot cannot be written keeps the records in memory as on
    /// disk.
    @Test func aFailedRemoveAllKeepsTheRecords() throws {
        try withTemporaryDirectory { dir throws in
            let injector = FaultInjector()
            let store = try openRecords(dir, injector.fileSystem)
            try store.upsert(FaultRecord(id: 1, text: "one"))
            injector.arm(.init(operation: .write, n: 1, persistent: false, errno: ENOSPC))
            let error = #expect(throws: StoreError.self) { try store.removeAll() }
            injector.disarm()
            #expect(error?.code == .noSpace)
            #expect(store.all().map(\.id) == [1])
        }
    }

    /// A batch whose log append succeeded is reported as committed even when the compaction
    /// that follows it fails.
    @Test func aFailedCompactionDoesNotFailTheCommittedBatch() throws {
        try withTemporaryDirectory { dir throws in
            let injector = FaultInjector()
            let store = try RecordStore<FaultRecord>(
                directory: dir,
                configuration: .init(durability: .none, compactionThreshold: 0),
                fileSystem: injector.fileSystem
            )
            injector.arm(.init(operation: .rename, n: 1, persistent: true, errno: EIO))  // every snapshot rename
            try store.upsert(FaultRecord(id: 1, text: "one"))
            #expect(injector.disarm() == 1)
            #expect(try openRecords(dir, .posix).all().map(\.id) == [1])
        }
    }

    /// An append that failed half-way and whose cut-back failed too leaves a partial entry:
    /// the cut is retried before the next append, so the next batch is not quarantined with it.
    @Test func aPartialEntryThatCouldNotBeCutIsCutBeforeTheNextAppend() throws {
        try withTemporaryDirectory { dir throws in
            let step = Locked(0)  // 1: write half; 2: then fail with ENOSPC; 3: fail the cut
            let real = FileSystem.posix
            var fs = real
            fs.write = { fd, buffer, count in
                switch step.withLock({ value -> Int in
                    defer { if value == 1 || value == 2 { value += 1 } }
                    return value
                }) {
                case 1: return real.write(fd, buffer, count / 2)
                case 2:
                    errno = ENOSPC
                    return -1
                default: return real.write(fd, buffer, count)
                }
            }
            fs.ftruncate = { fd, length in
                if step.withLock({ value -> Bool in
                    defer { if value == 3 { value = 0 } }
                    return value == 3
                }) {
                    errno = EIO
                    return -1
                }
                return real.ftruncate(fd, length)
            }
            do {
                let store = try openRecords(dir, fs, durability: .none)
                try store.upsert(FaultRecord(id: 1, text: "one"))
                step.withLock { $0 = 1 }
                let error = #expect(throws: StoreError.self) {
                    try store.upsert(FaultRecord(id: 2, text: String(repeating: "x", count: 100)))
                }
                #expect(error?.code == .noSpace)
                #expect(step.withLock { $0 } == 0)
                try store.upsert(FaultRecord(id: 3, text: "three"))
            }
            let reopened = try openRecords(dir, .posix)
            #expect(reopened.all().map(\.id) == [1, 3])
            #expect(reopened.recoveredDamage == nil)
        }
    }

    /// After a rename below the root fails with ENOENT, only ENOENT or ENOTDIR from the check
    /// that follows (is the temporary still there?) means "another process cleared its
    /// folder" and prepares the write again; any other failure throws the rename's error and
    /// deletes the temporary, so no temporary is left behind.
    @Test func aRenameWhoseTemporaryCannotBeCheckedLeavesNoTemporary() throws {
        try withTemporaryDirectory { dir throws in
            let failing = Locked(false)
            var fs = FileSystem.posix
            let (renameAt, accessAt) = (fs.renameAt, fs.accessAt)
            fs.renameAt = { fromFolder, from, toFolder, to in
                if failing.withLock({ $0 }) {
                    errno = ENOENT
                    return -1
                }
                return renameAt(fromFolder, from, toFolder, to)
            }
            fs.accessAt = { folder, path, mode in
                if failing.withLock({ $0 }) {
                    errno = EACCES
                    return -1
                }
                return accessAt(folder, path, mode)
            }
            let store = try DiskStore.open(at: dir, fileSystem: fs)
            try #require(store.root != nil)
            let key = DiskKey(folder: FolderPath(["f"]), name: .single)
            func write(_ text: String) throws {
                try store.write(Data(text.utf8), to: key, typeName: "t", parameter: nil, expiry: nil, durability: .none)
            }
            try write("old")
            failing.withLock { $0 = true }
            #expect(throws: StorageError.self) { try write("new") }
            failing.withLock { $0 = false }
            #expect(temporaries(under: dir).isEmpty, "\(temporaries(under: dir))")
            #expect(
                try store.read(key, typeName: "t", parameter: nil) { String(decoding: $0.payloadBytes, as: UTF8.self) }
                    == "old"
            )
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(entryFiles(under: dir).values.reduce(0, +)))
        }
    }
}
