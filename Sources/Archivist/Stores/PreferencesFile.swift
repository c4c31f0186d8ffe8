import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a ``Preferences`` keeps of its file: the root last read or written, the changes not
/// yet written, the background write that will write them, and the change streams.
///
/// Separate from ``Preferences`` so that the background write holds this rather than the
/// preferences: when the last reference to a `Preferences` goes, its deinitializer runs at
/// once and writes what is pending.
///
/// Locks: `state` guards memory only and is never held across file I/O; `writeLock` lets one
/// thread of this process at a time write the file or catch up with it (its file I/O included;
/// the file's cross-process lock is taken inside, by ``PlistStore``, around the short merge
/// and rename only).
final class PreferencesFile: Sendable {
    let store: PlistStore
    let name: String
    let url: URL
    let state: Locked<State>
    /// Held while this process writes the file, or catches up with another's change.
    let writeLock = Lock()
    /// Where background writes, change signals and polls run.
    let queue = DispatchQueue(label: "Archivist.Preferences", qos: .utility)
    /// The file's change signal (Darwin notification, `inotify`).
    let signal: ChangeSignal
    /// The process that made this, whose exit writes what is pending (a forked child's does not).
    private let process = getpid()

    /// How long after the first unwritten change the background write starts, collecting
    /// every change made meanwhile into one write of the file.
    static let writeDelay: DispatchTimeInterval = .milliseconds(20)

    struct State {
        /// The file's root as last read or written, with its stamp then.
        var remembered: PlistSnapshot
        /// Changes not yet written (and not being written).
        var pending = PendingChanges()
        /// Changes being written now; reads see them until the write ends.
        var inFlight = PendingChanges()
        /// Whether a background write is scheduled.
        var isScheduled = false
        /// The failure of a background write, until a call reports it.
        var failure: StoreError?
        /// How many times this process replaced the file for these preferences.
        var fileWrites = 0
        /// The root the change streams last reported, while any stream is iterated.
        var observed: PlistSnapshot?
        var subscribers: [UInt64: Subscriber] = [:]
        var nextSubscriber: UInt64 = 0
        var observation: ChangeSignal.Observation?
        var poller: Task<Void, Never>?
        var isClosed = false
    }

    /// An iterator of ``Preferences/changes(pollingInterval:)`` (`key == nil`) or of one key's
    /// changes.
    struct Subscriber {
        var key: String?
        var continuation: AsyncStream<Preferences.Change>.Continuation
    }

    init(store: PlistStore, name: String) throws {
        self.store = store
        self.name = name
        url = try store.fileURL(for: name)
        signal = ChangeSignal(folder: store.directory.path, fileName: url.lastPathComponent)
        state = Locked(State(remembered: try store.snapshot(of: name)))
        _ = Self.writeAtExit
        Self.atExit.add(self)
    }

    deinit {
        Self.atExit.remove(ObjectIdentifier(self))
    }

    // MARK: Reading

    /// The value of `key` as this process sees it: its unwritten change, else the file's.
    ///
    /// - Complexity: O(1) expected: one `stat`; O(n) in the file's size when it changed.
    func value(_ key: String) -> PlistValue? {
        let (lookup, known) = state.withLock { state -> (PendingChanges.Lookup, PlistSnapshot?) in
            var lookup = state.pending.lookup(key)
            if case .unchanged = lookup { lookup = state.inFlight.lookup(key) }
            if case .unchanged = lookup { return (lookup, state.remembered) }
            return (lookup, nil)
        }
        switch lookup {
        case .value(let value): return value
        case .absent: return nil
        case .unchanged: return PlistStore.entry(key, in: currentRoot(known))
        }
    }

    /// The file's root: from memory when the file's stamp is the one last seen, else read
    /// (or, when it cannot be read, the root last read).
    private func currentRoot(_ known: PlistSnapshot?) -> [String: PlistValue] {
        let known = known ?? state.withLock { $0.remembered }
        if let stamp = known.stamp, (try? FileStamp.of(url)) == stamp { return known.root }
        guard let current = try? store.snapshot(of: name) else { return known.root }
        // Two readers may race here; a stale winner is read again by the next read (its
        // stamp differs from the file's), so memory is never trusted beyond one `stat`.
        state.withLock { $0.remembered = current }
        return current.root
    }

    /// Reads the file again now, keeping the unwritten changes on top.
    func reload() throws {
        let current = try store.snapshot(of: name)
        state.withLock { $0.remembered = current }
    }

    /// How many times this process replaced the file for these preferences (for tests).
    var fileWrites: Int { state.withLock { $0.fileWrites } }

    // MARK: Changing

    /// Records `changes` — a set or removal of `key`, or (`key == nil`) a removal of every
    /// key — in memory (a read sees them at once) and schedules the background write that
    /// writes them with whatever else changed meanwhile.
    ///
    /// - Throws: the failure of an earlier background write, once, making no change; or
    ///   ``StoreError/Code/notRepresentable`` when a set finds another spelling of `key` in
    ///   memory.
    func change(_ changes: PendingChanges, key: String?) throws {
        let decided = try state.withLock { state -> (schedule: Bool, change: Preferences.Change)? in
            try reportFailure(&state)
            guard try admits(changes, key: key, in: state) else { return nil }
            let keys: Set<String> = key.map { [$0] } ?? effectiveKeys(state)
            state.pending.merge(newer: changes)
            defer { state.isScheduled = true }
            return (!state.isScheduled, Preferences.Change(keys: keys, isFromAnotherProcess: false))
        }
        guard let decided else { return }
        if decided.schedule {
            queue.asyncAfter(deadline: .now() + Self.writeDelay) { [self] in writeInBackground() }
        }
        publish(decided.change)
    }

    /// Writes `changes` (as in ``change(_:key:)``), with every unwritten change before them,
    /// before returning, synced as `durability` says.
    ///
    /// - Throws: as ``change(_:key:)``, or the write's ``StoreError`` (memory then keeps no
    ///   trace of `changes`; the earlier unwritten changes stay for the next write).
    func changeDurably(_ changes: PendingChanges, key: String?, durability: Durability) throws {
        let keys = try state.withLock { state -> Set<String>? in
            try reportFailure(&state)
            guard try admits(changes, key: key, in: state) else { return nil }
            return key.map { [$0] } ?? effectiveKeys(state)
        }
        guard let keys else { return }
        try write(adding: changes, durability: durability)
        publish(Preferences.Change(keys: keys, isFromAnotherProcess: false))
    }

    /// Whether `changes` of `key` are to be made: a set throws when memory holds another
    /// spelling of `key`; a removal of `key` while the unwritten changes hold another spelling
    /// is no change (that spelling is another key, which stays).
    private func admits(_ changes: PendingChanges, key: String?, in state: State) throws -> Bool {
        guard let key else { return true }
        if case .value = changes.lookup(key) {
            try checkNoLookalike(of: key, in: state)
            return true
        }
        return state.pending.lookalike(of: key) == nil && state.inFlight.lookalike(of: key) == nil
    }

    /// Writes every unwritten change now.
    ///
    /// - Throws: this write's ``StoreError``, or else the failure of an earlier background
    ///   write not yet reported; either is reported once.
    func flush() throws {
        do {
            try write()
        } catch {
            state.withLock { $0.failure = nil }   // this newer failure is the one reported
            throw error
        }
        try state.withLock { try reportFailure(&$0) }
    }

    /// Throws (and forgets) the failure of a background write not yet reported.
    private func reportFailure(_ state: inout State) throws {
        guard let failure = state.failure else { return }
        state.failure = nil
        throw failure
    }

    /// Throws when memory — the unwritten changes, or the file's root as last seen — holds a
    /// key that Swift's `==` cannot tell from `key` but whose bytes differ.
    private func checkNoLookalike(of key: String, in state: State) throws {
        if let other = state.pending.lookalike(of: key) ?? state.inFlight.lookalike(of: key) {
            var root: [String: PlistValue] = [:]
            root[other] = .bool(true)
            try PlistStore.checkNoLookalike(of: key, in: root, url: url)
        }
        if case .unchanged = state.pending.lookup(key), case .unchanged = state.inFlight.lookup(key),
           !state.pending.removesAll, !state.inFlight.removesAll {
            try PlistStore.checkNoLookalike(of: key, in: state.remembered.root, url: url)
        }
    }

    /// The keys that reads find now (for the change a removal of every key reports).
    private func effectiveKeys(_ state: State) -> Set<String> {
        var keys: Set<String> = []
        if !state.pending.removesAll && !state.inFlight.removesAll { keys.formUnion(state.remembered.root.keys) }
        if !state.pending.removesAll { keys.formUnion(state.inFlight.values.compactMap { $0.value == nil ? nil : $0.key }) }
        keys.formUnion(state.pending.values.compactMap { $0.value == nil ? nil : $0.key })
        return keys
    }

    /// The scheduled write: its failure is kept for the next call to report.
    private func writeInBackground() {
        state.withLock { $0.isScheduled = false }
        do {
            try write()
        } catch let error as StoreError {
            state.withLock { $0.failure = error }
        } catch {
            state.withLock { $0.failure = StoreError(.ioFailed, "cannot write", fileURL: url, underlyingError: error) }
        }
    }

    /// Writes the unwritten changes, then `extra` on top of them, as one merge of just those
    /// keys onto the file's current root (``PlistStore``'s optimistic update: the file's lock is
    /// held only around the check and the rename).
    ///
    /// On success memory holds the root written. On failure the unwritten changes go back
    /// under any made meanwhile, to be written by the next write, and `extra` is forgotten.
    /// Keys refused because the file holds another spelling of them are left out and reported
    /// with ``StoreError/Code/notRepresentable`` after the others are written.
    func write(adding extra: PendingChanges? = nil, durability: Durability = .fileAndFolder) throws {
        try writeLock.withLock {
            let batch = state.withLock { state -> PendingChanges in
                let batch = state.pending
                state.inFlight = batch
                state.pending = PendingChanges()
                return batch
            }
            var all = batch
            if let extra { all.merge(newer: extra) }
            guard !all.isEmpty else { return }
            var base: [String: PlistValue] = [:]
            var refused: [String] = []
            let changed: Bool
            let written: PlistSnapshot
            do {
                (changed, written) = try store.modify(name, durability: durability) { root -> Bool in
                    base = root
                    refused = all.apply(to: &root)
                    return root != base
                }
            } catch {
                state.withLock { state in
                    var back = batch
                    back.merge(newer: state.pending)
                    state.pending = back
                    state.inFlight = PendingChanges()
                }
                throw error as? StoreError ?? StoreError(.ioFailed, "cannot write", fileURL: url, underlyingError: error)
            }
            let foreign = state.withLock { state -> Set<String> in
                state.remembered = written
                state.inFlight = PendingChanges()
                if changed { state.fileWrites += 1 }
                // Everything failed before is written now; only refused keys stay reported.
                if state.failure?.code != .notRepresentable { state.failure = nil }
                guard let observed = state.observed else { return [] }
                state.observed = written
                return Self.changedKeys(from: observed.root, to: base, shownThrough: state)
            }
            if !foreign.isEmpty { publish(Preferences.Change(keys: foreign, isFromAnotherProcess: true)) }
            if let key = refused.first {
                var root: [String: PlistValue] = [:]
                if let index = base.index(forKey: key) { root[base[index].key] = .bool(true) }
                try PlistStore.checkNoLookalike(of: key, in: root, url: url)
            }
        }
    }

    // MARK: Changes

    /// Starts a change stream: of every key (`key == nil`), or of one.
    func subscribe(key: String?, pollingInterval: Duration?) -> AsyncStream<Preferences.Change> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: Preferences.Change.self, bufferingPolicy: .bufferingNewest(256))
        let id = state.withLock { state -> UInt64? in
            guard !state.isClosed else { return nil }
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = Subscriber(key: key, continuation: continuation)
            if state.observed == nil {
                state.observed = state.remembered
                startWatching(&state, pollingInterval: pollingInterval)
            }
            return state.nextSubscriber
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.subscribers[id] = nil
                if state.subscribers.isEmpty { Self.stopWatching(&state) }
            }
        }
        return stream
    }

    /// Observes the file's change signal and starts the fallback poll (under `state`'s lock).
    private func startWatching(_ state: inout State, pollingInterval: Duration?) {
        state.observation = signal.observe(on: queue) { [weak self] in self?.catchUp() }
        guard let interval = pollingInterval else { return }
        state.poller = Task.detached(priority: .utility) { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval, tolerance: interval / 2)
                guard let file = self, !Task.isCancelled else { return }
                file.queue.async { file.poll() }
            }
        }
    }

    /// Stops observing and polling (under `state`'s lock).
    private static func stopWatching(_ state: inout State) {
        state.observation?.cancel()
        state.observation = nil
        state.poller?.cancel()
        state.poller = nil
        state.observed = nil
    }

    /// The fallback poll: catches up, and observes the signal again if it could not before
    /// (the folder did not exist yet).
    private func poll() {
        state.withLock { state in
            guard state.observed != nil, state.observation == nil else { return }
            state.observation = signal.observe(on: queue) { [weak self] in self?.catchUp() }
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
                return   // unreadable for now: the next signal or poll tries again
            }
            if let stamp = current.stamp, stamp == observed.stamp { return }
            let keys = state.withLock { state -> Set<String> in
                guard state.observed != nil else { return [] }
                state.observed = current
                if current.stamp != nil { state.remembered = current }
                return Self.changedKeys(from: observed.root, to: current.root, shownThrough: state)
            }
            if !keys.isEmpty { publish(Preferences.Change(keys: keys, isFromAnotherProcess: true)) }
        }
    }

    /// The keys whose values differ between `old` and `new`, less those whose unwritten
    /// change hides the file's value from reads.
    private static func changedKeys(
        from old: [String: PlistValue], to new: [String: PlistValue], shownThrough state: State
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

    /// Hands `change` to every stream that wants it.
    func publish(_ change: Preferences.Change) {
        let subscribers = state.withLock { $0.subscribers.isEmpty ? [] : Array($0.subscribers.values) }
        for subscriber in subscribers {
            guard let key = subscriber.key else {
                subscriber.continuation.yield(change)
                continue
            }
            if change.keys.contains(key) {
                subscriber.continuation.yield(Preferences.Change(keys: [key], isFromAnotherProcess: change.isFromAnotherProcess))
            }
        }
    }

    // MARK: Closing

    /// Writes what is pending (its failure has nobody to go to) and ends the change streams:
    /// for the deinitializer of ``Preferences``.
    func close() {
        try? write()
        let subscribers = state.withLock { state -> [Subscriber] in
            state.isClosed = true
            Self.stopWatching(&state)
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }

    /// Every live file of this process, so that its exit writes what they have pending.
    private static let atExit = ExitRegistry<PreferencesFile>()

    private static let writeAtExit: Void = {
        atexit { PreferencesFile.writeEveryFile() }
    }()

    /// Writes what every file of this process has pending (at `exit`).
    static func writeEveryFile() {
        for file in atExit.live where file.process == getpid() { try? file.write() }
    }
}
