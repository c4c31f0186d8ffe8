import Foundation

/// The change streams of a preferences file: its change signal, observed from the first
/// stream's subscription on, and the poll that stands in for it.
extension PreferencesFile {
    /// Starts a change stream, opened through the `Preferences` that `owner` names: of every
    /// key (`key == nil`), or of one. `pollingInterval`: as in
    /// ``Preferences/changes(pollingInterval:)``.
    func subscribe(key: String?, pollingInterval: Duration?, owner: ObjectIdentifier) -> AsyncStream<Preferences.Change>
    {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Preferences.Change.self,
            bufferingPolicy: .bufferingNewest(256)
        )
        let id = state.withLock { state -> UInt64 in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = Subscriber(
                key: key,
                owner: owner,
                pollingInterval: pollingInterval,
                continuation: continuation
            )
            if state.observed == nil {
                state.observed = state.remembered
                observeSignal(&state)
            }
            startPollingIfNeeded(&state)
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.subscribers[id] = nil
                if state.subscribers.isEmpty { Self.stopWatching(&state) }
            }
        }
        return stream
    }

    /// Whether a poll runs now (for tests: none runs by default while the change signal is
    /// observed).
    var isPolling: Bool { state.withLock { $0.poller != nil } }

    /// The name of the change signal observed now, `nil` while none is: the name that
    /// writers post under (``PlistStore/changeSignal(of:)``) once the file's folder exists.
    var observedSignalName: String? { state.withLock { $0.signalName } }

    /// Observes the file's change signal, named now — when the folder exists, after the
    /// device and inode numbers that writers name it by — or leaves it for the poll to try
    /// again (under `state`'s lock).
    private func observeSignal(_ state: inout State) {
        let signal = PlistStore.changeSignal(of: url)
        guard signal.isIdentified, let observation = signal.observe(on: queue, { [weak self] in self?.catchUp() })
        else {
            return
        }
        state.observation = observation
        state.signalName = signal.name
    }

    /// How often the poll runs now: the shortest interval a stream asked for, else — while
    /// no change signal is observed — ``fallbackPollInterval``; `nil`: no poll.
    private static func pollInterval(_ state: State) -> Duration? {
        if let asked = state.subscribers.values.compactMap(\.pollingInterval).min() { return asked }
        return state.observation == nil ? fallbackPollInterval : nil
    }

    /// Starts the poll if one is wanted and none runs (under `state`'s lock). The poll ends
    /// itself once it is no longer wanted (the signal observed, by a poll, and no stream
    /// asking for one).
    private func startPollingIfNeeded(_ state: inout State) {
        guard state.poller == nil, Self.pollInterval(state) != nil else { return }
        state.pollerGeneration += 1
        let generation = state.pollerGeneration
        state.poller = Task.detached(priority: .utility) { [weak self] in
            while !Task.isCancelled {
                let interval = self?.state.withLock { state -> Duration? in
                    guard state.pollerGeneration == generation else { return nil }
                    guard let interval = Self.pollInterval(state) else {
                        state.poller = nil
                        return nil
                    }
                    return interval
                }
                guard let interval else { return }
                try? await Task.sleep(for: interval, tolerance: interval / 2)
                guard let file = self, !Task.isCancelled else { return }
                file.queue.async { file.poll() }
            }
        }
    }

    /// Stops observing and polling (under `state`'s lock).
    static func stopWatching(_ state: inout State) {
        state.observation?.cancel()
        state.observation = nil
        state.signalName = nil
        state.poller?.cancel()
        state.poller = nil
        state.observed = nil
    }

    /// The poll: observes the signal if it could not before (the folder did not exist yet),
    /// and catches up.
    private func poll() {
        state.withLock { state in
            guard state.observed != nil, state.observation == nil else { return }
            observeSignal(&state)
        }
        catchUp()
    }

    /// Reads the file if it changed since the streams last reported it, and reports the keys
    /// another writer changed.
    func catchUp() {
        writeLock.withLock {
            guard let observed = state.withLock({ $0.observed }) else { return }
            let current: PlistSnapshot
            do {
                current = try store.currentSnapshot(at: url) ?? PlistSnapshot(stamp: nil, root: [:])
            } catch {
                return  // unreadable for now: the next signal or poll tries again
            }
            if let stamp = current.stamp, stamp == observed.stamp { return }
            let keys = state.withLock { state -> Set<String> in
                guard state.observed != nil else { return [] }
                state.observed = current
                if current.stamp != nil { state.remembered = current }
                return Self.changedKeys(from: observed.root, to: current.root, shownThrough: state)
            }
            if !keys.isEmpty { publish(keys, from: nil) }
        }
    }

    /// The keys whose values differ between `old` and `new`, less those whose unwritten
    /// change hides the file's value from reads.
    static func changedKeys(
        from old: [String: PlistValue],
        to new: [String: PlistValue],
        shownThrough state: State
    ) -> Set<String> {
        guard !state.pending.removesAll && !state.inFlight.removesAll else { return [] }
        var keys: Set<String> = []
        for (key, value) in new where old[key] != value { keys.insert(key) }
        for key in old.keys where new[key] == nil { keys.insert(key) }
        return keys.filter { key in
            if case .unchanged = state.pending.lookup(key), case .unchanged = state.inFlight.lookup(key) { return true }
            return false
        }
    }

    /// Hands the change of `keys` to every stream that wants it: made through the
    /// `Preferences` that `owner` names, or (`nil`) read from the file. A stream opened
    /// through another `Preferences` sees it as ``Preferences/Change/isFromAnotherProcess``.
    func publish(_ keys: Set<String>, from owner: ObjectIdentifier?) {
        let subscribers = state.withLock { $0.subscribers.isEmpty ? [] : Array($0.subscribers.values) }
        for subscriber in subscribers {
            let isForeign = subscriber.owner != owner
            guard let key = subscriber.key else {
                subscriber.continuation.yield(Preferences.Change(keys: keys, isFromAnotherProcess: isForeign))
                continue
            }
            if keys.contains(key) {
                subscriber.continuation.yield(Preferences.Change(keys: [key], isFromAnotherProcess: isForeign))
            }
        }
    }
}
