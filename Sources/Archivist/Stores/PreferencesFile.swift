import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one state of a preferences file in this process, which every ``Preferences`` on the
/// file shares: the root last read or written, the changes not yet written, the background
/// write that will write them, and the change streams. A set through any of them is seen by
/// the next read through every other, and by ``PlistStore`` reads of the file, as soon as it
/// returns; the disk write stays deferred and coalesced.
///
/// States are found by the file's keys (``PlistFileLock/pinnedKeys(forPlistAt:)``): its
/// lock file's device and inode, which stay the same while the plist is replaced by a rename
/// on every write and which every spelling of the path shares (the state keeps the lock file
/// open, so that the number is not reused meanwhile), and its canonical path, which names the
/// file before its folder exists. The table holds them weakly: the state lives as
/// long as a `Preferences` (or a scheduled write) holds it. Writes use the ``PlistStore`` of
/// the `Preferences` that made the state (its format and file system).
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
    /// How background writes start their ``BackgroundActivity`` (tests record it).
    let activityStarter = Locked<BackgroundActivity.Starter?>(BackgroundActivity.platformStarter)
    /// The process that made this, whose exit writes what is pending (a forked child's does not).
    private let process = getpid()
    /// The file's lock file, kept open so that the inode number this state is known by is
    /// not given to another file while it lives (-1: none could be opened).
    private let pin: Locked<Int32>

    /// How long after the first unwritten change the background write starts, collecting
    /// every change made meanwhile into one write of the file.
    static let writeDelay: DispatchTimeInterval = .milliseconds(20)

    /// How often change streams look for other writers' changes when they asked for no poll
    /// but no change signal could be observed.
    static let fallbackPollInterval: Duration = .seconds(1)

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
        /// The name of the change signal observed (``ChangeSignal/name``), while one is.
        var signalName: String?
        var poller: Task<Void, Never>?
        /// Counts the pollers started, so that an ended one does not clear its successor.
        var pollerGeneration: UInt64 = 0
    }

    /// An iterator of ``Preferences/changes(pollingInterval:)`` (`key == nil`) or of one key's
    /// changes, opened through the `Preferences` that `owner` names.
    struct Subscriber {
        var key: String?
        var owner: ObjectIdentifier
        var pollingInterval: Duration?
        var continuation: AsyncStream<Preferences.Change>.Continuation
    }

    private init(store: PlistStore, name: String, url: URL, snapshot: PlistSnapshot, pin: Int32) {
        self.store = store
        self.name = name
        self.url = url
        self.pin = Locked(pin)
        state = Locked(State(remembered: snapshot))
    }

    deinit {
        let pin = pin.withLock { $0 }
        if pin >= 0 { _ = FileSystem.posix.close(pin) }
        // Not the table: a lookup that held the last reference ends it under the table's lock.
        // Its entries go at the next open.
        Self.atExit.remove(ObjectIdentifier(self))
    }

    // MARK: Sharing

    /// A state held weakly by the table.
    private struct Entry {
        weak var file: PreferencesFile?
    }

    /// Every live state of this process, under each of its file's keys.
    private static let table = Locked<[PlistFileLock.Key: Entry]>([:])

    /// The state of the plist called `name` in `store`: the live one of this process, if
    /// any, brought up to date with the file; else a new one. Reads the file (or seeds it
    /// from the store's default for `name`) either way, and makes the file's lock file when
    /// its folder exists.
    ///
    /// - Throws: as ``PlistStore/root(of:)``.
    /// - Complexity: O(n) in the file's size; blocking file I/O.
    static func open(store: PlistStore, name: String) throws -> PreferencesFile {
        let url = try store.fileURL(for: name)
        let snapshot = try store.snapshot(of: name)
        let (keys, pin) = PlistFileLock.pinnedKeys(forPlistAt: url)
        let made = PreferencesFile(store: store, name: name, url: url, snapshot: snapshot, pin: pin)
        let (file, isNew) = table.withLock { table -> (PreferencesFile, Bool) in
            table = table.filter { $0.value.file != nil }  // the entries of states gone
            let found = Self.file(under: keys, in: table)
            let file = found ?? made
            for key in keys where table[key]?.file == nil { table[key] = Entry(file: file) }
            if let found, found.pin.withLock({ $0 }) < 0 {
                // Found by its path: the identity it is now known by too stays pinned.
                let pin = made.pin.withLock { pin in
                    defer { pin = -1 }
                    return pin
                }
                found.pin.withLock { $0 = pin }
            }
            return (file, found == nil)
        }
        if isNew {
            _ = writeAtExit
            atExit.add(file)
        } else {
            file.state.withLock { $0.remembered = snapshot }
        }
        return file
    }

    /// The live state of the plist at `url` in this process, if any.
    ///
    /// - Complexity: O(1) when no `Preferences` is open; else one `stat` and a `realpath`.
    static func live(forPlistAt url: URL) -> PreferencesFile? {
        guard !table.withLock({ $0.isEmpty }) else { return nil }
        let keys = PlistFileLock.keys(forPlistAt: url)
        return table.withLock { Self.file(under: keys, in: $0) }
    }

    /// The live state `table` holds under the first of `keys` that has one.
    private static func file(under keys: [PlistFileLock.Key], in table: [PlistFileLock.Key: Entry]) -> PreferencesFile?
    {
        for key in keys {
            if let file = table[key]?.file { return file }
        }
        return nil
    }

    /// Applies the changes of the plist at `url` that its live state in this process holds
    /// unwritten, if any, to `root`, so that a ``PlistStore`` read sees what a `Preferences`
    /// set.
    static func applyUnwritten(to root: inout [String: PlistValue], forPlistAt url: URL) {
        guard let file = live(forPlistAt: url) else { return }
        let (inFlight, pending) = file.state.withLock { ($0.inFlight, $0.pending) }
        _ = inFlight.apply(to: &root)
        _ = pending.apply(to: &root)
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
    /// key — made through the `Preferences` that `owner` names, in memory (a read through any
    /// `Preferences` on the file sees them at once) and schedules the background write that
    /// writes them with whatever else changed meanwhile.
    ///
    /// - Throws: the failure of an earlier background write, once, making no change; or
    ///   ``StoreError/Code/notRepresentable`` when a set finds another spelling of `key` in
    ///   memory.
    func change(_ changes: PendingChanges, key: String?, by owner: ObjectIdentifier) throws {
        let decided = try state.withLock { state -> (schedule: Bool, keys: Set<String>)? in
            try reportFailure(&state)
            guard try admits(changes, key: key, in: state) else { return nil }
            let keys: Set<String> = key.map { [$0] } ?? effectiveKeys(state)
            state.pending.merge(newer: changes)
            defer { state.isScheduled = true }
            return (!state.isScheduled, keys)
        }
        guard let decided else { return }
        if decided.schedule {
            queue.asyncAfter(deadline: .now() + Self.writeDelay) { [self] in writeInBackground() }
        }
        publish(decided.keys, from: owner)
    }

    /// Writes `changes` (as in ``change(_:key:)``), with every unwritten change before them,
    /// before returning, synced as `durability` says.
    ///
    /// - Throws: as ``change(_:key:)``, or the write's ``StoreError`` (memory then keeps no
    ///   trace of `changes`; the earlier unwritten changes stay for the next write).
    func changeDurably(
        _ changes: PendingChanges,
        key: String?,
        durability: Durability,
        by owner: ObjectIdentifier
    ) throws {
        let keys = try state.withLock { state -> Set<String>? in
            try reportFailure(&state)
            guard try admits(changes, key: key, in: state) else { return nil }
            return key.map { [$0] } ?? effectiveKeys(state)
        }
        guard let keys else { return }
        try write(adding: changes, durability: durability)
        publish(keys, from: owner)
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
            state.withLock { $0.failure = nil }  // this newer failure is the one reported
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
            !state.pending.removesAll, !state.inFlight.removesAll
        {
            try PlistStore.checkNoLookalike(of: key, in: state.remembered.root, url: url)
        }
    }

    /// The keys that reads find now (for the change a removal of every key reports).
    private func effectiveKeys(_ state: State) -> Set<String> {
        var keys: Set<String> = []
        if !state.pending.removesAll && !state.inFlight.removesAll { keys.formUnion(state.remembered.root.keys) }
        if !state.pending.removesAll {
            keys.formUnion(state.inFlight.values.compactMap { $0.value == nil ? nil : $0.key })
        }
        keys.formUnion(state.pending.values.compactMap { $0.value == nil ? nil : $0.key })
        return keys
    }

    /// The scheduled write, inside a ``BackgroundActivity`` (it takes the file's lock, around
    /// its rename): its failure is kept for the next call to report.
    private func writeInBackground() {
        state.withLock { $0.isScheduled = false }
        BackgroundActivity.run("Archivist: writing preferences", starter: activityStarter.withLock { $0 }) { _ in
            do {
                try write()
            } catch let error as StoreError {
                state.withLock { $0.failure = error }
            } catch {
                state.withLock {
                    $0.failure = StoreError(.ioFailed, "cannot write", fileURL: url, underlyingError: error)
                }
            }
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
                throw error as? StoreError
                    ?? StoreError(.ioFailed, "cannot write", fileURL: url, underlyingError: error)
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
            if !foreign.isEmpty { publish(foreign, from: nil) }
            if let key = refused.first {
                var root: [String: PlistValue] = [:]
                if let index = base.index(forKey: key) { root[base[index].key] = .bool(true) }
                try PlistStore.checkNoLookalike(of: key, in: root, url: url)
            }
        }
    }

    // MARK: Closing

    /// Writes what is pending (its failure has nobody to go to) and ends the change streams
    /// opened through the `Preferences` that `owner` names: for its deinitializer. The state
    /// itself goes with the last `Preferences` holding it.
    func close(owner: ObjectIdentifier) {
        try? write()
        let finished = state.withLock { state -> [Subscriber] in
            let mine = state.subscribers.filter { $0.value.owner == owner }
            for id in mine.keys { state.subscribers[id] = nil }
            if state.subscribers.isEmpty { Self.stopWatching(&state) }
            return Array(mine.values)
        }
        for subscriber in finished { subscriber.continuation.finish() }
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
