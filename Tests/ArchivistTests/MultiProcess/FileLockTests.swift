import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `FileLock`: excludes other processes and other threads, is dropped by a killed holder.
@Suite struct FileLockTests {
    // Starts worker processes: macOS and Linux only.
    #if os(macOS) || os(Linux)
    @Test func processesIncrementingOneCounterUnderTheLockLoseNoIncrement() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let lockPath = folder.file("counter.lock").path
        let counterPath = folder.file("counter").path
        let children = try (0..<3).map { _ in
            try ChildProcess(worker, ["lock-counter", lockPath, counterPath, "300"])
        }
        // This process takes part too, from two threads.
        let lock = FileLock(path: lockPath)
        try withThrowingTaskGroupSync(count: 2) {
            for _ in 0..<150 {
                try lock.withExclusive {
                    let value = Int((try? String(contentsOfFile: counterPath, encoding: .utf8)) ?? "0") ?? -1_000_000
                    try String(value + 1).write(toFile: counterPath, atomically: false, encoding: .utf8)
                }
            }
        }
        ChildProcess.waitForAll(children)
        #expect(try String(contentsOfFile: counterPath, encoding: .utf8) == String(3 * 300 + 2 * 150))
    }

    @Test func aKilledHolderReleasesTheLock() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let lockPath = folder.file("held.lock").path
        // The child takes the lock a million times in a row; kill it at some moment, held or not.
        let child = try ChildProcess(worker, ["lock-counter", lockPath, folder.file("count").path, "1000000"])
        while !FileManager.default.fileExists(atPath: folder.file("count").path) { sched_yield() }
        _ = child.kill()
        let lock = FileLock(path: lockPath)
        let ran = try lock.withExclusive { true }  // would block forever if the kernel kept the lock
        #expect(ran)
    }
    #endif

    @Test func sharedHoldersOverlapAndExclusiveWaitsForThem() throws {
        let folder = try ScratchFolder()
        let lock = FileLock(path: folder.file("rw.lock").path)
        let inside = Locked(0)
        let most = Locked(0)
        try withThrowingTaskGroupSync(count: 4) {
            for _ in 0..<200 {
                try lock.withShared {
                    let now = inside.withLock {
                        $0 += 1
                        return $0
                    }
                    most.withLock { $0 = max($0, now) }
                    sched_yield()
                    inside.withLock { $0 -= 1 }
                }
                try lock.withExclusive {
                    #expect(inside.withLock { $0 } == 0)
                }
            }
        }
        #expect(most.withLock { $0 } >= 1)
    }

    @Test func exclusiveIsReentrantOnItsThread() throws {
        let folder = try ScratchFolder()
        let lock = FileLock(path: folder.file("re.lock").path)
        let value = try lock.withExclusive { try lock.withExclusive { 42 } }
        #expect(value == 42)
    }

    @Test func theLockFileIsPrivateWhateverTheUmask() throws {
        let folder = try ScratchFolder()
        let path = folder.file("private.lock").path
        let old = umask(0o777)
        defer { umask(old) }
        try FileLock(path: path).withExclusive {}
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
    }

    @Test func aBodysErrorComesBackUnchanged() throws {
        struct Refusal: Error, Equatable {}
        let folder = try ScratchFolder()
        let lock = FileLock(path: folder.file("e.lock").path)
        #expect(throws: Refusal()) { try lock.withExclusive { throw Refusal() } }
        #expect(throws: Refusal()) { try lock.withShared { throw Refusal() } }
        #expect(try lock.withExclusive { 1 } == 1)  // and the lock was released
    }
}

/// Runs `body` on `count` threads at once and waits for all; rethrows the first error.
func withThrowingTaskGroupSync(count: Int, _ body: @escaping @Sendable () throws -> Void) throws {
    let failures = Locked<[any Error]>([])
    DispatchQueue.concurrentPerform(iterations: count) { _ in
        do { try body() } catch { failures.withLock { $0.append(error) } }
    }
    if let first = failures.withLock({ $0.first }) { throw first }
}
