import CArchivistSupport
import Foundation

/// One memory tier's view of one store's shared change counter: the value it has caught up
/// with, and its place in the store's list of recent changes.
///
/// A memory hit compares the two counters (one atomic load of the shared word, one of the
/// local one); only when they differ does the manager read the changes and drop the values
/// they touched.
@usableFromInline
final class MemoryWatch: @unchecked Sendable {
    // Safety: `seen` is touched only through the atomics of CArchivistSupport; `sequence` only
    // under `lock`, both private.
    let store: DiskStore
    /// The store's change counter, in its shared memory: bumped by every process's writes.
    @usableFromInline let counter: UnsafePointer<UInt64>
    /// The counter's value this memory tier last caught up with (local to the process).
    @usableFromInline let seen: UnsafeMutablePointer<UInt64>
    private let lock = Lock()
    /// The store's change number to read from next (under `lock`).
    private var sequence: UInt64

    init(store: DiskStore) {
        self.store = store
        counter = store.changeCounter
        seen = .allocate(capacity: 1)
        sequence = store.changeSequence
        seen.initialize(to: archivist_atomic_load_u64(counter))
    }

    deinit { seen.deallocate() }

    /// The shared change counter now.
    var current: UInt64 { archivist_atomic_load_u64(counter) }

    /// Whether nothing was committed to the store since the memory tier last caught up: two
    /// atomic loads, inlined into the hit path (the C function is `static inline`).
    @inlinable
    var isCurrent: Bool { archivist_atomic_equal_u64(counter, seen) }

    /// Catches the memory tier up with the store's changes since the last catch-up: hands
    /// `drop` those `origin` did not make — or, when the store's list of recent changes no
    /// longer reaches back that far, says everything may have changed — then records the
    /// counter value `observed` (read before the store caught up) as seen. Under the watch's
    /// lock, so that two catch-ups drop in the order of the changes.
    ///
    /// - Complexity: O(changes since the last catch-up), plus what `drop` does.
    func catchUp(
        observed: UInt64,
        notMadeBy origin: UInt,
        drop: (_ changes: [DiskStore.StoreChange], _ everything: Bool) -> Void
    ) {
        lock.withLock {
            let (changes, next, complete) = store.changes(since: sequence)
            let foreign = changes.filter { $0.origin != origin }
            if !complete || !foreign.isEmpty { drop(foreign, !complete) }
            sequence = next
            archivist_atomic_store_u64(seen, observed)
        }
    }
}

extension CacheManager {
    /// The token this manager's writes carry, so its own memory tier skips them: the
    /// manager's address, unique among live objects and never 0 (no origin). Not its
    /// `hashValue`, which runs SipHash on every write (the `cache-manager` suite's 1 KB set
    /// guards it).
    var originToken: UInt { UInt(bitPattern: ObjectIdentifier(self)) }

    /// The watch of `location`'s store.
    @inlinable
    func watch(for location: CacheLocation) -> MemoryWatch {
        location.isDocuments ? documentsWatch : cachesWatch
    }

    /// Drops from the memory tier every value that a change committed since the last catch-up
    /// (by another process, or another manager of this process) may have replaced or removed.
    ///
    /// - Complexity: O(changes) plus, when some came from elsewhere, one pass over the memory
    ///   tier, matching each value by the disk key its memory key carries (no hashing); when
    ///   the store had to read another process's journal records, that read too.
    @usableFromInline @inline(never)
    func revalidateMemory(_ location: CacheLocation) {
        let watch = watch(for: location)
        let observed = watch.current
        watch.store.refresh()
        watch.catchUp(observed: observed, notMadeBy: originToken) { changes, everything in
            guard let memory else { return }
            dropMemory(touchedBy: changes, everything: everything, in: watch.store, memory: memory)
        }
    }

    /// Removes the memory values of `store` that `changes` touched (all of them when
    /// `everything`).
    private func dropMemory(
        touchedBy changes: [DiskStore.StoreChange],
        everything: Bool,
        in store: DiskStore,
        memory: MemoryTier
    ) {
        let cleared = changes.filter { $0.name == nil }.map(\.folder)
        var entries: [FolderPath: Set<EntryName>] = [:]
        for change in changes { if let name = change.name { entries[change.folder, default: []].insert(name) } }
        memory.removeAll { key in
            guard disk(for: key.location) === store else { return false }
            guard !everything, let entry = key.disk else { return true }
            if cleared.contains(where: { $0.contains(entry.folder) }) { return true }
            return entries[entry.folder]?.contains(entry.name) ?? false
        }
    }
}
