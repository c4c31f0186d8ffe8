import Foundation

/// Per-type statistics: hits, misses, stores, removals, evictions, bytes, errors and read
/// times, counted by every process that opens the root (see ``CacheStatistics``).
extension CacheManager {
    /// What the caches of this manager's root have done, per cache type and in total, counted
    /// by every process and manager that opened the root since its statistics were last reset —
    /// the app and its extensions together, as the size index is.
    ///
    /// Every count but memory hits reaches the root's shared file as it happens. Memory hits
    /// are counted in each manager and added to the file when statistics are read or reset in
    /// its process, at its `flush()`, when it goes away and when its process exits normally;
    /// so this process's are always in, another live process's since its last such moment are
    /// not yet, and a process killed with `SIGKILL` loses those it had not added. Types of
    /// other managers and other processes appear by name too.
    ///
    /// ```swift
    /// let stats = cache.statistics
    /// print(stats.total.hitRate ?? 0, stats["productList"].diskHits)
    /// ```
    ///
    /// - Complexity: O(types recorded in the root): atomic loads of the shared file, no
    ///   other file I/O.
    public var statistics: CacheStatistics {
        var fullNames: [UInt64: String] = [:]
        for (_, entry) in folders.withLock({ $0 }) { fullNames[SharedStatistics.hash(of: entry.name)] = entry.name }
        return CacheStatistics(rows: statisticsBook.rows(), fullNames: fullNames)
    }

    /// The statistics of one cache type (every process's, as ``statistics``).
    ///
    /// ```swift
    /// let hots = cache.statistics(of: .hots)
    /// print(hots.memoryHits, hots.misses, hots.evictions.expiry)
    /// ```
    ///
    /// - Complexity: O(types recorded in the root).
    public func statistics(of type: Kind) -> CacheStatistics.Counts {
        let name = type.name
        let scope = type.location.hashByte
        let hash = SharedStatistics.hash(of: name)
        return statisticsBook.rows()
            .filter {
                $0.scope == scope && $0.nameHash == hash && ($0.isNameComplete ? Bytewise.equal($0.name, name) : true)
            }
            .reduce(CacheStatistics.Counts()) { $0 + CacheStatistics.Counts(counters: $1.counters) }
    }

    /// Sets every type's statistics in this manager's root to zero, for every process.
    ///
    /// Counts another process adds meanwhile land before or after the reset, whole. Memory hits
    /// of this process's managers are added before the reset, so they go with it; another
    /// process's memory hits not yet added (see ``statistics``) arrive after it.
    ///
    /// ```swift
    /// cache.resetStatistics()
    /// runScenario()
    /// print(cache.statistics.total)
    /// ```
    ///
    /// - Complexity: O(types recorded in the root): atomic stores into the shared file.
    public func resetStatistics() {
        statisticsBook.reset()
    }

    // MARK: Counting

    /// The tally of `type`.
    func tally(_ type: Kind) -> TypeTally {
        statisticsBook.tally(name: type.name, location: type.location)
    }

    /// Runs `body`, counting a ``CacheError`` it throws against `type`.
    func counting<R>(_ type: Kind, _ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch {
            tally(type).count(error)
            throw error
        }
    }

    /// A memory-tier lookup that found an item but did not serve it: the value is of another
    /// type (the disk read that follows counts itself), or too old for the read — then an
    /// expired read, and when the item's expiry has passed it leaves the tier (an eviction by
    /// expiry: no read can take it again, and the offline fallback finds it on disk).
    @usableFromInline @inline(never)
    func memoryItemNotServed(_ item: MemoryItem, type: Kind, parameter: String?, expired: Bool) {
        if let local = item.hitCount { statisticsBook.withdrawMemoryHit(local: local) }
        guard expired else { return }
        let tally = tally(type)
        tally.add(1, .expiredReads)
        if let expiry = item.expiry, expiry <= now(), let memory {
            memory.remove(MemoryKey(name: type.name, location: type.location, parameter: parameter))
            tally.add(1, .evictionsByExpiry)
        }
    }
}

extension MemoryItem {
    /// Counts this item's eviction from the memory tier by its count or cost limit against its
    /// type (the row whose address ``hitCount``'s block keeps).
    func countEviction() {
        guard let block = hitCount, let words = UnsafeMutablePointer<UInt64>(bitPattern: UInt(block[2])) else { return }
        SharedStatistics.Row(words: words).add(1, to: CacheStatistics.Counter.evictionsByCount.rawValue)
    }
}

extension MemoryCache where Value == MemoryItem {
    /// ``value(hash:where:)`` that counts a hit on the item's type (``MemoryItem/hitCount``)
    /// while it holds the lock: a plain add to a word that lock guards, no atomic instruction.
    ///
    /// - Complexity: O(1) expected.
    @inlinable @inline(__always)
    func valueCountingHit(hash: Int, where matches: (UnsafePointer<Key>) -> Bool) -> Value? {
        lock.lock()
        let value = table.value(hash: hash, where: matches)
        if let words = value?.hitCount { words.pointee &+= 1 }
        lock.unlock()
        return value
    }
}
