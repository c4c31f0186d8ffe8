/// The live objects of one kind that have work to do when their process exits normally
/// (`exit`, or `main` returning), where an object held globally is never deinitialized: each
/// adds itself when made and removes itself in `deinit`, and the kind's one `atexit` handler
/// runs its work on ``live``.
///
/// ```swift
/// static let atExit = ExitRegistry<StatisticsBook>()
/// private static let handler: Void = { atexit { for book in atExit.live { book.publishMemoryHits() } } }()
/// ```
final class ExitRegistry<Object: AnyObject>: Sendable {
    private struct Entry {
        weak var object: Object?
    }

    private let entries = Locked<[ObjectIdentifier: Entry]>([:])

    /// Adds `object`, held weakly.
    func add(_ object: Object) {
        entries.withLock { $0[ObjectIdentifier(object)] = Entry(object: object) }
    }

    /// Removes the object `id` names (from its `deinit`, where no weak reference may be formed).
    func remove(_ id: ObjectIdentifier) {
        entries.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// The objects added and still alive.
    ///
    /// A closure, not the key path `\.object`: projecting a key path instantiates generic
    /// metadata the first time, behind the Swift runtime's one-time lock, and a child forked
    /// without `exec` (a pre-fork server's worker) runs this at its exit with only the forking
    /// thread: had another thread of the parent held that lock at the fork, the child would
    /// wait for it forever.
    var live: [Object] { entries.withLock { $0.values.compactMap { $0.object } } }
}
