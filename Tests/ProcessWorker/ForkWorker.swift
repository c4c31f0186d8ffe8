#if os(Linux)
import Archivist
import ArchivistTestSupport
import Foundation
import Glibc

// The mode `ForkedChildTests` runs: a store's process forks a child without `exec`.
//
// The fork happens here, in a process that does nothing else, rather than in the test process:
// a child forked from a process with other busy threads inherits whatever locks those threads
// held at that instant (the Swift runtime's, the allocator's) and can wait on them forever as
// it exits. The tests run many suites in parallel; this worker runs one store at rest.

/// `fork-child <root> <ready file>`: opens a store under `<root>`, then forks a child that
/// checks it drew an identity of its own (its temporaries must not pass for this process's)
/// and leaves through `exit`, whose handler frees the slots of the exiting process's identity.
/// Once the child has exited with success and this process's identity is unchanged, creates
/// the ready file and waits to be killed, still holding the slot the test looks for.
func forkChild(_ arguments: [String]) throws {
    let root = URL(fileURLWithPath: argument(arguments, 0, "root") { $0 }, isDirectory: true)
    let ready = argument(arguments, 1, "ready file") { $0 }
    let store = try DiskStore.open(at: root)
    try store.flush()
    // The open's own work is done, its trash walk included (queued by the open): the fork finds
    // this process at rest, with no thread in the middle of a walk's locks and allocations.
    store.waitForTrash()
    let parent = TemporaryName.identity
    let parentPrefix = TemporaryName.ownerPrefix

    let child = fork()
    if child == 0 {
        let me = TemporaryName.identity
        let distinct =
            me.pid == getpid() && me.incarnation != parent.incarnation
            && me.namespace == parent.namespace && TemporaryName.ownerPrefix != parentPrefix
        isForkedChild = true
        exit(distinct ? 0 : 3)  // `exit`, not `_exit`: the atexit handler that frees slots runs
    }
    guard child > 0 else { fail("fork failed: errno \(errno)") }

    var status: Int32 = 0
    let deadline = ContinuousClock.now + .seconds(120)
    while waitpid(child, &status, WNOHANG) == 0 {
        guard ContinuousClock.now < deadline else {
            kill(child, SIGKILL)
            fail("the forked child did not exit within 120 s")
        }
        usleep(1_000)
    }
    guard status & 0x7F == 0 else { fail("the forked child ended by signal \(status & 0x7F)") }
    guard (status >> 8) & 0xFF == 0 else {
        fail("the forked child kept its parent's identity (exit status \((status >> 8) & 0xFF))")
    }
    guard TemporaryName.identity == parent else { fail("the fork changed the parent's identity") }
    withExtendedLifetime(store) {
        _ = FileManager.default.createFile(atPath: ready, contents: nil)
        while true { pause() }
    }
}

/// Set in the forked child only, where LeakSanitizer must not look for leaks at exit.
nonisolated(unsafe) private var isForkedChild = false

/// LeakSanitizer's hook (called, when the tests run under `--sanitize=address`, as the process
/// exits): a forked child has only the thread that forked, so whatever the other threads of
/// this process were holding on their stacks at that moment is reachable from nowhere in the
/// child and would be reported as leaked.
@_cdecl("__lsan_is_turned_off")
func leakSanitizerIsTurnedOff() -> Int32 { isForkedChild ? 1 : 0 }
#endif
