/// The unsynchronized core of ``MemoryCache``: a dictionary from key to slot index plus an
/// intrusive doubly linked list threaded through a dense array of slots.
///
/// Slots are value types in one array, so an entry costs no class allocation of its own. A
/// removal moves the last slot into the hole ("swap-remove") and patches its neighbours and
/// its dictionary entry, which keeps the array dense without a free list or optionals.
/// The list runs from `head` (most recently used) to `tail` (least recently used); `-1` is
/// the null link.
///
/// Every operation is O(1) expected (one or two hash lookups and a few array writes), except
/// the ones that say otherwise.
@usableFromInline
struct LRUTable<Key: Hashable, Value> {
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key
        @usableFromInline var value: Value
        @usableFromInline var cost: Int
        @usableFromInline var previous: Int
        @usableFromInline var next: Int

        @inlinable
        init(key: Key, value: Value, cost: Int, previous: Int, next: Int) {
            self.key = key
            self.value = value
            self.cost = cost
            self.previous = previous
            self.next = next
        }
    }

    @usableFromInline var slots: [Slot] = []
    @usableFromInline var indexByKey: [Key: Int] = [:]
    @usableFromInline var head = -1
    @usableFromInline var tail = -1
    @usableFromInline var totalCost = 0

    @inlinable init() {}

    @inlinable var count: Int { slots.count }

    // MARK: Lookup

    /// Returns the value for `key` and marks it most recently used.
    @inlinable @inline(__always)
    mutating func value(forKey key: Key) -> Value? {
        guard let index = indexByKey[key] else { return nil }
        moveToFront(index)
        return slots[index].value
    }

    // MARK: Mutation

    /// Inserts or replaces the value for `key` as the most recently used entry.
    ///
    /// - Returns: the value it replaced, if any.
    @inlinable
    mutating func insert(_ value: Value, forKey key: Key, cost: Int) -> Value? {
        if let index = indexByKey[key] {
            let old = slots[index].value
            slots[index].value = value
            totalCost += cost - slots[index].cost
            slots[index].cost = cost
            moveToFront(index)
            return old
        }
        let index = slots.count
        slots.append(Slot(key: key, value: value, cost: cost, previous: -1, next: head))
        if head >= 0 { slots[head].previous = index } else { tail = index }
        head = index
        indexByKey[key] = index
        totalCost += cost
        return nil
    }

    /// Removes the entry for `key`.
    @inlinable
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let index = indexByKey[key] else { return nil }
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
        let removed = slots[index]
        indexByKey[removed.key] = nil
        totalCost -= removed.cost
        let last = slots.count - 1
        if index != last {
            // Move the last slot into the hole and repoint everything that referred to it.
            let moved = slots[last]
            slots[index] = moved
            if moved.previous >= 0 { slots[moved.previous].next = index } else { head = index }
            if moved.next >= 0 { slots[moved.next].previous = index } else { tail = index }
            indexByKey[moved.key] = index
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
    /// the list visits every slot exactly once in both directions, the dictionary maps each key
    /// to its slot, and `totalCost` is the sum of the slots' costs.
    ///
    /// - Complexity: O(n).
    func invariantViolation() -> String? {
        if indexByKey.count != slots.count {
            return "dictionary has \(indexByKey.count) keys, slots \(slots.count)"
        }
        for (offset, slot) in slots.enumerated() where indexByKey[slot.key] != offset {
            return "slot \(offset) not indexed by its key"
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
