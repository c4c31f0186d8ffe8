import Foundation

/// The subscribers of one manager's ``CacheManager/changes(of:)`` streams and, while there
/// are any, what wakes the manager to look for changes made elsewhere: the stores'
/// ``ChangeSignal``s and, where one cannot be established or the configuration asks for it,
/// a poll. It owns all of that under its one lock; the manager asks it for listeners and
/// changes, and never holds the lock itself.
final class ChangeHub<Kind: CacheType>: @unchecked Sendable {
    // Safety: every `var` is private, and read and written only under `lock`.
    /// One subscriber: the type it follows and its stream's continuation.
    typealias Listener = (type: Kind, continuation: AsyncStream<CacheChange<Kind>>.Continuation)

    /// What starting to watch needs from the manager: its stores, the configured poll, and
    /// what a signal or the poll wakes (holding the manager weakly).
    struct Watch {
        /// The stores whose changes are watched (one when caches and documents share a root).
        var stores: [DiskStore]
        /// ``CacheManager/Configuration/changePollingInterval``.
        var configuredPolling: Duration?
        /// One look for changes made elsewhere; `true` when a signal woke it.
        var look: @Sendable (_ signalled: Bool) -> Void
    }

    private let lock = Lock()
    private var subscribers: [UInt64: Listener] = [:] {
        didSet { subscriberCount = subscribers.count }
    }
    /// `subscribers.count`, kept apart so that a store with no subscriber checks one integer:
    /// filtering the dictionary from the generic `publish` instantiates type metadata on
    /// every call (the `cache-manager` suite's sets guard it).
    private var subscriberCount = 0
    private var nextID: UInt64 = 0
    /// The poll, when one runs (see ``CacheManager/pollingInterval(configured:signalsEstablished:)``).
    private var timer: DispatchSourceTimer?
    /// Whether the manager is watching (signals observed, a poll if any started).
    private var watching = false
    /// Whether to observe the stores' change signals: `false` acts out a system that refuses
    /// every one (tests, ``refuseSignals()``).
    private var observesSignals = true
    /// The stores' change signals, observed while there are subscribers.
    private var observations: [ChangeSignal.Observation] = []
    /// Each watched store's change number to read from next, by store identity.
    private var cursors: [ObjectIdentifier: UInt64] = [:]
    /// What woke the manager so far, and what that delivered.
    private var wakeupCounts = ChangeWakeups()
    /// Where the signals' handlers and the fallback poll run, one at a time, so that changes
    /// reach each subscriber in commit order.
    private let queue = DispatchQueue(label: "Archivist.CacheManager.changes", qos: .utility)

    /// Adds a subscriber of `type`'s changes, and starts watching if it is the first.
    ///
    /// - Parameter watch: What watching needs, asked for only when it starts.
    /// - Returns: The subscriber's number, for ``unsubscribe(_:)``.
    func subscribe(
        _ type: Kind,
        _ continuation: AsyncStream<CacheChange<Kind>>.Continuation,
        watch: () -> Watch
    ) -> UInt64 {
        lock.withLock {
            nextID += 1
            subscribers[nextID] = (type, continuation)
            if !watching { startWatching(watch()) }
            return nextID
        }
    }

    /// Removes a subscriber; with the last one gone, stops watching.
    func unsubscribe(_ id: UInt64) {
        lock.withLock {
            subscribers[id] = nil
            if subscribers.isEmpty { stopWatching() }
        }
    }

    /// Stops watching and hands back every subscriber's continuation (the manager going away
    /// finishes them).
    func closeAll() -> [AsyncStream<CacheChange<Kind>>.Continuation] {
        lock.withLock {
            stopWatching()
            return subscribers.values.map(\.continuation)
        }
    }

    /// Whether any stream is subscribed: one integer read under the lock.
    var hasSubscribers: Bool { lock.withLock { subscriberCount != 0 } }

    /// The subscribers of `type`, or of every type when `nil`.
    func listeners(of type: Kind? = nil) -> [Listener] {
        lock.withLock {
            guard let type else { return Array(subscribers.values) }
            return subscribers.values.filter { $0.type == type }
        }
    }

    /// Counts one look, woken by a signal or by the poll.
    func noteWakeup(signalled: Bool) {
        lock.withLock {
            if signalled { wakeupCounts.signals += 1 } else { wakeupCounts.polls += 1 }
        }
    }

    /// Counts the changes a look delivered.
    func noteDelivered(_ count: Int, signalled: Bool) {
        lock.withLock {
            if signalled { wakeupCounts.deliveredBySignal += count } else { wakeupCounts.deliveredByPoll += count }
        }
    }

    /// What woke the manager so far, and what each way delivered.
    var wakeups: ChangeWakeups { lock.withLock { wakeupCounts } }

    /// Whether a poll is running.
    var isPolling: Bool { lock.withLock { timer != nil } }

    /// From now on, acts as if the system refused every change signal (tests).
    func refuseSignals() { lock.withLock { observesSignals = false } }

    /// The changes `store` committed since the last call for it that `origin` did not make,
    /// with the subscribers to tell (none when there is no such change); "anything may have
    /// changed" (``DiskStore/StoreChange/everything``) when the store's list of recent changes
    /// no longer reaches back that far.
    func takeChanges(of store: DiskStore, notMadeBy origin: UInt) -> ([DiskStore.StoreChange], [Listener]) {
        lock.withLock {
            let key = ObjectIdentifier(store)
            let (changes, next, complete) = store.changes(since: cursors[key] ?? store.changeSequence)
            cursors[key] = next
            if !complete { return ([DiskStore.StoreChange.everything], Array(subscribers.values)) }
            let foreign = changes.filter { $0.origin != origin }
            return (foreign, foreign.isEmpty ? [] : Array(subscribers.values))
        }
    }

    /// Starts observing the stores' change signals and, if one is due
    /// (``CacheManager/pollingInterval(configured:signalsEstablished:)``), the poll. Under `lock`.
    private func startWatching(_ watch: Watch) {
        watching = true
        for store in watch.stores where cursors[ObjectIdentifier(store)] == nil {
            cursors[ObjectIdentifier(store)] = store.changeSequence
        }
        let look = watch.look
        observations =
            observesSignals
            ? watch.stores.compactMap { store in store.changeSignal.observe(on: queue) { look(true) } } : []
        let established = observations.count == watch.stores.count
        guard
            let every = CacheManager<Kind>.pollingInterval(
                configured: watch.configuredPolling,
                signalsEstablished: established
            )
        else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = DispatchTimeInterval(every)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: DispatchTimeInterval(every / 2))
        timer.setEventHandler { look(false) }
        self.timer = timer
        timer.resume()
    }

    /// Stops watching for changes made elsewhere. Under `lock`.
    private func stopWatching() {
        watching = false
        timer?.cancel()
        timer = nil
        observations = []  // released: each cancels its registration
    }
}

/// How often a manager looked for changes made elsewhere, and how many such changes each way
/// delivered to subscribers (for tests and benchmarks).
package struct ChangeWakeups: Sendable, Equatable {
    /// Looks woken by a store's change signal.
    package var signals = 0
    /// Looks of the fallback poll.
    package var polls = 0
    /// Changes made elsewhere delivered by a look woken by a signal.
    package var deliveredBySignal = 0
    /// Changes made elsewhere delivered by the fallback poll.
    package var deliveredByPoll = 0
}

extension CacheManager {
    /// How often a manager with ``changes(of:)`` subscribers polls its stores when a change
    /// signal cannot be established for one of them (the system's limit on file watches
    /// reached) and ``Configuration/changePollingInterval`` is `nil`: every second, give or
    /// take half a second so the system can group the wakeup with others. Where every signal
    /// is established, no poll runs unless the configuration asks for one.
    ///
    /// ```swift
    /// let slowest = CacheManager<ShopCache>.changePollInterval * 1.5   // the latest a change arrives without its signal
    /// ```
    ///
    /// - Complexity: Each poll costs two atomic loads per store when nothing changed.
    public static var changePollInterval: Duration { .seconds(1) }

    /// How often to poll: ``Configuration/changePollingInterval`` when given; else
    /// ``changePollInterval`` when a store's change signal could not be established, and no
    /// poll at all when every one was.
    static func pollingInterval(configured: Duration?, signalsEstablished: Bool) -> Duration? {
        configured ?? (signalsEstablished ? nil : changePollInterval)
    }

    /// Whether a poll is running for this manager's ``changes(of:)`` subscribers (tests).
    package var isPollingForChanges: Bool { changeHub.isPolling }

    /// The changes to `type`'s entries, as they happen: this manager's stores, removals and
    /// clears at once; other managers' and other processes' as soon as their change signal
    /// arrives (Darwin notifications on Apple platforms, `inotify` on Linux: typically within
    /// a millisecond or two). Nothing polls where the signals are established, unless
    /// ``Configuration/changePollingInterval`` asks for it (changes whose signal does not
    /// arrive: another machine's writes to a network volume); where one cannot be
    /// established, a poll every ``changePollInterval`` stands in for it.
    ///
    /// ```swift
    /// Task {
    ///     for await change in cache.changes(of: .productList) where change.isFromAnotherProcess {
    ///         products = try await cache.value(for: .productList) ?? []
    ///     }
    /// }
    /// ```
    ///
    /// The stream ends when the task iterating it is cancelled; events that arrive faster
    /// than they are consumed are buffered (the newest 256 kept).
    ///
    /// - Complexity: O(1) to subscribe. While any subscriber exists, the manager observes its
    ///   stores' change signals, and polls as said above; with no subscriber it does neither.
    public func changes(of type: Kind) -> AsyncStream<CacheChange<Kind>> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: CacheChange<Kind>.self,
            bufferingPolicy: .bufferingNewest(256)
        )
        let hub = changeHub
        let id = hub.subscribe(type, continuation) {
            ChangeHub.Watch(
                stores: caches === documents ? [caches] : [caches, documents],
                configuredPolling: configuration.changePollingInterval,
                look: { [weak self] signalled in self?.pollForChanges(signalled: signalled) }
            )
        }
        continuation.onTermination = { _ in hub.unsubscribe(id) }
        return stream
    }

    /// Reports a change this manager made to the subscribers of `type`.
    func publish(_ type: Kind, _ target: CacheChange<Kind>.Target) {
        guard changeHub.hasSubscribers else { return }
        yieldToSubscribers(type, target)
    }

    /// The part of ``publish(_:_:)`` for a manager with subscribers, out of line: the generic
    /// function instantiates the metadata of the stream's and the event's types on entry,
    /// which a manager without subscribers need not pay (the `cache-manager` suite's sets
    /// guard it).
    @inline(never)
    private func yieldToSubscribers(_ type: Kind, _ target: CacheChange<Kind>.Target) {
        let listeners = changeHub.listeners(of: type)
        for listener in listeners {
            listener.continuation.yield(CacheChange(type: type, target: target, fromOtherProcess: false))
        }
    }

    /// Reports a clear of `folders` in `store` to the subscribers of every type inside them.
    func publishClear(of folders: [FolderPath], in store: DiskStore) {
        let listeners = changeHub.listeners()
        for listener in listeners where disk(for: listener.type.location) === store {
            guard let folder = try? folder(for: listener.type), folders.contains(where: { $0.contains(folder) }) else {
                continue
            }
            listener.continuation.yield(CacheChange(type: listener.type, target: .allEntries, fromOtherProcess: false))
        }
    }

    /// One look for changes made elsewhere, woken by a store's change signal or by the
    /// poll: catches up each store with other processes' records and reports the changes this
    /// manager did not make to the subscribers of the types they touched. Work the library
    /// starts by itself that takes the stores' locks, so it runs inside a
    /// ``BackgroundActivity``.
    func pollForChanges(signalled: Bool) {
        BackgroundActivity.run("Archivist: reading another process's cache changes") { _ in
            lookForChanges(signalled: signalled)
        }
    }

    /// The body of ``pollForChanges(signalled:)``.
    private func lookForChanges(signalled: Bool) {
        let hub = changeHub
        hub.noteWakeup(signalled: signalled)
        let stores = caches === documents ? [caches] : [caches, documents]
        // The changes are counted before any is yielded, so that a subscriber woken by one
        // reads wakeup counts that include it (`CacheChangeTests`).
        var deliveries: [(continuation: AsyncStream<CacheChange<Kind>>.Continuation, change: CacheChange<Kind>)] = []
        for store in stores {
            store.refreshAfterSignal()
            let (changes, listeners) = hub.takeChanges(of: store, notMadeBy: originToken)
            for listener in listeners where disk(for: listener.type.location) === store {
                guard let folder = try? folder(for: listener.type) else { continue }
                for change in changes {
                    let target: CacheChange<Kind>.Target
                    if change.name == nil {
                        guard change.folder.contains(folder) else { continue }
                        target = .allEntries
                    } else {
                        guard change.folder == folder else { continue }
                        target = .someEntry
                    }
                    deliveries.append(
                        (
                            listener.continuation,
                            CacheChange(
                                type: listener.type,
                                target: target,
                                fromOtherProcess: change.fromOtherProcess
                            )
                        )
                    )
                }
            }
        }
        guard !deliveries.isEmpty else { return }
        hub.noteDelivered(deliveries.count, signalled: signalled)
        for delivery in deliveries { delivery.continuation.yield(delivery.change) }
    }

    /// What woke the manager to look for changes made elsewhere so far, and what each way
    /// delivered (for tests and benchmarks).
    package var changeWakeups: ChangeWakeups { changeHub.wakeups }
}

extension DispatchTimeInterval {
    /// `duration`, to the nanosecond (`.never` past what nanoseconds can count).
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = nanoseconds + attoseconds / 1_000_000_000
        if overflow {
            self = .never
        } else if let exact = Int(exactly: total) {
            self = .nanoseconds(exact)
        } else {
            // Above 2³¹ ns (2.1 s) a 32-bit `Int` (arm64_32) cannot count nanoseconds.
            self = .milliseconds(Int(clamping: total / 1_000_000))
        }
    }
}
