import Foundation

/// A lock many holders may share, or one may hold exclusively; exclusive requests go first.
///
/// Writers of different cache keys share it, so they never wait for one another; clearing a
/// folder takes it exclusively for the moment of the rename, so no write is half inside the
/// folder that moves to the trash. A waiting exclusive request stops new shared holders, so a
/// steady stream of writes cannot starve a clear.
///
/// ```swift
/// let gate = SharedExclusiveLock()
/// try gate.withShared { try writeOneKey() }
/// gate.withExclusive { moveFolderToTrash() }
/// ```
package final class SharedExclusiveLock {
    private let condition = NSCondition()
    private var sharedHolders = 0
    private var exclusiveHeld = false
    private var exclusiveWaiting = 0

    /// Creates an unheld lock.
    package init() {}

    /// Runs `body` while holding the lock shared.
    ///
    /// - Complexity: O(1) plus `body`; waits while an exclusive holder runs or waits.
    package func withShared<R>(_ body: () throws -> R) rethrows -> R {
        condition.lock()
        while exclusiveHeld || exclusiveWaiting > 0 { condition.wait() }
        sharedHolders += 1
        condition.unlock()
        defer {
            condition.lock()
            sharedHolders -= 1
            if sharedHolders == 0 { condition.broadcast() }
            condition.unlock()
        }
        return try body()
    }

    /// Runs `body` while holding the lock exclusively.
    ///
    /// - Complexity: O(1) plus `body`; waits for the current shared holders to finish.
    package func withExclusive<R>(_ body: () throws -> R) rethrows -> R {
        condition.lock()
        exclusiveWaiting += 1
        while exclusiveHeld || sharedHolders > 0 { condition.wait() }
        exclusiveWaiting -= 1
        exclusiveHeld = true
        condition.unlock()
        defer {
            condition.lock()
            exclusiveHeld = false
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }
}

extension SharedExclusiveLock: @unchecked Sendable {
    // Safety: `sharedHolders`, `exclusiveHeld` and `exclusiveWaiting` are read and written only
    // while `condition` (an NSCondition, itself a lock) is held.
}
