import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ends this process with status 3 soon after the process that started it has gone.
///
/// The processes the tests start (`ArchivistCrashWriter` writes until it is killed, a
/// `records-upsert` victim is given 100,000 upserts) would otherwise outlive a test runner
/// that was interrupted or crashed, and keep a core of the shared machine busy for many
/// minutes, disturbing every run after it. A background thread compares `getppid()` with the
/// parent seen at the call every 50 ms (portable; Linux's `PR_SET_PDEATHSIG` is a variadic C
/// call Swift cannot import). `_exit` is as abrupt as the `SIGKILL` the tests use anyway.
/// Call it first thing in a helper executable's `main`; never in the test process itself.
///
/// The parent is the pid in `ARCHIVIST_PARENT_PID` (``parentPIDVariable``) when the starter set
/// it, else the parent at the call: a parent that exits while the child is still starting up
/// would otherwise be missed, the child already belonging to `init` when it first looks.
public func exitWhenParentExits() {
    let parent = ProcessInfo.processInfo.environment[parentPIDVariable].flatMap { pid_t($0) } ?? getppid()
    let watcher = Thread {
        while getppid() == parent { usleep(50_000) }
        _exit(3)
    }
    watcher.name = "parent-watch"
    watcher.stackSize = 64 << 10
    watcher.start()
}

/// The environment variable a process that starts a helper executable sets to its own pid, so
/// that `exitWhenParentExits()` knows the parent even if it exits before the helper looks.
public let parentPIDVariable = "ARCHIVIST_PARENT_PID"
