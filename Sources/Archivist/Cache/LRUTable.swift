/// The unsynchronized core of ``MemoryCache``: an open-addressing hash index over a dense
/// array of slots, with an intrusive doubly linked list threaded through the slots for the
/// LRU order.
///
/// Slots are value types in one array, so an entry costs no class allocation of its own. A
/// removal moves the last slot into the hole ("swap-remove") and patches its neighbours and
/// its index word, which keeps the array dense without a free list or optionals. The list
/// runs from `head` (most recently used) to `tail` (least recently used); `-1` is the null
/// link.
///
/// The index is ours rather than a `[Key: Int]`, so that a lookup compares hashes before keys:
/// each word of `buckets` holds the upper half of the key's hash next to its slot number, and
/// a probe reads the key (a byte comparison, for the memory tier's string keys) only when the
/// hash halves match — about once a hit, where the dictionary compared keys at every probe.
/// The caller hashes the key before it takes its lock and passes the hash in (``MemoryCache``
/// uses `hashValue`, so Swift's seeded SipHash still guards against crafted collisions; the
/// memory tier a seeded multiply-mix of its own, see ``MemoryTier``); it must hash equal keys
/// alike, the same way for every call on one table. Linear probing at a
/// load of at most one half, with backward-shift deletion (no tombstones).
///
/// Every operation is O(1) expected (one probe sequence and a few array writes), except the
/// ones that say otherwise.
@usableFromInline
struct LRUTable<Key: Hashable, Value> {
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key
        @usableFromInline var value: Value
        @usableFromInline var cost: Int
        /// The key's hash as the caller gave it, kept for moving index words and growing the index.
        @usableFromInline var hash: Int
        @usableFromInline var previous: Int
        @usableFromInline var next: Int

        @inlinable
        init(key: Key, value: Value, cost: Int, hash: Int, previous: Int, next: Int) {
            self.key = key
            self.value = value
            self.cost = cost
            self.hash = hash
            self.previous = previous
            self.next = next
        }
    }

    @usableFromInline var slots: [Slot] = []
    /// The hash index: a power-of-two count of words (or none while empty), each `0` for an
    /// empty bucket or the key hash's upper 32 bits over the slot number plus one. A key's home
    /// bucket is its hash's low bits.
    @usableFromInline var buckets: [UInt64] = []
    @usableFromInline var head = -1
    @usableFromInline var tail = -1
    @usableFromInline var totalCost = 0

    @inlinable init() {}

    @inlinable var count: Int { slots.count }

    // MARK: Index words

    /// The part of an index word that holds the hash's upper half.
    @inlinable static var tagMask: UInt64 { 0xFFFF_FFFF_0000_0000 }

    @inlinable @inline(__always)
    static func tag(_ hash: Int) -> UInt64 { UInt64(UInt(bitPattern: hash)) & tagMask }

    @inlinable @inline(__always)
    static func word(hash: Int, slot: Int) -> UInt64 { tag(hash) | UInt64(slot + 1) }

    @inlinable @inline(__always)
    static func slot(of word: UInt64) -> Int { Int(truncatingIfNeeded: word & ~tagMask) - 1 }

    // MARK: Lookup

    /// The slot whose hash is `hash` and whose key `matches` accepts, or `nil`.
    ///
    /// One bounds check for the whole probe sequence, and `matches` runs only where the stored
    /// hash half equals `hash`'s: about once a hit. `matches` gets the slot's key in place, by
    /// address (valid only during the call): handed the key as a value, the optimizer copied
    /// it out of the array, retaining and releasing its strings, before any comparison.
    @inlinable @inline(__always)
    func slotIndex(hash: Int, where matches: (UnsafePointer<Key>) -> Bool) -> Int? {
        buckets.withUnsafeBufferPointer { buckets -> Int? in
            // An empty array's buffer may still have an address.
            guard !buckets.isEmpty, let words = buckets.baseAddress else { return nil }
            let mask = buckets.count &- 1
            let tag = Self.tag(hash)
            var bucket = hash & mask
            return slots.withUnsafeBufferPointer { slots -> Int? in
                while true {
                    let word = words[bucket]
                    if word == 0 { return nil }
                    if word & Self.tagMask == tag {
                        let index = Self.slot(of: word)
                        if matches((slots.baseAddress.unsafelyUnwrapped + index).pointer(to: \.key).unsafelyUnwrapped) {
                            return index
                        }
                    }
                    bucket = (bucket &+ 1) & mask
                }
            }
        }
    }

    /// The slot holding `key`, whose hash is `hash`, or `nil`.
    @inlinable @inline(__always)
    func slotIndex(of key: Key, hash: Int) -> Int? { slotIndex(hash: hash) { $0.pointee == key } }

    /// Returns the value of the entry that ``slotIndex(hash:where:)`` finds and marks it most
    /// recently used.
    @inlinable @inline(__always)
    mutating func value(hash: Int, where matches: (UnsafePointer<Key>) -> Bool) -> Value? {
        guard let index = slotIndex(hash: hash, where: matches) else { return nil }
        moveToFront(index)
        return slots[index].value
    }

    /// Returns the value for `key` (whose hash is `hash`) and marks it most recently used.
    @inlinable @inline(__always)
    mutating func value(forKey key: Key, hash: Int) -> Value? { value(hash: hash) { $0.pointee == key } }

    // MARK: Mutation

    /// Inserts or replaces the value for `key` (whose hash is `hash`) as the most
    /// recently used entry.
    ///
    /// - Returns: the value it replaced, if any.
    /// - Complexity: O(1) expected; O(n) when the index grows.
    @inlinable
    mutating func insert(_ value: Value, forKey key: Key, hash: Int, cost: Int) -> Value? {
        if let index = slotIndex(of: key, hash: hash) {
            let old = slots[index].value
            slots[index].value = value
            totalCost += cost - slots[index].cost
            slots[index].cost = cost
            moveToFront(index)
            return old
        }
        let index = slots.count
        // The index word keeps the slot number in 32 bits.
        precondition(UInt64(index) < UInt64(UInt32.max), "LRUTable holds fewer than 2^32 - 1 entries")
        slots.append(Slot(key: key, value: value, cost: cost, hash: hash, previous: -1, next: head))
        if head >= 0 { slots[head].previous = index } else { tail = index }
        head = index
        totalCost += cost
        if slots.count * 2 > buckets.count { rebuildIndex() } else { addToIndex(hash: hash, slot: index) }
        return nil
    }

    /// Removes the entry for `key`, whose hash is `hash`.
    @inlinable
    mutating func removeValue(forKey key: Key, hash: Int) -> Value? {
        guard let index = slotIndex(of: key, hash: hash) else { return nil }
        return remove(at: index).value
    }

    /// Removes the least recently used entry.
    @inlinable
    mutating func removeLeastRecentlyUsed() -> Slot? {
        tail >= 0 ? remove(at: tail) : nil
    }

    /// Removes every entry and returns the old slots so that the caller can release the values
    /// outside its lock.
    ///
    /// - Complexity: O(1) here; the caller pays O(n) when it drops the returned array.
    @inlinable
    mutating func removeAll() -> [Slot] {
        let old = slots
        self = LRUTable()
        return old
    }

    /// Every key, in no particular order.
    ///
    /// - Complexity: O(n).
    var keys: [Key] { slots.map(\.key) }

    // MARK: Index maintenance

    /// Puts `slot`'s word in the first empty bucket from its home (the index has room).
    @inlinable
    mutating func addToIndex(hash: Int, slot: Int) {
        let word = Self.word(hash: hash, slot: slot)
        buckets.withUnsafeMutableBufferPointer { buckets in
            let mask = buckets.count &- 1
            var bucket = hash & mask
            while buckets[bucket] != 0 { bucket = (bucket &+ 1) & mask }
            buckets[bucket] = word
        }
    }

    /// Rebuilds the index at the smallest power of two of at least twice the slots (and 8).
    ///
    /// - Complexity: O(n).
    @inlinable
    mutating func rebuildIndex() {
        var capacity = 8
        while capacity < slots.count * 2 { capacity *= 2 }
        buckets = Array(repeating: 0, count: capacity)
        for (index, slot) in slots.enumerated() { addToIndex(hash: slot.hash, slot: index) }
    }

    /// The bucket holding `slot`'s word (the slot's hash is `hash`; it is in the index).
    @inlinable
    func bucket(ofSlot slot: Int, hash: Int) -> Int {
        let mask = buckets.count &- 1
        let word = Self.word(hash: hash, slot: slot)
        var bucket = hash & mask
        while buckets[bucket] != word { bucket = (bucket &+ 1) & mask }
        return bucket
    }

    /// Empties `bucket` and shifts back the words after it that may move closer to their home,
    /// so that every probe sequence stays unbroken without tombstones.
    @inlinable
    mutating func removeFromIndex(bucket: Int) {
        let mask = buckets.count &- 1
        var hole = bucket
        var next = (bucket &+ 1) & mask
        while buckets[next] != 0 {
            let home = slots[Self.slot(of: buckets[next])].hash & mask
            // The word at `next` may fill the hole when its home is not cyclically within
            // (hole, next].
            if (next &- home) & mask >= (next &- hole) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next &+ 1) & mask
        }
        buckets[hole] = 0
    }

    // MARK: Links

    /// Makes the entry at `index` the most recently used: the hit path, so its relinking goes
    /// through one buffer pointer (one uniqueness check, no per-write bounds checks) rather than
    /// six checked array writes.
    @inlinable @inline(__always)
    mutating func moveToFront(_ index: Int) {
        guard index != head else { return }
        let oldHead = head
        var newTail = tail
        slots.withUnsafeMutableBufferPointer { slots in
            let previous = slots[index].previous
            let next = slots[index].next
            if previous >= 0 { slots[previous].next = next }
            if next >= 0 { slots[next].previous = previous } else { newTail = previous }
            slots[index].previous = -1
            slots[index].next = oldHead
            if oldHead >= 0 { slots[oldHead].previous = index }
        }
        tail = newTail
        head = index
    }

    @inlinable @inline(__always)
    mutating func unlink(_ index: Int) {
        let previous = slots[index].previous
        let next = slots[index].next
        if previous >= 0 { slots[previous].next = next } else { head = next }
        if next >= 0 { slots[next].previous = previous } else { tail = previous }
    }

    @inlinable
    mutating func remove(at index: Int) -> Slot {
        unlink(index)
        removeFromIndex(bucket: bucket(ofSlot: index, hash: slots[index].hash))
        let removed = slots[index]
        totalCost -= removed.cost
        let last = slots.count - 1
        if index != last {
            // Move the last slot into the hole and repoint everything that referred to it.
            let moved = slots[last]
            buckets[bucket(ofSlot: last, hash: moved.hash)] = Self.word(hash: moved.hash, slot: index)
            slots[index] = moved
            if moved.previous >= 0 { slots[moved.previous].next = index } else { head = index }
            if moved.next >= 0 { slots[moved.next].previous = index } else { tail = index }
        }
        slots.removeLast()
        return removed
    }
}

// MARK: - Invariants (tests)

extension LRUTable {
    /// Keys from most to least recently used.
    ///
    /// - Complexity: O(n).
    var keysByRecency: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(slots.count)
        var index = head
        while index >= 0, keys.count <= slots.count {
            keys.append(slots[index].key)
            index = slots[index].next
        }
        return keys
    }

    /// Returns a description of the first broken invariant, or `nil` when the table is sound:
    /// the list visits every slot exactly once in both directions, the index holds one word
    /// per slot and finds each key at its slot, the index is at most half full, each slot's
    /// stored hash is what `hashing` gives for its key, and `totalCost` is the sum of the
    /// slots' costs.
    ///
    /// - Complexity: O(n).
    func invariantViolation(hashing: (Key) -> Int) -> String? {
        let words = buckets.filter { $0 != 0 }
        if words.count != slots.count { return "index has \(words.count) words, slots \(slots.count)" }
        if !slots.isEmpty, slots.count * 2 > buckets.count {
            return "index over half full: \(slots.count) of \(buckets.count)"
        }
        if !buckets.isEmpty, buckets.count & (buckets.count - 1) != 0 {
            return "index size \(buckets.count) not a power of two"
        }
        var named = Set<Int>()
        for word in words { named.insert(Self.slot(of: word)) }
        if named != Set(slots.indices) { return "index words do not name every slot once" }
        for (offset, slot) in slots.enumerated() {
            if slot.hash != hashing(slot.key) { return "slot \(offset) has a stale hash" }
            if slotIndex(of: slot.key, hash: slot.hash) != offset { return "slot \(offset) not found by its key" }
        }
        var forward = 0
        var index = head
        var previous = -1
        while index >= 0 {
            guard index < slots.count, forward < slots.count else { return "forward walk escapes" }
            if slots[index].previous != previous { return "slot \(index) has a bad back link" }
            previous = index
            index = slots[index].next
            forward += 1
        }
        if forward != slots.count { return "forward walk visits \(forward) of \(slots.count)" }
        if tail != previous { return "tail is \(tail), walk ends at \(previous)" }
        let sum = slots.reduce(0) { $0 + $1.cost }
        if sum != totalCost { return "totalCost \(totalCost), sum of costs \(sum)" }
        return nil
    }
}
