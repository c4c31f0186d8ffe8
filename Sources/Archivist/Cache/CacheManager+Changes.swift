import Foundation

/// The subscribers of one manager's ``CacheManager/changes(of:)`` streams and, while there
/// are any, what wakes the manager to look for changes made elsewhere: the stores'
/// ``ChangeSignal``s and, where one cannot be established or the configuration asks for it,
/// a poll.
final class ChangeHub<Kind: CacheType>: @unchecked Sendable {
    // Safety: every `var` is read and written only under `lock`.
    let lock = Lock()
    var subscribers: [UInt64: (type: Kind, continuation: AsyncStream<CacheChange<Kind>>.Continuation)] = [:] {
        didSet { subscriberCount = subscribers.count }
    }
    /// `subscribers.count`, kept apart so that a store with no subscriber checks one integer:
    /// filtering the dictionary from the generic `publish` instantiates type metadata on
    /// every call (the `cache-manager` suite's sets guard it).
    var subscriberCount = 0
    var nextID: UInt64 = 0
    /// The poll, when one runs (see ``CacheManager/pollingInterval(signalsEstablished:)``).
    var timer: DispatchSourceTimer?
    /// Whether the manager is watching (signals observed, a poll if any started).
    var watching = false
    /// Whether to observe the stores' change signals: `false` acts out a system that refuses
    /// every one (tests).
    var observesSignals = true
    /// The stores' change signals, observed while there are subscribers.
    var observations: [ChangeSignal.Observation] = []
    /// Each polled store's change number to read from next, by store identity.
    var cursors: [ObjectIdentifier: UInt64] = [:]
    /// What woke the manager so far, and what that delivered.
    var wakeups = ChangeWakeups()
    /// Where the signals' handlers and the fallback poll run, one at a time, so that changes
    /// reach each subscriber in commit order.
    let queue = DispatchQueue(label: "Archivist.CacheManager.changes", qos: .utility)

    /// Stops watching for changes made elsewhere (called under `lock`).
    func stopWatching() {
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
    package var isPollingForChanges: Bool { changeHub.lock.withLock { changeHub.timer != nil } }

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
        let id = hub.lock.withLock { () -> UInt64 in
            hub.nextID += 1
            hub.subscribers[hub.nextID] = (type, continuation)
            if !hub.watching { startWatching(hub) }
            return hub.nextID
        }
        continuation.onTermination = { _ in
            hub.lock.withLock {
                hub.subscribers[id] = nil
                if hub.subscribers.isEmpty { hub.stopWatching() }
            }
        }
        return stream
    }

    /// Reports a change this manager made to the subscribers of `type`.
    func publish(_ type: Kind, _ target: CacheChange<Kind>.Target) {
        guard changeHub.lock.withLock({ changeHub.subscriberCount != 0 }) else { return }
        yieldToSubscribers(type, target)
    }

    /// The part of ``publish(_:_:)`` for a manager with subscribers, out of line: the generic
    /// function instantiates the metadata of the stream's and the event's types on entry,
    /// which a manager without subscribers need not pay (the `cache-manager` suite's sets
    /// guard it).
    @inline(never)
    private func yieldToSubscribers(_ type: Kind, _ target: CacheChange<Kind>.Target) {
        let listeners = changeHub.lock.withLock { changeHub.subscribers.values.filter { $0.type == type } }
        for listener in listeners {
            listener.continuation.yield(CacheChange(type: type, target: target, fromOtherProcess: false))
        }
    }

    /// Reports a clear of `folders` in `store` to the subscribers of every type inside them.
    func publishClear(of folders: [FolderPath], in store: DiskStore) {
        let listeners = changeHub.lock.withLock { Array(changeHub.subscribers.values) }
        for listener in listeners where disk(for: listener.type.location) === store {
            guard let folder = try? folder(for: listener.type), folders.contains(where: { $0.contains(folder) }) else {
                continue
            }
            listener.continuation.yield(CacheChange(type: listener.type, target: .allEntries, fromOtherProcess: false))
        }
    }

    /// Starts observing the stores' change signals and, if one is due
    /// (``pollingInterval(configured:signalsEstablished:)``), the poll (called under the hub's
    /// lock). The handlers hold the manager weakly: a manager that goes away stops them.
    private func startWatching(_ hub: ChangeHub<Kind>) {
        hub.watching = true
        let stores = caches === documents ? [caches] : [caches, documents]
        for store in stores where hub.cursors[ObjectIdentifier(store)] == nil {
            hub.cursors[ObjectIdentifier(store)] = store.changeSequence
        }
        hub.observations =
            hub.observesSignals
            ? stores.compactMap { store in
                store.changeSignal.observe(on: hub.queue) { [weak self] in self?.pollForChanges(signalled: true) }
            } : []
        let established = hub.observations.count == stores.count
        guard
            let every = Self.pollingInterval(
                configured: configuration.changePollingInterval,
                signalsEstablished: established
            )
        else { return }
        let timer = DispatchSource.makeTimerSource(queue: hub.queue)
        let interval = DispatchTimeInterval(every)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: DispatchTimeInterval(every / 2))
        timer.setEventHandler { [weak self] in self?.pollForChanges(signalled: false) }
        hub.timer = timer
        timer.resume()
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
        hub.lock.withLock {
            if signalled { hub.wakeups.signals += 1 } else { hub.wakeups.polls += 1 }
        }
        let stores = caches === documents ? [caches] : [caches, documents]
        // The changes are counted before any is yielded, so that a subscriber woken by one
        // reads wakeup counts that include it (`CacheChangeTests`).
        var deliveries: [(continuation: AsyncStream<CacheChange<Kind>>.Continuation, change: CacheChange<Kind>)] = []
        for store in stores {
            store.refreshAfterSignal()
            let token = originToken
            let (changes, listeners) = hub.lock.withLock {
                () -> (
                    [DiskStore.StoreChange], [(type: Kind, continuation: AsyncStream<CacheChange<Kind>>.Continuation)]
                ) in
                let key = ObjectIdentifier(store)
                let (changes, next, complete) = store.changes(since: hub.cursors[key] ?? store.changeSequence)
                hub.cursors[key] = next
                let foreign = changes.filter { $0.origin != token }
                if !complete { return ([DiskStore.StoreChange.everything], Array(hub.subscribers.values)) }
                return (foreign, foreign.isEmpty ? [] : Array(hub.subscribers.values))
            }
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
        hub.lock.withLock {
            if signalled {
                hub.wakeups.deliveredBySignal += deliveries.count
            } else {
                hub.wakeups.deliveredByPoll += deliveries.count
            }
        }
        for delivery in deliveries { delivery.continuation.yield(delivery.change) }
    }

    /// What woke the manager to look for changes made elsewhere so far, and what each way
    /// delivered (for tests and benchmarks).
    package var changeWakeups: ChangeWakeups { changeHub.lock.withLock { changeHub.wakeups } }
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
