import Foundation

/// A crash-safe collection of identifiable records: insert, upsert, update one, delete,
/// fetch by id, query, sort, latest N, and all-or-nothing batches — the job of seed 000's task
/// and diligence tables, seed 002's letters and seed 003's SQLite cache.
///
/// Records live in memory; the disk holds a snapshot plus an append-only change log, so a
/// single-record update writes one small log entry instead of rewriting a whole plist (seed
/// 001's complaint). When the log outgrows the snapshot it is folded into a new snapshot,
/// written atomically. After a crash the store reopens with the snapshot plus every complete
/// log entry — a prefix of the committed batches; a torn or corrupt tail is moved aside into a
/// `quarantine` file and reported by ``recoveredDamage``.
///
/// ```swift
/// struct Task: Codable, Archivable, Identifiable, Sendable { var id: String; var name: String }
///
/// let tasks = try RecordStore<Task>(directory: documents.appendingPathComponent("tasks"))
/// try tasks.upsert(Task(id: "t1", name: "Read"))
/// try tasks.update(id: "t1") { $0.name = "Read more" }
/// let latest = tasks.latest(10)
/// let reading = tasks.records(where: { $0.name.hasPrefix("Read") })
/// ```
///
/// Thread safety: `Sendable`; any thread or task may read and write. Writers are serialized
/// (the change log has one end) and re-entrant: an ``update(id:_:)`` closure may read or write
/// the store again. Readers never wait for a writer's disk I/O.
///
/// Several processes may open and write the same folder at once (an app and its extension in
/// an app-group container, several workers of a service): every write first catches up with
/// what the others appended, under the folder's cross-process lock (`records.lock`, held only
/// for the catch-up and the append, never across a caller's closure), so no committed change
/// is lost and compactions include everybody's. Reads answer from memory: they see other
/// processes' writes after this process's next write or ``refresh()``. Nothing that grows with
/// the records runs under that lock: a snapshot is decoded (on open, and after another
/// process compacted) and written (when compacting) without it, and installed or renamed
/// into place in a short hold — iOS terminates a suspended app that holds a file lock in a
/// shared container (`0xdead10cc`).
public final class RecordStore<Record: Archivable & Identifiable & Sendable>: Sendable
where Record.ID: Archivable & Sendable {
    /// How a store writes.
    public struct Configuration: Sendable {
        /// What each committed change waits for: `.none` (the OS writes it back later),
        /// `.file` (fsync the log; the default) or `.fileAndFolder`.
        public var durability: Durability
        /// The log is folded into a new snapshot once it is larger than this many bytes and
        /// larger than the snapshot. Default 1 MiB.
        public var compactionThreshold: Int
        /// Limits and allowed types for decoding the snapshot and log.
        public var archiveOptions: ArchiveOptions

        /// Creates a configuration.
        public init(
            durability: Durability = .file,
            compactionThreshold: Int = 1 << 20,
            archiveOptions: ArchiveOptions = ArchiveOptions()
        ) {
            self.durability = durability
            self.compactionThreshold = compactionThreshold
            self.archiveOptions = archiveOptions
        }
    }

    /// Damage found and set aside when the store was opened.
    public struct Damage: Sendable, Hashable {
        /// Bytes of the change log that were moved to the quarantine file.
        public var quarantinedBytes: Int
        /// The quarantine file.
        public var quarantineURL: URL
    }

    /// The folder holding `records.snapshot`, `records.log` and any quarantine files.
    public let directory: URL
    /// The configuration the store was opened with.
    public let configuration: Configuration
    /// The damage set aside on open (or later, when catching up with the log), if any.
    public var recoveredDamage: Damage? { damage.withLock { $0 } }

    let state: Locked<RecordTable<Record>>
    let damage = Locked<Damage?>(nil)
    /// Serializes writers; recursive so a writer's callback can write again on its thread.
    let writeLock = NSRecursiveLock()
    let log: ChangeLog
    /// Every process's writers take it around catching up, appending and compacting; it is
    /// never held across a caller's closure or while idle (`records.lock`).
    let crossProcessLock: FileLock
    /// Records an ``update(id:_:)`` is changing outside the cross-process lock, and whether
    /// another process has changed them since (see ``watching(_:_:)``).
    let watches = Locked<[(id: Record.ID, touched: Bool)]>([])
    let queue: DispatchQueue
    /// The iterators of ``changes(pollingInterval:)``.
    let observers = Locked(ChangeObservers<Change>())
    /// Raised by every commit, for change streams in other processes (``ChangeSignal``).
    let changeSignal: ChangeSignal
    /// Whether this process committed a change whose signal is still to be posted, once the
    /// cross-process lock is released (see ``writing(_:)``).
    let signalDue = Locked(false)
    /// The snapshot decoded without the cross-process lock for the catch-up under way
    /// (``withExclusiveCatchingUp(_:)``).
    let pendingSnapshot = Locked<DecodedSnapshot?>(nil)
    /// The records a reload replaced, kept until the cross-process lock is released
    /// (``reloadFromDisk()``).
    let retiredTable = Locked<RecordTable<Record>?>(nil)
    /// Snapshots decoded so far, with and without the lock (``snapshotDecodeCounts``).
    let snapshotDecodes = Locked(SnapshotDecodes())
    /// The polls of ``changes(pollingInterval:)`` running now.
    let activePolls = Locked(0)

    /// Opens (or creates) the store in `directory`, replaying its change log.
    ///
    /// - Throws: ``StoreError`` with `corrupt` when the snapshot, or a change-log entry whose
    ///   bytes are intact, cannot be decoded with this configuration (a type its
    ///   `allowedTypes` refuses, a missing rename or a lower limit; the ``ArchiveError`` is the
    ///   `underlyingError`, and no file is changed); a damaged tail of the log is quarantined
    ///   instead. Else `permissionDenied`, `noSpace` or `ioFailed`.
    /// - Complexity: Blocking file I/O, O(snapshot + log).
    public convenience init(directory: URL, configuration: Configuration = Configuration()) throws {
        try self.init(directory: directory, configuration: configuration, fileSystem: .posix)
    }

    /// Opens the store over `fileSystem` (tests put a fault-injecting file system underneath).
    package init(directory: URL, configuration: Configuration, fileSystem: FileSystem) throws {
        self.directory = directory
        self.configuration = configuration
        queue = DispatchQueue(label: "Archivist.RecordStore")
        state = Locked(RecordTable())
        do {
            log = try ChangeLog(directory: directory, durability: configuration.durability, fileSystem: fileSystem)
            crossProcessLock = FileLock(path: log.directory + "/records.lock", fileSystem: fileSystem)
            changeSignal = ChangeSignal(folder: log.directory, fileName: "records.log")
            // The snapshot is decoded before the lock is taken; the hold replays the log.
            try withExclusiveCatchingUp { try reloadFromDisk() }
            log.closeReplacedLogs()
        } catch {
            throw StoreError(wrapping: error, fileURL: directory)
        }
    }

    /// Replaces the records in memory with the snapshot plus the change log, setting aside
    /// what cannot be trusted (see ``ChangeLog/load(snapshotGeneration:as:options:apply:)``).
    /// Call inside the write lock, or before the store is shared, and inside
    /// ``withExclusiveCatchingUp(_:)``, which decoded the snapshot before the lock was taken.
    func reloadFromDisk() throws {
        var table = try tableForReload()
        let bad = try log.load(
            snapshotGeneration: table.generation,
            as: RecordBatch<Record>.self,
            options: RecordBatch<Record>.decodingOptions(configuration.archiveOptions)
        ) {
            table.apply(upserts: $0.upserts, deletes: $0.deletes)
        }
        // The records replaced are freed once the cross-process lock is released, not in the
        // hold (``withExclusiveCatchingUp(_:)``): O(records).
        let replaced = state.withLock { current -> RecordTable<Record> in
            defer { current = table }
            return current
        }
        retiredTable.withLock { $0 = replaced }
        if let bad { damage.withLock { $0 = Damage(quarantinedBytes: bad.bytes, quarantineURL: bad.url) } }
    }

    /// Opens (or creates) the store of one signed-in user: a folder named by the MD5 of
    /// `user` inside `directory`, created 0700, so another account on the same device opens
    /// another store and never sees these records (seed 002). The user id never becomes a
    /// path component as written.
    ///
    /// ```swift
    /// let letters = try RecordStore<Letter>(directory: documents.appendingPathComponent("letters"), user: account)
    /// ```
    ///
    /// - Throws: as ``init(directory:configuration:)``.
    public convenience init(directory: URL, user: String, configuration: Configuration = Configuration()) throws {
        try self.init(
            directory: directory.appendingPathComponent(MD5.hexDigest(of: user), isDirectory: true),
            configuration: configuration
        )
    }

    /// The number of records.
    public var count: Int { state.withLock { $0.count } }

    /// The record with identifier `id`, or `nil`.
    ///
    /// - Complexity: O(1), in memory.
    public func record(id: Record.ID) -> Record? { state.withLock { $0.record(id: id) } }

    /// Whether a record has identifier `id`.
    public func contains(id: Record.ID) -> Bool { state.withLock { $0.record(id: id) != nil } }

    /// Every record, oldest write first.
    ///
    /// - Complexity: O(n).
    public func all() -> [Record] { state.withLock { $0.inWriteOrder() } }

    /// The records `isIncluded` accepts, oldest write first.
    ///
    /// - Complexity: O(n) calls of `isIncluded`, outside the store's lock.
    public func records(where isIncluded: (Record) throws -> Bool) rethrows -> [Record] {
        try all().filter(isIncluded)
    }

    /// The records `isIncluded` accepts, ordered by `areInIncreasingOrder`, at most `limit`.
    ///
    /// ```swift
    /// let firstReads = tasks.records(where: { $0.name.hasPrefix("Read") }, sortedBy: { $0.name < $1.name }, limit: 5)
    /// ```
    ///
    /// - Complexity: O(n log n).
    public func records(
        where isIncluded: (Record) throws -> Bool,
        sortedBy areInIncreasingOrder: (Record, Record) throws -> Bool,
        limit: Int = .max
    ) rethrows -> [Record] {
        let sorted = try records(where: isIncluded).sorted(by: areInIncreasingOrder)
        return limit < sorted.count ? Array(sorted.prefix(limit)) : sorted
    }

    /// Every record ordered by `areInIncreasingOrder`, at most `limit`.
    ///
    /// - Complexity: O(n log n).
    public func records(
        sortedBy areInIncreasingOrder: (Record, Record) throws -> Bool,
        limit: Int = .max
    ) rethrows -> [Record] {
        let sorted = try all().sorted(by: areInIncreasingOrder)
        return limit < sorted.count ? Array(sorted.prefix(limit)) : sorted
    }

    /// The `n` most recently written records (inserted, upserted or updated), newest first.
    ///
    /// - Complexity: O(n + skipped superseded writes), amortized O(n).
    public func latest(_ n: Int) -> [Record] { state.withLock { $0.latest(n) } }
}
