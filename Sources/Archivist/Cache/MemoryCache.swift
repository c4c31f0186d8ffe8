/// A thread-safe in-memory cache that evicts the least recently used entries when it grows
/// past a count limit or a total-cost limit.
///
/// Reading a value with ``value(forKey:)`` counts as a use and makes it the most recent entry;
/// ``setValue(_:forKey:cost:)`` inserts or replaces an entry as the most recent one, then evicts
/// from the least recent end until the cache is within both limits. Unlike `NSCache`, whose
/// Linux implementation evicts the newest insert first, the order is strict LRU on every
/// platform, and nothing is evicted behind the caller's back (no memory-pressure purges of its
/// own: call ``trim(toCost:)`` or ``removeAll()`` when the system is short of memory, as
/// `CacheManager` does for its memory tier).
///
/// All operations take one internal lock for a probe of the hash index and a few array writes
/// (the key is hashed before the lock is taken); the lock is never held while a caller's closure runs or while a value is released, so a value's
/// `deinit` may safely touch the cache again.
///
/// ```swift
/// let cache = MemoryCache<String, [Product]>(configuration: .init(countLimit: 100, costLimit: 1 << 20))
/// cache.setValue(products, forKey: "productList", cost: bytes.count)
/// if let hit = cache.value(forKey: "productList") { show(hit) }
/// cache.removeAll { $0.hasPrefix("user/") }
/// ```
///
/// - Complexity: ``value(forKey:)``, ``setValue(_:forKey:cost:)`` and
///   ``removeValue(forKey:)`` are O(1) expected (plus O(e) for e evicted entries);
///   ``removeAll(where:)`` is O(n). Nothing here touches the disk.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable> {
    /// The limits a ``MemoryCache`` keeps itself within.
    ///
    /// A limit of `0` (or less) means "unlimited".
    ///
    /// ```swift
    /// let configuration = MemoryCache<String, Data>.Configuration(countLimit: 500, costLimit: 50 << 20)
    /// ```
    public struct Configuration: Sendable, Hashable {
        /// The most entries the cache holds; `0` means no count limit.
        public var countLimit: Int
        /// The largest total of entry costs the cache holds; `0` means no cost limit.
        public var costLimit: Int

        /// Creates a configuration; both limits default to `0`, meaning unlimited.
        ///
        /// ```swift
        /// let unlimited = MemoryCache<String, Data>.Configuration()
        /// ```
        ///
        /// - Complexity: O(1).
        public init(countLimit: Int = 0, costLimit: Int = 0) {
            self.countLimit = countLimit
            self.costLimit = costLimit
        }
    }

    /// The limits this cache was created with.
    public let configuration: Configuration
    @usableFromInline let lock = Lock()
    /// The entries; read and written only inside `lock.withLock` (see the `Sendable` extension).
    /// The lock already makes every access exclusive, so the run-time exclusivity check, a
    /// large share of a hit, is skipped (the `memory-cache` suite's hits guard it).
    @usableFromInline @exclusivity(unchecked) var table = LRUTable<Key, Value>()

    /// Creates an empty cache with the given limits.
    ///
    /// ```swift
    /// let cache = MemoryCache<URL, Data>(configuration: .init(costLimit: 10 << 20))
    /// ```
    ///
    /// - Parameter configuration: the count and cost limits; unlimited by default.
    /// - Complexity: O(1).
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The number of entries in the cache.
    ///
    /// ```swift
    /// print(cache.count, "entries,", cache.totalCost, "bytes")
    /// ```
    ///
    /// - Complexity: O(1).
    @inlinable
    public var count: Int { lock.withLock { table.count } }

    /// The sum of the costs of the entries in the cache.
    ///
    /// ```swift
    /// assert(cache.totalCost <= cache.configuration.costLimit || cache.configuration.costLimit == 0)
    /// ```
    ///
    /// - Complexity: O(1).
    @inlinable
    public var totalCost: Int { lock.withLock { table.totalCost } }

    /// Returns the value stored for `key` and makes that entry the most recently used one.
    ///
    /// A miss returns `nil` and changes nothing.
    ///
    /// ```swift
    /// if let products = cache.value(forKey: "productList") { render(products) }
    /// ```
    ///
    /// - Parameter key: the key to look up.
    /// - Returns: the cached value, or `nil` when there is none.
    /// - Complexity: O(1) expected.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        // Hashed before the lock is taken: the lock is held only for the probe and the relink.
        let hash = key.hashValue
        return lock.withLock { table.value(forKey: key, hash: hash) }
    }

    /// ``value(forKey:)`` for a key the caller hashed itself and matches in place, by address
    /// (the memory tier, whose keys are never built for a lookup). Every call on one cache must
    /// hash alike.
    ///
    /// Always inlined, and it takes the lock without a closure: compiled as a call of its own
    /// (with `matches` and the lock's body as closures), it made the memory tier retain and
    /// release the name and the parameter strings that `matches` captures, two pairs a hit.
    /// `matches` must not throw or touch the cache.
    ///
    /// - Complexity: O(1) expected.
    @inlinable @inline(__always)
    func value(hash: Int, where matches: (UnsafePointer<Key>) -> Bool) -> Value? {
        lock.lock()
        let value = table.value(hash: hash, where: matches)
        lock.unlock()
        return value
    }

    /// Stores `value` for `key` as the most recently used entry, then evicts least recently
    /// used entries until the cache is within its count and cost limits.
    ///
    /// An entry whose cost alone exceeds the cost limit is not kept: the call removes any
    /// existing value for `key` (it would otherwise be stale) and stores nothing. A negative
    /// cost counts as `0`. The total of all costs must fit in an `Int`.
    ///
    /// ```swift
    /// cache.setValue(products, forKey: "productList", cost: bytes.count)
    /// ```
    ///
    /// - Parameters:
    ///   - value: the value to cache.
    ///   - key: the key to store it under, replacing any previous value.
    ///   - cost: what the entry counts against ``Configuration/costLimit``, e.g. its byte size.
    /// - Complexity: O(1) expected, plus O(e) for e evicted entries.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost: Int = 0) {
        setValue(value, forKey: key, hash: key.hashValue, cost: cost)
    }

    /// ``setValue(_:forKey:cost:)`` with the key's hash as the caller computes it (see
    /// ``value(hash:where:)``); `evicted` gets each value the limits evicted, after the lock.
    ///
    /// - Complexity: O(1) expected, plus O(e) for e evicted entries.
    @inlinable
    func setValue(_ value: Value, forKey key: Key, hash: Int, cost: Int, evicted: (Value) -> Void = { _ in }) {
        let cost = max(cost, 0)
        let countLimit = configuration.countLimit
        let costLimit = configuration.costLimit
        // The replaced and evicted entries come back out of `withLock` and are released only
        // after the lock is dropped, so a value's deinit cannot deadlock on the cache. The
        // common single eviction travels in an optional, which costs no allocation.
        typealias Slot = LRUTable<Key, Value>.Slot
        let (_, first, more) = lock.withLock { () -> (replaced: Value?, first: Slot?, more: [Slot]) in
            if costLimit > 0, cost > costLimit {
                return (table.removeValue(forKey: key, hash: hash), nil, [])
            }
            let replaced = table.insert(value, forKey: key, hash: hash, cost: cost)
            var first: Slot?
            var more: [Slot] = []
            while countLimit > 0 && table.count > countLimit
                || costLimit > 0 && table.totalCost > costLimit
            {
                guard let slot = table.removeLeastRecentlyUsed() else { break }
                if first == nil { first = slot } else { more.append(slot) }
            }
            return (replaced, first, more)
        }
        if let first { evicted(first.value) }
        for slot in more { evicted(slot.value) }
    }

    /// Removes the value stored for `key`.
    ///
    /// ```swift
    /// let dropped = cache.removeValue(forKey: "productList")
    /// ```
    ///
    /// - Parameter key: the key to remove.
    /// - Returns: the removed value, or `nil` when there was none.
    /// - Complexity: O(1) expected.
    @inlinable @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        removeValue(forKey: key, hash: key.hashValue)
    }

    /// ``removeValue(forKey:)`` with the key's hash as the caller computes it (see
    /// ``value(hash:where:)``).
    ///
    /// - Complexity: O(1) expected.
    @inlinable @discardableResult
    func removeValue(forKey key: Key, hash: Int) -> Value? {
        lock.withLock { table.removeValue(forKey: key, hash: hash) }
    }

    /// Removes every entry.
    ///
    /// ```swift
    /// cache.removeAll()
    /// ```
    ///
    /// - Complexity: O(1) under the lock; releasing the n values afterwards is O(n).
    public func removeAll() {
        _ = lock.withLock { table.removeAll() }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`: what to do
    /// when the system is short of memory. The limits stay as configured, so the cache may
    /// fill up again.
    ///
    /// ```swift
    /// cache.trim(toCost: cache.totalCost / 2)   // drop the older half of the bytes
    /// ```
    ///
    /// - Parameter cost: the total cost to keep at most; `0` (or less) empties the cache.
    /// - Complexity: O(e) for e evicted entries; their values are released after the lock.
    public func trim(toCost cost: Int) {
        if cost <= 0 {
            removeAll()
            return
        }
        _ = lock.withLock { () -> [LRUTable<Key, Value>.Slot] in
            var evicted: [LRUTable<Key, Value>.Slot] = []
            while table.totalCost > cost, let slot = table.removeLeastRecentlyUsed() { evicted.append(slot) }
            return evicted
        }
    }

    /// Removes every entry whose key satisfies `shouldRemove`.
    ///
    /// The predicate runs without the cache's lock held (over a snapshot of the keys), so it
    /// may call back into the cache. A key inserted while the predicate runs is not
    /// considered; a matching key whose value was replaced meanwhile is removed.
    ///
    /// ```swift
    /// cache.removeAll { $0.hasPrefix("user/alice/") }
    /// ```
    ///
    /// - Parameter shouldRemove: returns `true` for keys to remove.
    /// - Complexity: O(n), for the snapshot of n keys.
    public func removeAll(where shouldRemove: (Key) -> Bool) {
        // The stored hashes come along, so that this works however the keys were hashed.
        let entries = lock.withLock { table.slots.map { (key: $0.key, hash: $0.hash) } }
        let doomed = entries.filter { shouldRemove($0.key) }
        guard !doomed.isEmpty else { return }
        _ = lock.withLock { doomed.compactMap { table.removeValue(forKey: $0.key, hash: $0.hash) } }
    }
}

// MARK: - Testing support

extension MemoryCache {
    /// Keys from most to least recently used (for tests).
    ///
    /// - Complexity: O(n).
    var keysByRecency: [Key] { lock.withLock { table.keysByRecency } }

    /// The first broken internal invariant, or `nil` (for tests).
    ///
    /// - Complexity: O(n).
    func invariantViolation() -> String? { invariantViolation(hashing: \.hashValue) }

    /// The first broken internal invariant, for keys hashed with `hashing` (for tests).
    ///
    /// - Complexity: O(n).
    func invariantViolation(hashing: (Key) -> Int) -> String? {
        lock.withLock { table.invariantViolation(hashing: hashing) }
    }
}

// Safety: `table`, the only `var`, is read and written only inside `lock.withLock`; every
// other stored property is an immutable `Sendable` value.
extension MemoryCache: @unchecked Sendable {}
