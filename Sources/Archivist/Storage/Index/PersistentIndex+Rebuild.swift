import Foundation

/// A rescan of the root (``PersistentIndex/scan()``) under way, and the open that runs it in the
/// background.
///
/// A rescan is O(entries): at a million entries, seconds of `lstat`s. It is due only after a
/// process died between a file change and its journal record without naming the entry, when
/// the journal or the snapshot is damaged or missing, or when the shared counters were
/// reinitialised. An open that finds it due on a large root can leave it to a background queue
/// (``DiskStore/open(at:fileSystem:backgroundRescanAbove:)``); reads need no index and are
/// served meanwhile, and every call that needs the index catches up first, which waits for
/// the rescan (one at a time in a process, ``PersistentIndex/repairGate``). A small root's rescan
/// stays in the open: it is quick, and once it is in place every process's memory tier drops
/// what it held (the rescan is a change of everything), which a rescan finishing later would
/// do to values stored after the open.
extension PersistentIndex {
    /// How far a rescan has walked.
    package struct IndexRebuild: Sendable, Hashable {
        /// The items of the root examined so far: entry files, folders and anything else.
        package var itemsExamined: Int
        /// When the walk started.
        package let startDate: Date
    }

    /// The rescan under way in this process, `nil` when none is. Its count is brought up to
    /// date every ``rebuildProgressStride`` items.
    package var rebuild: IndexRebuild? { rebuildProgress.withLock { $0 } }

    /// How many items a scan examines between two updates of ``rebuild``.
    static let rebuildProgressStride = 1_024

    /// Notes that a scan started (`true`) or ended (`false`).
    func noteScan(running: Bool) {
        rebuildProgress.withLock { $0 = running ? IndexRebuild(itemsExamined: 0, startDate: Date()) : nil }
    }

    /// Notes that a scan examined `count` items so far.
    func noteScanProgress(_ count: Int) {
        rebuildProgress.withLock { $0?.itemsExamined = count }
    }

    /// How many entries the last snapshot must count for an open's rescan to run in the
    /// background (`CacheManager` asks for it): about a quarter of a second of `lstat`s.
    package static let backgroundRescanEntries = 50_000

    /// Whether a rescan of this root is long enough to leave to the background: the newest
    /// snapshot on disk, of whatever epoch, counted at least `threshold` entries (its
    /// directory read, O(folders + pages)). `false` without a threshold or a readable snapshot.
    func rescanIsLong(above threshold: Int?) -> Bool {
        guard let threshold, let (saved, _, _) = readSnapshot(of: nil) else { return false }
        return saved.usage(of: FolderPath([])).entryCount >= threshold
    }

    /// Runs the repair an open found due on a background queue: the catch-up that repairs
    /// when the intent word says so, or the repair of a snapshot the open could not use. A
    /// failure leaves the repair due; the next call that needs the index tries again and
    /// throws it.
    func repairInBackground(unusableSnapshotOf epoch: UInt64?, keepingAlive owner: (any Sendable & AnyObject)?) {
        // The store (`owner`) stays alive until the repair ends: a manager released meanwhile
        // leaves the registry's entry to it, and the next open is handed the repaired store.
        DispatchQueue.global(qos: .utility).async { [self] in
            withExtendedLifetime(owner) {
                if let epoch { try? repair(unusableSnapshotOf: epoch) }
                try? withCaughtUpIndex(exclusive: false) { _ in }
            }
        }
    }
}
