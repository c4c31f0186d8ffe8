// Starts worker processes: macOS and Linux only.
#if os(macOS) || os(Linux)
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The processes the tests start end by themselves when the process that started them goes
/// (`exitWhenParentExits`), so an interrupted test run leaves no worker spinning on the machine.
@Suite struct OrphanedWorkerTests {
    @Test func aWorkerWhoseParentExitsEndsByItself() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let pidFile = folder.file("orphan.pid").path
        let parent = try ChildProcess(worker, ["orphan", pidFile])
        #expect(ChildProcess.succeeded(parent.wait()))
        let orphan = try #require(pid_t(try String(contentsOfFile: pidFile, encoding: .utf8)))
        // Polls for up to 30 s (the watcher looks every 50 ms; the machine may be loaded).
        var gone = false
        for _ in 0..<3_000 where !gone {
            gone = processHasEnded(orphan)
            if !gone { usleep(10_000) }
        }
        if !gone { _ = kill(orphan, SIGKILL) }
        #expect(gone, "worker \(orphan) outlived its parent")
    }
}

/// Whether `pid` no longer runs: no such process, or (Linux) a zombie its new parent has not
/// reaped yet.
private func processHasEnded(_ pid: pid_t) -> Bool {
    if kill(pid, 0) != 0 && errno == ESRCH { return true }
    #if os(Linux)
    if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    {
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }
    #endif
    return false
}
#endif
