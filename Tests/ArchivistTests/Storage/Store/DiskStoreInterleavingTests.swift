import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Races between two "processes" forced deterministically: store A's file system runs a chosen
/// action of store B just before A takes its cross-process lock exclusively — the moment where
/// A has made its decision and another process may still commit before A acts on it. The two
/// stores share one root through separate links, as in ``DiskStoreSharingTests``.
@Suite struct DiskStoreInterleavingTests {
    /// Runs an action on the Nth exclusive `flock` after ``arm(after:_:)``, before the lock.
    private final class BeforeExclusiveLock: Sendable {
        private struct Plan {
            var remaining: Int
            var action: (@Sendable () -> Void)?
        }
        private let plan = Locked(Plan(remaining: 0, action: nil))
        private let ran = Locked(false)

        /// Runs `action` before the exclusive lock that follows `skipping` others.
        func arm(skipping: Int = 0, _ action: @escaping @Sendable () -> Void) {
            plan.withLock { $0 = Plan(remaining: skipping, action: action) }
        }

        /// Whether the armed action ran.
        var didRun: Bool { ran.withLock { $0 } }

        var fileSystem: FileSystem {
            var fs = FileSystem.posix
            fs.flock = { [self] fd, operation in
                if operation & LOCK_EX != 0 {
                    let action = plan.withLock { plan -> (@Sendable () -> Void)? in
                        guard let action = plan.action else { return nil }
                        if plan.remaining > 0 {
                            plan.remaining -= 1
                            return nil
                        }
                        plan.action = nil
                        return action
                    }
                    if let action {
                        action()
                        ran.withLock { $0 = true }
                    }
                }
                return FileSystem.posix.flock(fd, operation)
            }
            return fs
        }
    }

    /// Store A (through `hook`'s file system) and store B on `dir`, each through its own link.
    private func twoStores(_ dir: URL, hook: BeforeExclusiveLock) throws -> (DiskStore, DiskStore) {
        let links = try (0..<2).map { try linkedFolder(dir, "race\($0)") }
        let stores = (try DiskStore.open(at: links[0], fileSystem: hook.fileSystem), try DiskStore.open(at: links[1]))
        // The walk of the trash each open queues takes the trash lock exclusively through A's
        // `flock` too: run late on a loaded machine, it took the armed action.
        stores.0.waitForTrash()
        stores.1.waitForTrash()
        return stores
    }

    private func write(_ store: DiskStore, _ key: DiskKey, _ byte: UInt8, count: Int, byteLimit: Int64? = nil) throws {
        try store.write(
            Data(repeating: byte, count: count),
            to: key,
            typeName: "t",
            parameter: nil,
            expiry: nil,
            durability: .none,
            byteLimit: byteLimit
        )
    }

    private func payload(_ store: DiskStore, _ key: DiskKey) throws -> Data? {
        try store.read(key, typeName: "t", parameter: nil) { $0.payload }
    }

    /// Both processes find K corrupt; B discards it and commits a fresh K; then A's discard
    /// takes the lock. A must not unlink B's fresh file nor journal its removal.
    @Test func aDiscardLeavesAFreshEntryAnotherProcessWroteMeanwhile() throws {
        try withTemporaryDirectory { dir throws in
            let hook = BeforeExclusiveLock()
            let (a, b) = try twoStores(dir, hook: hook)
            let key = DiskKey(folder: FolderPath(["f"]), name: EntryName(parameter: "k"))
            try FileManager.default.createDirectory(atPath: dir.path + "/f", withIntermediateDirectories: true)
            try Data("not an entry".utf8).write(to: URL(fileURLWithPath: a.path(of: key)))
            hook.arm {
                #expect(throws: StorageError.self) { _ = try payload(b, key) }  // B discards it...
                try? write(b, key, 9, count: 100)  // ...and writes afresh
            }
            #expect(throws: StorageError.self) { _ = try payload(a, key) }
            #expect(hook.didRun)
            #expect(try payload(b, key) == Data(repeating: 9, count: 100))
            #expect(try payload(a, key) == Data(repeating: 9, count: 100))
            #expect(a.contains(key) && b.contains(key))
            #expect(a.usage(of: FolderPath([])).logicalBytes == b.usage(of: FolderPath([])).logicalBytes)
        }
    }

    /// A folder at the key's path (a non-file entry) is still discarded by its identity.
    @Test func aDiscardStillClearsAFolderAtTheEntrysPath() throws {
        try withTemporaryDirectory { dir throws in
            let hook = BeforeExclusiveLock()
            let (a, _) = try twoStores(dir, hook: hook)
            let key = DiskKey(folder: FolderPath(["f"]), name: EntryName(parameter: "k"))
            try FileManager.default.createDirectory(atPath: a.path(of: key), withIntermediateDirectories: true)
            #expect(throws: StorageError.self) { _ = try payload(a, key) }
            #expect(try payload(a, key) == nil)
            try write(a, key, 1, count: 10)
            #expect(try payload(a, key) == Data(repeating: 1, count: 10))
        }
    }

    /// A's eviction lists X as least recently accessed; B then rewrites X; A's eviction
    /// reaches X. It must not unlink the fresh X from its stale list.
    @Test func evictionSparesAnEntryRewrittenAfterItsCandidatesWereListed() throws {
        try withTemporaryDirectory { dir throws in
            let hook = BeforeExclusiveLock()
            let (a, b) = try twoStores(dir, hook: hook)
            let folder = FolderPath(["f"])
            let x = DiskKey(folder: folder, name: EntryName(parameter: "x"))
            let y = DiskKey(folder: folder, name: EntryName(parameter: "y"))
            try write(a, x, 1, count: 600)
            // Writing Y takes the lock once for its rename, then once per eviction.
            hook.arm(skipping: 1) { try? write(b, x, 2, count: 300) }
            try write(a, y, 3, count: 600, byteLimit: 1_000)
            #expect(hook.didRun)
            #expect(try payload(b, x) == Data(repeating: 2, count: 300))
            #expect(a.contains(x) && b.contains(x))
            #expect(try payload(a, y) == Data(repeating: 3, count: 600))
        }
    }
}
