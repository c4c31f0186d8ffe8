import Foundation

/// A small mutual-exclusion lock guarding in-memory state.
///
/// Built on `NSLock` rather than `Synchronization.Mutex`: on Linux with Swift 6.3.1,
/// ThreadSanitizer reports Mutex-guarded state as racy (a false positive), while NSLock runs
/// clean, and our TSan runs must mean something. Never hold a `Lock` across file I/O of an
/// unrelated key.
///
/// ```swift
/// let lock = Lock()
/// lock.withLock { counter += 1 }
/// ```
@usableFromInline
package final class Lock: @unchecked Sendable {
    // Safety: NSLock is itself thread-safe; this wrapper holds no other state.
    @usableFromInline let base = NSLock()

    /// Creates an unlocked lock.
    package init() {}

    /// Runs `body` while holding the lock and returns its result.
    ///
    /// - Complexity: O(1) plus the cost of `body`.
    @inlinable
    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        base.lock()
        defer { base.unlock() }
        return try body()
    }

    /// Takes the lock; pair it with ``unlock()`` on every path. For hot paths whose body is
    /// better written inline than as a closure (see `MemoryCache.value(hash:where:)`); prefer
    /// ``withLock(_:)``.
    ///
    /// - Complexity: O(1) when the lock is free.
    @inlinable @inline(__always)
    package func lock() { base.lock() }

    /// Releases the lock taken by ``lock()``.
    ///
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    package func unlock() { base.unlock() }
}

/// A value guarded by a ``Lock``; the only way to touch it is inside ``withLock(_:)``.
///
/// ```swift
/// let hits = Locked(0)
/// hits.withLock { $0 += 1 }
/// ```
package final class Locked<Value>: @unchecked Sendable {
    // Safety: `value`'s memory is read and written only inside `lock.withLock`.
    private let lock = Lock()
    /// The value, in memory of its own rather than a stored `var`: an `inout` access to a
    /// class's `var` is checked for exclusivity at run time (a `swift_beginAccess` call each
    /// time), which the lock already guarantees, and a cache set makes several (the
    /// `cache-manager` suite's 1 KB set guards it).
    private let value: UnsafeMutablePointer<Value>

    /// Wraps `value`.
    package init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the guarded value.
    ///
    /// - Complexity: O(1) plus the cost of `body`.
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try lock.withLock { try body(&value.pointee) }
    }
}
