import CArchivistSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one manager counts for one cache type: the type's row in the root's shared file,
/// which every process adds to, and a few words of the manager's own.
///
/// Not generic over the manager's cache type, so the counting code is compiled once.
@usableFromInline
struct TypeTally: @unchecked Sendable {
    // Safety: `row` is touched through atomics only; `local`'s words as ``local`` says.

    /// The row every process adds to (or, when the shared file has no room, one in the
    /// manager's memory, see ``StatisticsBook``).
    let row: SharedStatistics.Row
    /// The manager's words for the type, which live as long as its ``StatisticsBook``:
    /// - 0: memory hits so far, counted under the memory tier's lock (a hit adds one to a word
    ///   the lock it already holds guards: no atomic instruction, which would be a sizable
    ///   share of a hit (the `cache-memory` suite guards it);
    /// - 1: how many of those were added to the row (under the tier's lock too);
    /// - 2: the address of `row`'s words, for a memory item that counts its own eviction;
    /// - 3: reads so far, with relaxed atomics: two threads may count one read, which only
    ///   shifts which reads are timed.
    let local: UnsafeMutablePointer<UInt64>

    /// Adds `amount` to `counter` of the row.
    ///
    /// - Complexity: One atomic add.
    @inline(__always)
    func add(_ amount: UInt64 = 1, _ counter: CacheStatistics.Counter) {
        row.add(amount, to: counter.rawValue)
    }

    /// Whether to time the read about to start: one in eight of each type, the first one
    /// included (a clock read costs more than the counting; the `cache-manager` suite's 1 KB
    /// get guards it).
    ///
    /// - Complexity: A relaxed load and store, no atomic instruction.
    @inline(__always)
    func timesThisRead() -> Bool {
        let reads = archivist_atomic_load_relaxed_u64(local + 3)
        archivist_atomic_store_relaxed_u64(local + 3, reads &+ 1)
        return reads % 8 == 0
    }

    /// Counts `error` when it is a ``CacheError``.
    func count(_ error: any Error) {
        if let error = error as? CacheError { add(1, CacheStatistics.Counter(errorCode: error.code)) }
    }
}

/// A manager's statistics: the rows of its types in the shared files of its stores, found once
/// per type, and the memory hits it has counted but not yet added to them.
///
/// Everything but memory hits goes straight into the shared rows with one atomic add, so every
/// process sees it at once. A memory hit is counted in the manager's own word under the memory
/// tier's lock the hit holds anyway; those counts are added to the shared rows when
/// ``publishMemoryHits()`` runs: whenever statistics are read or reset through the manager, at
/// ``CacheManager/flush()``, when the manager goes away, and when the process exits normally.
/// A process killed with `SIGKILL` loses the memory hits it counted since the last of those.
final class StatisticsBook: @unchecked Sendable {
    // Safety: `state` is a `Locked`; the tallies' local words are guarded as `TypeTally.local`
    // says; the tables are immutable references.

    private struct Key: Hashable {
        var name: BytewiseString
        var location: CacheLocation
    }

    private struct State {
        /// The tally found last, checked before the dictionary (reads and writes come in runs).
        var last: (name: String, location: CacheLocation, tally: TypeTally)?
        var tallies: [Key: TypeTally] = [:]
        /// Memory this book allocated: tallies' local words, and rows of names the shared
        /// file had no room for.
        var allocations: [UnsafeMutablePointer<UInt64>] = []
        /// The rows kept in this book's memory, by name.
        var privateRows: [(name: String, location: CacheLocation, row: SharedStatistics.Row)] = []
    }

    private let state = Locked(State())
    private let caches: SharedStatistics?
    private let documents: SharedStatistics?
    /// The manager's memory tier, whose lock guards the memory-hit words.
    let memory: MemoryTier?

    init(caches: DiskStore, documents: DiskStore, memory: MemoryTier?) {
        self.caches = caches.sharedStatistics
        self.documents = documents === caches ? nil : documents.sharedStatistics
        self.memory = memory
        Self.atExit.add(self)
        _ = Self.publishAtExit
    }

    deinit {
        Self.atExit.remove(ObjectIdentifier(self))
        // No hit can be counted any more (the manager is gone), so the words need no lock.
        let (tallies, allocations) = state.withLock { (Array($0.tallies.values), $0.allocations) }
        for tally in tallies where tally.local[0] > tally.local[1] {
            tally.add(tally.local[0] - tally.local[1], .memoryHits)
        }
        for words in allocations { words.deallocate() }
    }

    /// The table of `location`'s store, if its shared file has one.
    private func table(for location: CacheLocation) -> SharedStatistics? {
        location.isDocuments ? documents ?? caches : caches
    }

    /// The tally of the type named `name` at `location`.
    ///
    /// - Complexity: O(length of the name) while the type is the one asked for last; the first
    ///   time for a type, O(rows of the shared file).
    func tally(name: String, location: CacheLocation) -> TypeTally {
        lastTally(name: name, location: location) ?? slowTally(name: name, location: location)
    }

    /// The last tally found, if it is `name`'s at `location`.
    private func lastTally(name: String, location: CacheLocation) -> TypeTally? {
        state.withLock { state in
            guard let last = state.last, last.location == location, Bytewise.equal(last.name, name) else { return nil }
            return last.tally
        }
    }

    private func slowTally(name: String, location: CacheLocation) -> TypeTally {
        let key = Key(name: BytewiseString(name), location: location)
        if let tally = state.withLock({ state -> TypeTally? in
            guard let tally = state.tallies[key] else { return nil }
            state.last = (name, location, tally)
            return tally
        }) {
            return tally
        }
        // Outside the book's lock: claiming a row reads the whole table.
        let shared = table(for: location)?.row(named: name, scope: location.hashByte)
        return state.withLock { state in
            if let tally = state.tallies[key] { return tally }  // another thread was first
            let row: SharedStatistics.Row
            if let shared {
                row = shared
            } else {
                let words = UnsafeMutablePointer<UInt64>.allocate(capacity: SharedStatistics.rowWords)
                words.initialize(repeating: 0, count: SharedStatistics.rowWords)
                state.allocations.append(words)
                row = SharedStatistics.Row(words: words)
                state.privateRows.append((name, location, row))
            }
            let local = UnsafeMutablePointer<UInt64>.allocate(capacity: 4)
            local.initialize(repeating: 0, count: 4)
            local[2] = UInt64(UInt(bitPattern: row.words))
            state.allocations.append(local)
            let tally = TypeTally(row: row, local: local)
            state.tallies[key] = tally
            state.last = (name, location, tally)
            return tally
        }
    }

    /// Adds the memory hits counted since the last time to the shared rows.
    ///
    /// - Complexity: O(types), under the memory tier's lock.
    func publishMemoryHits() {
        guard let memory else { return }
        let tallies = state.withLock { Array($0.tallies.values) }
        // The adds under the lock too, so a withdrawn hit (``withdrawMemoryHit(_:)``) never
        // lands in a row before the hit it withdraws.
        memory.cache.lock.withLock {
            for tally in tallies where tally.local[0] > tally.local[1] {
                tally.add(tally.local[0] - tally.local[1], .memoryHits)
                tally.local[1] = tally.local[0]
            }
        }
    }

    /// Takes back one memory hit counted in `local` (a ``TypeTally/local``) that turned out not
    /// to be one (the value was of another type, or too old for the read), from the shared
    /// row too if it had been added.
    ///
    /// - Complexity: O(1), under the memory tier's lock.
    func withdrawMemoryHit(local: UnsafeMutablePointer<UInt64>) {
        guard let memory else { return }
        memory.cache.lock.withLock {
            local[0] &-= 1
            guard local[1] > local[0] else { return }
            local[1] &-= 1
            // Adding 2^64 - 1 subtracts one.
            if let words = UnsafeMutablePointer<UInt64>(bitPattern: UInt(local[2])) {
                SharedStatistics.Row(words: words).add(.max, to: CacheStatistics.Counter.memoryHits.rawValue)
            }
        }
    }

    /// The rows of every type in this manager's stores, from every process (the memory hits of
    /// every manager of this process added first), with the rows kept in its memory.
    ///
    /// - Complexity: O(rows of the shared files), plus O(types) per manager in the process.
    func rows() -> [SharedStatistics.RowContents] {
        Self.publishEveryBook()
        var rows = (caches?.rows() ?? []) + (documents?.rows() ?? [])
        for (name, location, row) in state.withLock({ $0.privateRows }) {
            rows.append(
                SharedStatistics.RowContents(
                    name: name,
                    isNameComplete: true,
                    nameHash: SharedStatistics.hash(of: name),
                    scope: location.hashByte,
                    counters: (0..<SharedStatistics.counterCount).map { row.value(of: $0) }
                )
            )
        }
        return rows
    }

    /// Sets every type's counters in this manager's stores to zero, for every process. The
    /// memory hits every manager of this process counted before are added first, so they go
    /// too; another process's not yet added arrive after the reset.
    ///
    /// - Complexity: O(rows of the shared files), plus O(types) per manager in the process.
    func reset() {
        Self.publishEveryBook()
        caches?.reset()
        documents?.reset()
        for (_, _, row) in state.withLock({ $0.privateRows }) {
            for counter in 0..<SharedStatistics.counterCount {
                let value = row.value(of: counter)
                if value != 0 { row.add(0 &- value, to: counter) }
            }
        }
    }

    // MARK: Exit

    /// Every live book, so that the `atexit` handler publishes their memory hits (a global
    /// manager is never deallocated).
    private static let atExit = ExitRegistry<StatisticsBook>()

    private static let publishAtExit: Void = {
        atexit { StatisticsBook.publishEveryBook() }
    }()

    /// Publishes the memory hits of every manager of this process.
    static func publishEveryBook() {
        for book in atExit.live { book.publishMemoryHits() }
    }
}

/// The monotonic clock in nanoseconds, for timing reads (as `FileLock` times its holds).
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}
