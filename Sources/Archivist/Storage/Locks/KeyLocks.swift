import Foundation

/// One lock per key, created on demand and dropped when nobody holds or waits for it.
///
/// File I/O on one entry holds that entry's lock, so two writers of the same key cannot
/// interleave their renames and index updates, while I/O on different keys never waits
/// behind one global lock. The table's own lock is held only to find or drop an entry.
///
/// Keys are hashed once and the table is keyed by the hash: two keys whose 64-bit hashes
/// collide share a lock, which costs concurrency, never correctness. So the hash is a cheap
/// one over the key's UTF-8 bytes, eight at a time (``hash(_:)``), not `String.hashValue`,
/// whose SipHash over an entry's path of about 100 bytes costs every write far more (the
/// `cache-manager` suite's 1 KB set guards it).
///
/// ```swift
/// let locks = KeyLocks()
/// try locks.withLock("shared-caches/…/value") { try replaceTheFile() }
/// ```
package final class KeyLocks: Sendable {
    private let table = Locked<Table>(Table())

    /// Locks in use by key, and a few idle ones kept for reuse (creating an NSLock allocates).
    private struct Table {
        var locks: [Int: KeyLock] = [:]
        var idle: [KeyLock] = []
    }

    /// Creates an empty table.
    package init() {}

    /// Runs `body` while holding the lock for `key`.
    ///
    /// - Complexity: O(1) plus `body`; waits only for holders of the same key.
    package func withLock<R>(_ name: String, _ body: () throws -> R) rethrows -> R {
        let key = Self.hash(name)
        let lock = table.withLock { table in
            // One lookup of the key: its slot is found once, filled in place if empty.
            Self.enter(&table.locks[key], idle: &table.idle)
        }
        lock.base.lock()
        defer {
            lock.base.unlock()
            release(key, lock)
        }
        return try body()
    }

    /// The lock in `slot` (one from `idle`, or a new one, when it is empty), with one more user.
    private static func enter(_ slot: inout KeyLock?, idle: inout [KeyLock]) -> KeyLock {
        let lock = slot ?? idle.popLast() ?? KeyLock()
        lock.users += 1
        slot = lock
        return lock
    }

    /// Runs `body` holding the lock for `key` if it is free right now; returns `nil` without
    /// running `body` if someone else holds it.
    ///
    /// - Complexity: O(1) plus `body`; never waits.
    package func withLockIfAvailable<R>(_ name: String, _ body: () throws -> R) rethrows -> R? {
        let key = Self.hash(name)
        let lock = table.withLock { table -> KeyLock? in
            if table.locks[key] != nil { return nil }
            let lock = table.idle.popLast() ?? KeyLock()
            lock.users = 1
            table.locks[key] = lock
            return lock
        }
        guard let lock else { return nil }
        lock.base.lock()
        defer {
            lock.base.unlock()
            release(key, lock)
        }
        return try body()
    }

    /// A 64-bit hash of `name`'s UTF-8 bytes: each 8-byte word (the last one zero-padded,
    /// the length mixed in first) folded in with a multiply and a shift. Not seeded and not
    /// meant to resist chosen keys — a collision only makes two keys share a lock — but every
    /// byte reaches the result, and the paths it hashes end in 32 hex digits of an MD5.
    ///
    /// - Complexity: O(n) in bytes: a load, two xors, a multiply and a shift per 8 bytes.
    static func hash(_ name: String) -> Int {
        var name = name
        return name.withUTF8 { bytes in
            let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
            var h = UInt64(truncatingIfNeeded: bytes.count) &* multiplier
            let raw = UnsafeRawBufferPointer(bytes)
            var at = 0
            while bytes.count - at >= 8 {
                h = (h ^ UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self))) &* multiplier
                h ^= h >> 29
                at += 8
            }
            if at < bytes.count {
                var last: UInt64 = 0
                for i in at..<bytes.count { last |= UInt64(bytes[i]) << (8 * UInt64(i - at)) }
                h = (h ^ last) &* multiplier
                h ^= h >> 29
            }
            return Int(truncatingIfNeeded: h)
        }
    }

    private func release(_ key: Int, _ lock: KeyLock) {
        table.withLock { table in
            lock.users -= 1
            if lock.users == 0 {
                table.locks[key] = nil
                if table.idle.count < 64 { table.idle.append(lock) }
            }
        }
    }
}

/// A key's lock and the number of threads holding or waiting for it.
final class KeyLock {
    let base = NSLock()
    var users = 0
}

extension KeyLock: @unchecked Sendable {
    // Safety: `users` is read and written only inside the owning `KeyLocks.table` lock;
    // `base` is an NSLock, itself thread-safe.
}
