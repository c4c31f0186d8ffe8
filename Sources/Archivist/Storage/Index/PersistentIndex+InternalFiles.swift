import Foundation

/// What the files of a root's `.archivist` folder record, read from their bytes alone: for
/// `archivist inspect`, which looks at a root other processes may be using. Nothing here
/// locks, maps, opens or changes a file; the caller reads the bytes.
extension PersistentIndex {
    /// The files of a root's `.archivist` folder that ``internalFileSummary(of:bytes:)``
    /// recognises, by name.
    package enum InternalFile: String, Sendable, CaseIterable {
        /// `index`: the size index's saved snapshot (``SnapshotFile``).
        case indexSnapshot = "index"
        /// `journal`: every change committed since the snapshot (`PersistentIndex+Journal.swift`).
        case journal
        /// `shared`: the counters, process slots and statistics every process maps
        /// (``SharedCounters``, ``SharedStatistics``).
        case sharedCounters = "shared"
        /// `dirty`: the marker whose `D` makes the next open rescan.
        case marker = "dirty"
        /// `lock`: the file the root's lock is taken on (empty).
        case lock
        /// `trash.lock`: the file every walk of the trash locks (empty).
        case trashLock = "trash.lock"
    }

    /// What a size index snapshot records.
    package struct IndexSnapshotSummary: Sendable, Equatable {
        /// The snapshot format's version.
        package var version: Int
        /// The journal epoch the snapshot starts.
        package var epoch: UInt64
        /// Folders holding entries, entries, and their logical and allocated bytes.
        package var folders: Int
        package var entries: Int
        package var logicalBytes: Int64
        package var allocatedBytes: Int64
        /// Pages of records.
        package var pages: Int
    }

    /// What a journal records.
    package struct JournalSummary: Sendable, Equatable {
        /// Whole, checked records, by operation.
        package var sets = 0
        package var removals = 0
        package var clears = 0
        /// The bytes the whole records take.
        package var wholeBytes = 0
        /// Whether bytes that are not a whole, checked record follow them (a writer died
        /// while appending, or the file is damaged): the next process to write rescans.
        package var isDamaged = false

        /// Every record.
        package var records: Int { sets + removals + clears }
    }

    /// What the shared counters file records.
    package struct SharedCountersSummary: Sendable, Equatable {
        /// Whether the file is of this layout (a fresh, zeroed one counts); another layout's
        /// is reinitialised by the next open, and nothing else below is filled in.
        package var isThisLayout: Bool
        /// Committed changes of every process so far.
        package var change: UInt64 = 0
        /// The journal epoch the processes are at (a snapshot of another epoch is stale).
        package var epoch: UInt64 = 0
        /// Whether a writer stopped between a change and its journal record: the next
        /// process to take the lock repairs the index.
        package var intent = false
        /// Processes holding a slot: those with the root open (or killed with it open, until
        /// the next open frees their slots).
        package var processes = 0
        /// Types (name and location) with statistics; `nil` when the file has no statistics
        /// region.
        package var statisticsTypes: Int?
    }

    /// The summary of one of the root's internal files.
    package enum InternalFileSummary: Sendable, Equatable {
        /// A readable snapshot; `nil` when it is damaged or of another format version (the
        /// next open rescans).
        case indexSnapshot(IndexSnapshotSummary?)
        case journal(JournalSummary)
        /// `nil` when the file is too short to hold the counters.
        case sharedCounters(SharedCountersSummary?)
        /// Whether the marker says a save was due when its writer stopped (`D`): the next open
        /// rescans. `nil` for a marker never written.
        case marker(dirty: Bool?)
        /// A lock file and its length (they hold nothing: a lock is taken on them).
        case lock(byteCount: Int)
    }

    /// What `bytes`, the contents of the internal file `file`, record.
    ///
    /// ```swift
    /// let bytes = try AtomicFile.read(path: root.path + "/.archivist/index") ?? []
    /// if case .indexSnapshot(let summary?) = PersistentIndex.internalFileSummary(of: .indexSnapshot, bytes: bytes) {
    ///     print(summary.entries)
    /// }
    /// ```
    ///
    /// - Complexity: O(n) in the size of `bytes` (a snapshot: O(folders + pages)).
    package static func internalFileSummary(of file: InternalFile, bytes: [UInt8]) -> InternalFileSummary {
        switch file {
        case .indexSnapshot:
            guard let (index, epoch) = SizeIndex.deserialize(bytes) else { return .indexSnapshot(nil) }
            let usage = index.usage(of: FolderPath([]))
            return .indexSnapshot(
                IndexSnapshotSummary(
                    version: Int(SnapshotFile.version),
                    epoch: epoch,
                    folders: index.snapshot().folders.count,
                    entries: usage.entryCount,
                    logicalBytes: usage.logicalBytes,
                    allocatedBytes: usage.allocatedBytes,
                    pages: index.file?.pageCount ?? 0
                )
            )
        case .journal:
            var summary = JournalSummary()
            var previous: PreviousFolder?
            (summary.wholeBytes, summary.isDamaged) = forEachRecord(in: bytes[...], previous: &previous) { change, _ in
                switch change {
                case .set: summary.sets += 1
                case .remove: summary.removals += 1
                case .clear: summary.clears += 1
                }
            }
            return .journal(summary)
        case .sharedCounters:
            return .sharedCounters(sharedCountersSummary(bytes))
        case .marker:
            return .marker(dirty: bytes.first.map { $0 == UInt8(ascii: "D") })
        case .lock, .trashLock:
            return .lock(byteCount: bytes.count)
        }
    }

    private static func sharedCountersSummary(_ bytes: [UInt8]) -> SharedCountersSummary? {
        guard bytes.count >= 32 else { return nil }
        func word(_ index: Int) -> UInt64 {
            guard 8 * index + 8 <= bytes.count else { return 0 }
            return (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[8 * index + $1]) << (8 * UInt64($1)) }
        }
        guard word(0) == SharedCounters.magic || word(0) == 0 else { return SharedCountersSummary(isThisLayout: false) }
        var summary = SharedCountersSummary(isThisLayout: true, change: word(1), epoch: word(2), intent: word(3) != 0)
        summary.processes =
            (0..<SharedCounters.slotCount).filter { word(SharedCounters.firstSlot + 3 * $0 + 2) != 0 }.count
        if bytes.count >= SharedCounters.length {
            let table = SharedCounters.coreLength / 8
            if word(table) == 0 || word(table) == SharedStatistics.magic {
                // Two processes claiming one name at once may claim a row each: counted once.
                var types = Set<[UInt64]>()
                for row in 0..<SharedStatistics.rowCount {
                    let start = table + SharedStatistics.headerWords + row * SharedStatistics.rowWords
                    if word(start) == 2 { types.insert([word(start + 1), word(start + 2)]) }
                }
                summary.statisticsTypes = types.count
            }
        }
        return summary
    }
}
