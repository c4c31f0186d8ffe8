import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs several stores' loops of `count` operations *operation by operation*: operation 0 of
/// every store, then operation 1 of every store, and so on, the store that goes first rotating
/// from one operation to the next; each operation is timed on its own and the times are summed
/// per store.
///
/// Why: filling one store and then the other, a kernel stall — ext4 scanning the inodes
/// deleted in the last seconds under `open(O_CREAT)` on the unjournaled root file system, a
/// journal commit or write-back throttling on a journaled one — falls on whichever store is
/// filling at that moment and decides its median, so one build's ratio swings from run to run.
/// Interleaved, both stores work under the same kernel state at every moment, as the
/// round-robin of `Harness.measureInterleaved` does for load from other programs; a stall
/// longer than a few operations lands on both.
///
/// Wall time comes from `CLOCK_MONOTONIC` (a vDSO read, cheap); the thread's CPU time (user and
/// kernel, `CLOCK_THREAD_CPUTIME_ID`, a system call, far dearer) is read outside each wall-time
/// bracket, and the measured cost of an empty bracket is subtracted, so neither clock inflates
/// one store's operations more than the other's.
enum InterleavedOperations {
    /// One store's summed time over the loop.
    struct Totals {
        /// Wall time in nanoseconds.
        var wall: Int64 = 0
        /// The calling thread's CPU time in nanoseconds (user and kernel).
        var cpu: Int64 = 0
        /// Each operation's wall time in nanoseconds, in order.
        var operations: [Int64] = []
    }

    /// Runs `operation(store, i)` for each of `stores` stores and `i` in `0..<count` as described
    /// above, the first turn going to store `firstTurn % stores`; returns each store's totals.
    static func run(
        count: Int,
        stores: Int,
        firstTurn: Int = 0,
        _ operation: (_ store: Int, _ i: Int) throws -> Void
    ) rethrows -> [Totals] {
        var totals = Array(repeating: Totals(), count: stores)
        for store in 0..<stores { totals[store].operations.reserveCapacity(count) }
        let overhead = emptyBracketCPU
        for i in 0..<count {
            for k in 0..<stores {
                let store = (k + firstTurn + i) % stores
                let cpu0 = threadCPU()
                let wall0 = monotonic()
                try operation(store, i)
                let wall1 = monotonic()
                let cpu1 = threadCPU()
                totals[store].wall += wall1 - wall0
                totals[store].cpu += cpu1 - cpu0 - overhead
                totals[store].operations.append(wall1 - wall0)
            }
        }
        return totals
    }

    /// The median CPU time an empty bracket measures (the clock reads themselves).
    static let emptyBracketCPU: Int64 = {
        var samples: [Int64] = []
        for _ in 0..<2_001 {
            let cpu0 = threadCPU()
            _ = monotonic()
            _ = monotonic()
            samples.append(threadCPU() - cpu0)
        }
        return samples.sorted()[samples.count / 2]
    }()

    /// `CLOCK_MONOTONIC` in nanoseconds.
    static func monotonic() -> Int64 { read(CLOCK_MONOTONIC) }

    /// The calling thread's CPU time (user and kernel) in nanoseconds.
    static func threadCPU() -> Int64 { read(CLOCK_THREAD_CPUTIME_ID) }

    private static func read(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
