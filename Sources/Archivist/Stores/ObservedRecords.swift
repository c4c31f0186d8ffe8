#if canImport(Observation)
import Observation

/// A ``RecordStore`` query as an `@Observable` model, for SwiftUI views that update when the
/// store changes — in this process, or in another one writing the same folder: what Boutique's
/// `@Stored` does.
///
/// ``records`` holds the records the query selects, in its order. The model follows
/// ``RecordStore/changes(pollingInterval:)`` and evaluates the query again after each change,
/// whoever made it (other processes' changes are read when their change signal arrives, and at
/// a poll where the signal cannot be established or one is asked for). It holds the observation weakly: releasing the model ends it, and its
/// change stream with it.
///
/// ```swift
/// struct TasksView: View {
///     @State var open = ObservedRecords(tasks, where: { !$0.isDone }, sortedBy: { $0.due < $1.due })
///     var body: some View {
///         List(open.records) { task in Text(task.name) }
///     }
/// }
/// ```
///
/// Main actor only, like the views that show it: the query's closures run on the main actor.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor @Observable
public final class ObservedRecords<Record: Archivable & Identifiable & Sendable>
where Record.ID: Archivable & Sendable {
    /// The store queried.
    ///
    /// ```swift
    /// try open.store.upsert(task)   // `open.records` follows
    /// ```
    public let store: RecordStore<Record>
    /// The records the query selects, in its order: those `isIncluded` accepts (all without
    /// it), ordered by `areInIncreasingOrder` (oldest write first without it), at most
    /// `limit`.
    ///
    /// Reading it in a SwiftUI `body` (or in `withObservationTracking`) makes the view update
    /// when the store changes, here or in another process.
    ///
    /// <!-- snippet: skip SwiftUI exists on Apple platforms only -->
    /// ```swift
    /// Text("\(open.records.count) open")
    /// ```
    public private(set) var records: [Record]
    /// Which records to keep; `nil` keeps all.
    private let isIncluded: ((Record) -> Bool)?
    /// The order; `nil` keeps the store's (oldest write first).
    private let areInIncreasingOrder: ((Record, Record) -> Bool)?
    /// The most records kept.
    private let limit: Int
    /// The task following the store's changes; cancelled on `deinit`.
    private let observation = ObservationTask()

    /// Observes the records of `store` that `isIncluded` accepts, ordered by
    /// `areInIncreasingOrder`, at most `limit`.
    ///
    /// ```swift
    /// let latest = ObservedRecords(tasks, sortedBy: { $0.created > $1.created }, limit: 20)
    /// ```
    ///
    /// - Parameters:
    ///   - store: the store to query.
    ///   - isIncluded: which records to keep; `nil` (the default) keeps all.
    ///   - areInIncreasingOrder: the order; `nil` (the default) keeps the store's, oldest
    ///     write first.
    ///   - limit: the most records kept (none when negative); no limit by default.
    ///   - pollingInterval: as in ``RecordStore/changes(pollingInterval:)``: how often to look
    ///     for other processes' changes besides the change signal; `nil` (the default) polls
    ///     only where the signal cannot be established, every second.
    /// - Complexity: O(n log n) in the store's records, on the main actor, now and after
    ///   each change.
    public init(
        _ store: RecordStore<Record>,
        where isIncluded: ((Record) -> Bool)? = nil,
        sortedBy areInIncreasingOrder: ((Record, Record) -> Bool)? = nil,
        limit: Int = .max,
        pollingInterval: Duration? = nil
    ) {
        // Subscribe before querying, so that no change falls between the query and the stream.
        let changes = store.changes(pollingInterval: pollingInterval)
        self.store = store
        self.isIncluded = isIncluded
        self.areInIncreasingOrder = areInIncreasingOrder
        self.limit = limit
        self.records = ObservedRecords.query(store, isIncluded, areInIncreasingOrder, limit)
        observation.follow(changes, updating: self) { $0.reload() }
    }

    deinit {
        observation.cancel()
    }

    /// Evaluates the query again now. Changes made through any ``RecordStore`` reach
    /// ``records`` by themselves; this is for a query whose closures read state of their own
    /// that changed.
    ///
    /// ```swift
    /// open.reload()
    /// ```
    ///
    /// - Complexity: O(n log n) in the store's records.
    public func reload() {
        records = ObservedRecords.query(store, isIncluded, areInIncreasingOrder, limit)
    }

    /// The records of `store` that `isIncluded` accepts, ordered by `areInIncreasingOrder`, at
    /// most `limit`.
    private static func query(
        _ store: RecordStore<Record>,
        _ isIncluded: ((Record) -> Bool)?,
        _ areInIncreasingOrder: ((Record, Record) -> Bool)?,
        _ limit: Int
    ) -> [Record] {
        var selected = isIncluded.map { store.records(where: $0) } ?? store.all()
        if let areInIncreasingOrder { selected.sort(by: areInIncreasingOrder) }
        return limit < selected.count ? Array(selected.prefix(max(limit, 0))) : selected
    }
}
#endif
