import Foundation

extension RecordStore {
    /// One change to a ``RecordStore``, as ``changes(pollingInterval:)`` delivers it.
    public struct Change: Sendable {
        /// Identifiers of the records inserted or replaced.
        public var upserted: [Record.ID]
        /// Identifiers of the records deleted.
        public var deleted: [Record.ID]
        /// Whether another process made the change (this one read it while catching up).
        public var isFromAnotherProcess: Bool
        /// Whether the records were replaced wholesale — ``RecordStore/removeAll()``, or a
        /// reload after another process compacted — so that any record may have changed;
        /// `upserted` and `deleted` are then empty.
        public var isReload: Bool
    }

    /// The changes to this store from now on: this process's writes as they commit, and
    /// other processes' as this one reads them — on its next write or ``refresh()``, or by
    /// itself while the sequence is being iterated: when the writer's change signal arrives
    /// (a Darwin notification on Apple platforms, `inotify` on Linux; typically within a
    /// millisecond or two), and else every `pollingInterval`, a fallback for changes whose
    /// signal does not arrive (a write from another machine to a network volume, the system's
    /// limit on file watches reached). `nil` turns the fallback off.
    ///
    /// ```swift
    /// for await change in letters.changes() where change.isFromAnotherProcess {
    ///     reloadList()
    /// }
    /// ```
    ///
    /// Events are buffered without bound until iterated; end the iteration (or cancel its
    /// task) to stop observing and polling.
    ///
    /// - Parameter pollingInterval: How often to look for other processes' changes when no
    ///   signal came: every second by default, give or take half of it so the system can
    ///   group the wakeup with others.
    /// - Complexity: Each signal or poll takes the store's lock and makes one `fstat` call;
    ///   one that finds other processes' entries costs what ``refresh()`` costs.
    public func changes(pollingInterval: Duration? = .seconds(1)) -> AsyncStream<Change> {
        let (stream, continuation) = AsyncStream<Change>.makeStream()
        let key = observers.withLock { list -> Int in
            list.nextKey += 1
            list.continuations[list.nextKey] = continuation
            return list.nextKey
        }
        let observation = changeSignal.observe(on: queue) { [weak self] in try? self?.refresh() }
        let poller = pollingInterval.map { interval in
            Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval, tolerance: interval / 2)
                    guard let store = self, !Task.isCancelled else { return }
                    store.queue.async { try? store.refresh() }
                }
            }
        }
        continuation.onTermination = { [weak self] _ in
            observation?.cancel()
            poller?.cancel()
            _ = self?.observers.withLock { $0.continuations.removeValue(forKey: key) }
        }
        return stream
    }

    /// Hands `change` to every iterator of ``changes(pollingInterval:)``; `make` runs only
    /// when there is one.
    func notify(_ make: @autoclosure () -> Change) {
        let continuations = observers.withLock { $0.continuations.isEmpty ? [] : Array($0.continuations.values) }
        guard !continuations.isEmpty else { return }
        let change = make()
        for continuation in continuations { continuation.yield(change) }
    }
}

/// The iterators of a ``RecordStore``'s change sequences.
struct ChangeObservers<Change: Sendable> {
    var nextKey = 0
    var continuations: [Int: AsyncStream<Change>.Continuation] = [:]
}
