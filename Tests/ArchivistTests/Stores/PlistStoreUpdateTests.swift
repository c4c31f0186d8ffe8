import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `PlistStore.update` runs the caller's closure without the file's lock and re-runs it when
/// another writer came first.
@Suite struct PlistStoreUpdateTests {
    /// Whether another open file description can take the plist's lock right now (what any
    /// other process would try).
    private func lockIsFree(_ url: URL) -> Bool {
        let fd = open(PlistFileLock.lockPath(for: url), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        _ = flock(fd, LOCK_UN)
        return true
    }

    /// The body runs without the lock, as documented, and a write made while it ran is not
    /// overwritten by the update: the body sees the lock free, and runs again on the root
    /// with that write in it.
    @Test(arguments: [PlistStore.Format.xml, .binary])
    func theBodyRunsWithoutTheLockAndAgainAfterAConcurrentWrite(format: PlistStore.Format) throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url, format: format)
        let other = PlistStore(directory: folder.url, format: format)  // another writer
        let url = try store.fileURL(for: "tasks")
        try store.set("Read", forKey: "t1", in: "tasks")
        var runs = 0
        let count = try store.update("tasks") { tasks -> Int in
            runs += 1
            if runs == 1 {
                #expect(lockIsFree(url))
                try other.set("Write", forKey: "t2", in: "tasks")
            }
            tasks["t3"] = "Walk"
            return tasks.count
        }
        #expect(runs == 2)
        #expect(count == 3)
        #expect(
            try PlistStore(directory: folder.url, format: format).root(of: "tasks")
                == ["t1": "Read", "t2": "Write", "t3": "Walk"]
        )
    }

    /// A throw is decided on the latest root too: the first run throws, the file changes
    /// meanwhile, and the second run (on the new root) succeeds.
    @Test func aThrowOnAStaleRootIsDecidedAgainOnTheNewOne() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        struct Missing: Error {}
        var runs = 0
        try store.update("tasks") { tasks in
            runs += 1
            if runs == 1 { try PlistStore(directory: folder.url).set(1, forKey: "ready", in: "tasks") }
            guard tasks["ready"] != nil else { throw Missing() }
            tasks["done"] = true
        }
        #expect(runs == 2)
        #expect(try store.root(of: "tasks") == ["ready": 1, "done": true])
    }

    /// A body that writes its own plist makes every optimistic attempt lose; the update still
    /// ends, running the body once under the lock after the optimistic attempts.
    @Test func aBodyWritingItsOwnPlistStillEnds() throws {
        let folder = try ScratchFolder()
        let store = PlistStore(directory: folder.url)
        try store.set(0, forKey: "n", in: "counter")
        var runs = 0
        try store.update("counter") { root in
            runs += 1
            try store.set(.int(runs), forKey: "inner", in: "counter")
            root["n"] = .int(runs)
        }
        #expect(runs == PlistStore.optimisticAttempts + 1)
        #expect(try store["counter"]["n"] == .int(runs))
    }
}
