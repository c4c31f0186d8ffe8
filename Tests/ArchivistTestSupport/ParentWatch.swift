#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Ends this process with status 3 soon after the process that started it has gone.
///
/// The processes the tests start (`ArchivistCrashWriter` writes until it is killed, a
/// `records-upsert` victim is given 100,000 upserts) would otherwise outlive a test runner
/// that was interrupted or crashed, and keep a core of the shared machine busy for many
/// minutes, disturbing every run after it. A background thread compares `getppid()` with the
/// parent seen at the call every 50 ms (portable; Linux's `PR_SET_PDEATHSIG` is a variadic C
/// call Swift cannot import). `_exit` is as abrupt as the `SIGKILL` the tests use anyway.
/// Call it first thing in a helper executable's `main`; never in the test process itself.
public func exitWhenParentExits() {
    let parent = getppid()
    let watcher = Thread {
        while getppid() == parent { usleep(50_000) }
        _exit(3)
    }
    watcher.name = "parent-watch"
    watcher.stackSize = 64 << 10
    watcher.start()
}
