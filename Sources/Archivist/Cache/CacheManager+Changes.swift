import Foundation

/// The subscribers of one manager's ``CacheManager/changes(of:)`` streams, and the timer that
/// polls the stores for changes made elsewhere while there are any.
final class ChangeHub<Kind: CacheType>: @unchecked Sendable {
    // Safety: every `var` is read and written only under `lock`.
    let lock = Lock()
    var subscribers: [UInt64: (type: Kind, continuation: AsyncStream<CacheChange<Kind>>.Continuation)] = [:] {
        didSet { subscriberCount = subscribers.count }
    }
    /// `subscribers.count`, kept apart so that a store with no subscriber checks one integer:
    /// filtering the dictionary from the generic `publish` instantiated type metadata on
    /// every call (about 3 µs of a 100 KB set in a profile).
    var subscriberCount = 0
    var nextID: UInt64 = 0
    var timer: DispatchSourceTimer?
    /// Each polled store's change number to read from next, by store identity.
    var cursors: [ObjectIdentifier: UInt64] = [:]
}

extension CacheManager {
    /// How often a manager with ``changes(of:)`` subscribers looks for changes other processes
    /// made: every 50 ms. Each look costs one atomic load per store when nothing changed.
    public static var changePollInterval: Duration { .milliseconds(50) }

    /// The changes to `type`'s entries, as they happen: this manager's stores, removals and
    /// clears at once, other managers' and other processes' within ``changePollInterval``.
    ///
    /// ```swift
    /// Task {
    ///     for await change in cache.changes(of: .productList) where change.fromOtherProcess {
    ///         products = try cache.value(for: .productList) ?? []
    ///     }
    /// }
    /// ```
    ///
    /// The stream ends when the task iterating it is cancelled; events that arrive faster
    /// than they are consumed are buffered (the newest 256 kept).
    ///
    /// - Complexity: O(1) to subscribe; while any subscriber exists, a timer polls the stores.
    public func changes(of type: Kind) -> AsyncStream<CacheChange<Kind>> {
        let (stream, continuation) = AsyncStream.makeStream(of: CacheChange<Kind>.self, bufferingPolicy: .bufferingNewest(256))
        let hub = changeHub
        let id = hub.lock.withLock { () -> UInt64 in
            hub.nextID += 1
            hub.subscribers[hub.nextID] = (type, continuation)
            if hub.timer == nil { startPolling(hub) }
            return hub.nextID
        }
        continuation.onTermination = { _ in
            hub.lock.withLock {
                hub.subscribers[id] = nil
                if hub.subscribers.isEmpty {
                    hub.timer?.cancel()
                    hub.timer = nil
                }
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
    /// function instantiates the metadata of the stream's and the event's types on entry
    /// (about 1,100 instructions), which a manager without subscribers need not pay.
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
            guard let folder = try? folder(for: listener.type), folders.contains(where: { $0.contains(folder) }) else { continue }
            listener.continuation.yield(CacheChange(type: listener.type, target: .allEntries, fromOtherProcess: false))
        }
    }

    /// Starts the poll timer (called under the hub's lock).
    private func startPolling(_ hub: ChangeHub<Kind>) {
        for store in [caches, documents] where hub.cursors[ObjectIdentifier(store)] == nil {
            hub.cursors[ObjectIdentifier(store)] = store.changeSequence
        }
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        let interval = DispatchTimeInterval.milliseconds(50)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in self?.pollForChanges() }
        hub.timer = timer
        timer.resume()
    }

    /// One poll: catches up each store with other processes' records and reports the changes
    /// this manager did not make to the subscribers of the types they touched.
    func pollForChanges() {
        let hub = changeHub
        let stores = caches === documents ? [caches] : [caches, documents]
        for store in stores {
            store.refresh()
            let token = originToken
            let (changes, listeners) = hub.lock.withLock { () -> ([DiskStore.StoreChange], [(type: Kind, continuation: AsyncStream<CacheChange<Kind>>.Continuation)]) in
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
                    listener.continuation.yield(CacheChange(type: listener.type, target: target,
                                                            fromOtherProcess: change.fromOtherProcess))
                }
            }
        }
    }
}
