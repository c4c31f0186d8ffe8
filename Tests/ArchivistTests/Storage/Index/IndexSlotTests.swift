import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process slots in `.archivist/shared`: a slot left by a process that died with the root open
/// (killed, or exited without closing its store and without its `atexit` handler) is no crash
/// to repair unless the intent word is set, so the next opener frees it and sweeps its
/// temporaries but does not rescan the root (which would hold the lock for O(entries) and make
/// every process drop its memory tier). A rescan bumps the journal epoch, so an unchanged
/// epoch proves there was none.
@Suite struct IndexSlotTests {
    /// A previous incarnation of this process's PID: judged dead.
    private var deadOwner: TemporaryName.Owner {
        let me = TemporaryName.identity
        return TemporaryName.Owner(pid: me.pid, namespace: me.namespace, incarnation: me.incarnation &+ 1)
    }

    /// A slot whose owner is dead, with the intent word clear: the owner died outside a file
    /// change, so the next opener frees the slot and sweeps its temporaries without a rescan.
    @Test func aSlotLeftByAKilledProcessIsFreedAndItsTemporariesSweptWithoutARescan() throws {
        try withTemporaryDirectory { dir throws in
            let a = try storeThroughLink(dir, "a")
            let k = hashedKey("x", "1")
            try a.write(
                Data(repeating: 1, count: 100),
                to: k,
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            let dead = deadOwner
            #expect(a.index.shared.register(as: dead).slot != nil)
            // Where its writes made their temporaries: the store's temporaries folder, the one
            // folder the sweep lists.
            try FileManager.default.createDirectory(atPath: a.temporariesPath, withIntermediateDirectories: true)
            let temporary =
                a.temporariesPath + "/" + AtomicFile.temporaryPrefix
                + String(dead.pid, radix: 16) + "." + String(dead.namespace, radix: 16) + "."
                + String(dead.incarnation, radix: 16) + ".1"
            try Data(repeating: 2, count: 10).write(to: URL(fileURLWithPath: temporary))
            // And the snapshot a fold was writing, without the lock or the intent word.
            let snapshot = a.internalPath + "/" + (temporary as NSString).lastPathComponent
            try Data(repeating: 3, count: 10).write(to: URL(fileURLWithPath: snapshot))
            let epoch = a.index.shared.epoch

            let b = try storeThroughLink(dir, "b")
            #expect(b.index.shared.epoch == epoch)  // no rescan
            b.waitForTrash()
            #expect(!FileManager.default.fileExists(atPath: temporary))
            #expect(!FileManager.default.fileExists(atPath: snapshot))
            #expect(b.usage(of: FolderPath([])).entryCount == 1)
            #expect(b.usage(of: FolderPath([])).logicalBytes == Int64(entryFiles(under: dir).values.reduce(0, +)))
            // The dead slot was freed: the next opener finds nothing to sweep.
            #expect(a.index.shared.register(as: deadOwner).sweep == false)
        }
    }

    /// A dead owner with the intent word set died between a file change and its journal
    /// record: the next opener rescans (here the record of the second write is missing).
    @Test func aSlotLeftByAProcessKilledMidChangeMakesTheOpenerRescan() throws {
        try withTemporaryDirectory { dir throws in
            let a = try storeThroughLink(dir, "a")
            try a.write(
                Data(repeating: 1, count: 100),
                to: hashedKey("x", "1"),
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            #expect(a.index.shared.register(as: deadOwner).slot != nil)
            try Data(repeating: 2, count: 300).write(to: URL(fileURLWithPath: a.path(of: hashedKey("x", "2"))))
            a.index.shared.intent = true
            let epoch = a.index.shared.epoch

            let b = try storeThroughLink(dir, "b")
            #expect(b.index.shared.epoch == epoch &+ 1)  // rescanned
            #expect(!b.index.shared.intent)
            #expect(b.usage(of: FolderPath([])).entryCount == 2)
            #expect(b.usage(of: FolderPath([])).logicalBytes == Int64(entryFiles(under: dir).values.reduce(0, +)))
        }
    }

    // Starts worker processes: macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// A real process killed at a chosen point of a write (`stop-in-write`): with its temporary
    /// written (outside the lock), the next opener does not rescan, and once its background
    /// sweep has run the sizes equal the files and no temporary is left (walking the files
    /// before that sweep is what once made the crash suite see the index "15 KB behind the
    /// disk"); renamed into place but not journaled (intent set, the entry named), the opener
    /// looks at that entry alone — no rescan — and counts it.
    @Test(arguments: ["writing", "journal"])
    func aWriterKilledAtAChosenPointLeavesExactSizes(point: String) throws {
        try withTemporaryDirectory { dir throws in
            let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
            let ready = dir.path + "-ready"
            _ = unlink(ready)
            defer { _ = unlink(ready) }
            let child = try ChildProcess(worker, ["stop-in-write", dir.path, ready, point])
            let deadline = ContinuousClock.now + .seconds(120)
            while access(ready, F_OK) != 0 && ContinuousClock.now < deadline { usleep(1_000) }
            let status = child.kill()
            try #require(status & 0x7F == SIGKILL, "the worker ended by itself, wait status \(status)")
            let words = try Data(contentsOf: dir.appendingPathComponent(".archivist/shared"))
            let epoch = words.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self) }
            let intent = words.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self) }
            #expect((intent != 0) == (point == "journal"))

            let store = try DiskStore.open(at: dir)
            #expect(store.index.shared.epoch == epoch)  // no rescan either way: a rescan starts an epoch
            store.waitForTrash()
            let files = entryFiles(under: dir)
            #expect(!files.keys.contains { AtomicFile.isTemporary($0.split(separator: "/").last ?? "") })
            #expect(store.usage(of: FolderPath([])).entryCount == (point == "journal" ? 11 : 10))
            #expect(store.usage(of: FolderPath([])).entryCount == files.count)
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(files.values.reduce(0, +)))
        }
    }
    #endif

    /// Before, 64 slots of owners that cannot be judged (other PID namespaces) made every open
    /// rescan forever.
    @Test func everySlotTakenDoesNotRescan() throws {
        try withTemporaryDirectory { dir throws in
            let a = try storeThroughLink(dir, "a")
            try a.write(
                Data(repeating: 1, count: 100),
                to: hashedKey("x", "1"),
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            let me = TemporaryName.identity
            let now = TemporaryName.currentTime()
            for i in 0..<63 {
                let foreign = TemporaryName.Owner(
                    pid: 1000 + Int32(i),
                    namespace: me.namespace &+ 1,
                    incarnation: UInt64(i + 1)
                )
                #expect(
                    a.index.shared.register(as: foreign, now: i == 7 ? now - 2 * SharedCounters.unjudgedSlotAge : now)
                        .slot
                        != nil
                )
            }
            let epoch = a.index.shared.epoch
            // The old unjudged slot is reused.
            let b = try storeThroughLink(dir, "b")
            #expect(b.index.shared.epoch == epoch)
            #expect(b.usage(of: FolderPath([])).entryCount == 1)
            // None left: the next opener works without a slot, still without a rescan.
            let c = try storeThroughLink(dir, "c")
            #expect(c.index.shared.epoch == epoch)
            #expect(c.usage(of: FolderPath([])).entryCount == 1)
            #expect(
                a.index.shared.register(
                    as: TemporaryName.Owner(pid: 9, namespace: me.namespace &+ 1, incarnation: 99),
                    now: now
                ).slot == nil
            )
        }
    }

    // Starts a worker process: macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// A real process that stores and exits without releasing its manager (as a global one
    /// never is): its `atexit` handler frees its slot, so the next opener loads the index and
    /// journal without a rescan.
    @Test func theNextLaunchAfterANormalExitDoesNotRescan() throws {
        try withTemporaryDirectory { dir throws in
            let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
            ChildProcess.waitForAll([try ChildProcess(worker, ["store-then-exit", dir.path, "no-flush"])])
            let words = try Data(contentsOf: dir.appendingPathComponent(".archivist/shared"))
            let epoch = words.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt64.self) }
            let store = try DiskStore.open(at: dir)
            #expect(store.index.shared.epoch == epoch)
            #expect(store.usage(of: FolderPath([])).entryCount == 100)
            #expect(store.usage(of: FolderPath([])).logicalBytes == Int64(entryFiles(under: dir).values.reduce(0, +)))
        }
    }
    #endif

    /// Before, the magic word's compare-and-swap result was ignored and a file of another
    /// layout (here all bits set) was used as is: its slots all looked taken by owners that
    /// cannot be judged, and its intent word set.
    @Test func aSharedFileOfAnotherLayoutIsReinitialised() throws {
        try withTemporaryDirectory { dir throws in
            let folder = dir.appendingPathComponent(".archivist")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(repeating: 0xFF, count: 4096).write(to: folder.appendingPathComponent("shared"))
            let a = try storeThroughLink(dir, "a")
            let words = try Data(contentsOf: folder.appendingPathComponent("shared"))
            #expect(words.withUnsafeBytes { $0.load(as: UInt64.self) } == SharedCounters.magic)
            #expect(!a.index.shared.intent)
            let foreign = TemporaryName.Owner(pid: 9, namespace: TemporaryName.identity.namespace &+ 1, incarnation: 99)
            #expect(a.index.shared.register(as: foreign).slot != nil)  // the garbage slots were cleared
            try a.write(
                Data(repeating: 1, count: 100),
                to: hashedKey("x", "1"),
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            let epoch = a.index.shared.epoch
            let b = try storeThroughLink(dir, "b")  // our layout now: no rescan
            #expect(b.index.shared.epoch == epoch)
            #expect(b.usage(of: FolderPath([])).entryCount == 1)
        }
    }
}

#if os(Linux)
/// A child forked without `exec` (a pre-fork server's worker) is a process of its own: it draws
/// its own identity, so its temporaries are not taken for its parent's and its exit does not
/// free the parent's slot. (Apple platforms do not offer `fork` to Swift.) The fork happens in
/// a worker process at rest (`fork-child`), which checks the child's identity; this test checks
/// the worker's slot outlived the child's exit.
@Suite struct ForkedChildTests {
    @Test func aForkedChildNeitherPassesForItsParentNorFreesItsSlot() throws {
        try withTemporaryDirectory { dir throws in
            let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
            let ready = dir.path + "/ready"
            let parent = try ChildProcess(worker, ["fork-child", dir.appendingPathComponent("root").path, ready])
            let deadline = ContinuousClock.now + .seconds(180)
            var exited: Int32?
            while access(ready, F_OK) != 0 && exited == nil && ContinuousClock.now < deadline {
                var status: Int32 = 0
                if waitpid(parent.pid, &status, WNOHANG) == parent.pid { exited = status } else { usleep(1_000) }
            }
            try #require(exited == nil, "the worker ended before its child's check passed, wait status \(exited ?? 0)")
            defer { _ = parent.kill() }
            try #require(access(ready, F_OK) == 0, "the worker was not ready within 180 s")

            let store = try DiskStore.open(at: dir.appendingPathComponent("root"))
            let owners = (0..<SharedCounters.slotCount).compactMap { store.index.shared.owner(ofSlot: $0) }
            #expect(owners.contains { $0.pid == parent.pid }, "the child's exit freed its parent's slot: \(owners)")
        }
    }
}
#endif
