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
    /// millisecond or two), and every `pollingInterval` if one is given.
    ///
    /// With the default, `nil`, nothing polls where the change signal is established: the
    /// process wakes for changes only, not on a timer (which matters in a widget and on the
    /// watch). Where the signal cannot be established (the system's limit on file watches
    /// reached), a poll every second stands in for it. Give an interval to poll as well, for
    /// changes whose signal does not arrive: a write from another machine to a network volume.
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
    /// - Parameter pollingInterval: How often to look for other processes' changes besides
    ///   the signal, give or take half of it so the system can group the wakeup with others;
    ///   `nil` (the default): only where the signal cannot be established, every second.
    /// - Complexity: Each signal or poll makes one `fstat` call; one that finds other
    ///   processes' entries costs what ``refresh()`` costs.
    public func changes(pollingInterval: Duration? = nil) -> AsyncStream<Change> {
        changes(pollingInterval: pollingInterval, observingSignal: true)
    }

    /// How often ``changes(pollingInterval:)`` polls, by default, where the change signal
    /// cannot be established.
    static var fallbackPollingInterval: Duration { .seconds(1) }

    /// ``changes(pollingInterval:)``, leaving the change signal unobserved when
    /// `observingSignal` is `false` (tests act out a system that refuses it).
    func changes(pollingInterval: Duration?, observingSignal: Bool) -> AsyncStream<Change> {
        let (stream, continuation) = AsyncStream<Change>.makeStream()
        let key = observers.withLock { list -> Int in
            list.nextKey += 1
            list.continuations[list.nextKey] = continuation
            return list.nextKey
        }
        let observation: ChangeSignal.Observation? =
            observingSignal
            ? changeSignal.observe(on: queue, { [weak self] in self?.catchUpInBackground() }) : nil
        let every = pollingInterval ?? (observation == nil ? Self.fallbackPollingInterval : nil)
        let poller = every.map { interval in
            activePolls.withLock { $0 += 1 }
            return Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval, tolerance: interval / 2)
                    guard let store = self, !Task.isCancelled else { return }
                    store.queue.async { store.catchUpInBackground() }
                }
            }
        }
        continuation.onTermination = { [weak self] _ in
            observation?.cancel()
            if let poller {
                poller.cancel()
                self?.activePolls.withLock { $0 -= 1 }
            }
            _ = self?.observers.withLock { $0.continuations.removeValue(forKey: key) }
        }
        return stream
    }

    /// The polls of change streams running now (tests).
    package var runningPolls: Int { activePolls.withLock { $0 } }

    /// ``refresh()`` for a change signal or a poll: work the library starts by itself that
    /// takes the cross-process lock, so it runs inside a ``BackgroundActivity``.
    func catchUpInBackground() {
        BackgroundActivity.run("Archivist: reading another process's record changes") { _ in
            _ = try? refresh()
        }
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
