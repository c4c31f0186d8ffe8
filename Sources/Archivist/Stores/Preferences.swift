import Foundation

/// Typed settings persisted in one property-list file: the `NSUserDefaults` job of seed 003
/// (`[userDefaults setBool:YES forKey:@"firstLogin"]`) with keys that carry their type and
/// default.
///
/// The whole file is loaded when the preferences are opened and kept in memory. A read costs
/// one `stat` of the file and a dictionary lookup: when the file's stamp (device, inode,
/// size, modification time to the nanosecond) is the one last seen, memory answers; when
/// another process, or a ``PlistStore`` write, changed it, the file is read again first.
///
/// **One state per file in a process.** Every `Preferences` on one file in a process shares
/// one in-memory state, as `UserDefaults` instances do, whatever path spelling opened it (a
/// symbolic link to the folder, another case on a case-insensitive volume): a set through
/// one is read through every other, and by every ``PlistStore`` read of the file, as soon as
/// it returns. The state is found by the file's lock file's device and inode (and, before
/// its folder exists, by its canonical path); its writes go through the store of the first
/// `Preferences` opened on the file, and it goes away with the last one.
///
/// **Writes return at once.** ``set(_:for:)``, ``removeValue(for:)`` and ``removeAll()``
/// change memory — a read in this process right after sees the new value — and leave the file
/// to a background write, which starts about 20 ms after the first unwritten change and writes
/// every change made by then in one go (a thousand sets in a loop make a handful of writes).
/// Other processes see a change once it is written: typically just after that delay, and at
/// once after `flush()`. Changes still unwritten are written
/// when the `Preferences` is deinitialized and when the process calls `exit` (or returns from
/// `main`); a process that is killed (`SIGKILL`, a crash, iOS terminating a suspended app)
/// loses the changes of its last 20 ms or so, never more, and never leaves a damaged file.
/// Call `flush()` where that matters — before suspension, before a hand-off to another
/// process — or write the key with a ``Durability`` (``set(_:for:durability:)``): that call
/// writes the file, synced as asked, before it returns.
///
/// **Nothing is lost across processes.** A write merges just the keys changed here onto the
/// file's current contents, under the file's cross-process lock, held only around the check
/// and rename (see ``PlistStore``): another process's writes to other keys survive, and the
/// last writer of a key wins.
///
/// **Errors of background writes are kept.** When a background write fails (a full disk, a
/// read-only or damaged file), memory keeps the new values, so reads stay consistent, and the
/// changes stay unwritten, to be tried again by the next write. The failure is thrown, once,
/// by the next `flush()` — or by the next `set`, `removeValue` or `removeAll`, which then
/// makes no change. A key refused because the file meanwhile holds another spelling of it
/// (see "Keys are bytes") is dropped from memory and reported the same way.
///
/// **Change streams.** ``changes(pollingInterval:)`` and ``changes(for:pollingInterval:)``
/// report the keys changed by this instance as they change, and those changed elsewhere
/// (``Change/isFromAnotherProcess``) as soon as the file's change signal arrives.
///
/// **Wrong types read as the default.** A value of another type than the key's (left by an
/// older app version, or written through another key of the same name) reads as the key's
/// default, as `NSUserDefaults` does, so a setting never crashes or blocks a screen. Use
/// ``storedValue(for:)`` to see the stored value strictly, with a thrown
/// ``StoreError/Code/typeMismatch``. The next ``set(_:for:)`` replaces the stray value.
///
/// **Keys are bytes**, as in ``PlistStore``: a key whose name is another spelling of a stored
/// one ("é" as U+00E9 and as "e" + U+0301) reads as its default, and setting it throws
/// ``StoreError/Code/notRepresentable`` rather than overwrite the stored one's value.
///
/// **Threads and processes.** Any thread or task, and any number of processes (an app and
/// its extensions sharing an app-group container), may read and write one preferences file.
/// Reads never wait for a writer. When the file cannot be read (another writer left it
/// corrupt), reads serve the values last read and the next write fails.
///
/// ```swift
/// let preferences = try Preferences(store: PlistStore(directory: libraryPreferences, format: .binary))
/// if preferences[.firstLogin] == false {
///     showOnboarding()
///     try preferences.set(true, for: .firstLogin)                        // returns at once
///     try preferences.set(true, for: .acceptedTerms, durability: .file)  // on disk on return
/// }
/// ```
public final class Preferences: Sendable {
    /// The store holding the preferences file.
    public let store: PlistStore
    /// The name of the preferences file in ``store``.
    public let name: String
    /// The file the preferences live in, as in `print(preferences.fileURL.path)`.
    public let fileURL: URL
    /// The file's root as last read or written, the unwritten changes, the background write.
    let file: PreferencesFile

    /// Opens the preferences kept in the plist called `name` of `store`, reading the file
    /// (or seeding it from the store's default for `name`).
    ///
    /// ```swift
    /// let preferences = try Preferences(store: store, name: "Settings")
    /// ```
    ///
    /// - Parameters:
    ///   - store: the store holding the file.
    ///   - name: the plist's name; `Preferences` by default.
    /// - Throws: ``StoreError``: `corrupt` when the file is not a readable plist (delete it
    ///   with ``PlistStore/removeFile(named:)`` to start over), `notRepresentable` when it
    ///   holds what ``PlistStore/root(of:)`` refuses (such as two spellings of one key),
    ///   `invalidName`, `permissionDenied` or `ioFailed`.
    /// - Complexity: O(n) in the file's size; blocking file I/O.
    public init(store: PlistStore, name: String = "Preferences") throws {
        self.store = store
        self.name = name
        file = try PreferencesFile.open(store: store, name: name)
        fileURL = try store.fileURL(for: name)
    }

    /// Writes the changes still unwritten (a failure then has nobody to be reported to) and
    /// ends the change streams opened through this instance.
    deinit {
        file.close(owner: ObjectIdentifier(self))
    }

    /// The value of `key`, or its default when it is absent or stored with another type.
    ///
    /// ```swift
    /// let isFirstLogin = preferences[.firstLogin]
    /// ```
    ///
    /// - Complexity: O(1) expected: one `stat`; O(n) in the file's size when it changed.
    public subscript<Value>(key: PreferenceKey<Value>) -> Value {
        value(for: key)
    }

    /// Returns the value of `key`, or its default when it is absent or stored with another
    /// type.
    ///
    /// ```swift
    /// let launches = preferences.value(for: Keys.launchCount)
    /// ```
    ///
    /// - Complexity: O(1) expected (O(n) for an array or dictionary value of n elements): one
    ///   `stat`; O(n) in the file's size when it changed.
    public func value<Value>(for key: PreferenceKey<Value>) -> Value {
        guard let stored = file.value(key.name) else { return key.defaultValue }
        return Value(plistValue: stored) ?? key.defaultValue
    }

    /// Returns the stored value of `key` strictly: `nil` when absent, an error when it has
    /// another type.
    ///
    /// ```swift
    /// do { _ = try preferences.storedValue(for: .firstLogin) }
    /// catch let error as StoreError where error.code == .typeMismatch { print(error) }
    /// ```
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/typeMismatch``.
    /// - Complexity: as ``value(for:)``.
    public func storedValue<Value>(for key: PreferenceKey<Value>) throws -> Value? {
        guard let stored = file.value(key.name) else { return nil }
        return try PlistStore.convert(stored, to: Value.self, key: key.name, url: fileURL)
    }

    /// Stores `value` for `key` in memory at once, and in the file shortly after, on a
    /// background queue (see "Writes return at once" above).
    ///
    /// ```swift
    /// try preferences.set(true, for: .firstLogin)
    /// ```
    ///
    /// - Throws: ``StoreError``: the failure of an earlier background write not yet reported
    ///   (see "Errors of background writes are kept" above), or `notRepresentable` when memory
    ///   holds another spelling of the key's name (equal as a `String`, different in bytes;
    ///   see "Keys are bytes" in ``PlistStore``). A call that throws makes no change.
    /// - Complexity: O(1) expected, plus O(n) in the key's length; no file I/O.
    public func set<Value>(_ value: Value, for key: PreferenceKey<Value>) throws {
        var change = PendingChanges()
        change.record(key.name, value.plistValue)
        try file.change(change, key: key.name, by: ObjectIdentifier(self))
    }

    /// Stores `value` for `key` and writes the file before returning, synced as `durability`
    /// says: for the keys that must be on disk once the call returns. Changes made earlier
    /// and not yet written are written with it.
    ///
    /// ```swift
    /// try preferences.set(true, for: .acceptedTerms, durability: .fileAndFolder)
    /// ```
    ///
    /// - Parameters:
    ///   - value: the value to store.
    ///   - key: the preference it is stored for.
    ///   - durability: how far the file is synced (``Durability``): `.fileAndFolder` is what
    ///     the background writes use; `.fullSync` survives a power loss once the call returns
    ///     on Apple devices too; `.none` writes without syncing.
    /// - Throws: ``StoreError``: as ``set(_:for:)``; `corrupt` when the file was damaged
    ///   since it was opened, `permissionDenied`, `noSpace` or `ioFailed` when the write
    ///   fails — memory then keeps the old value; `notRepresentable` when the file holds
    ///   another spelling of the key's name (the other changes are written).
    /// - Complexity: O(n) in the file's size; blocking file I/O with the syncs `durability`
    ///   asks for.
    public func set<Value>(_ value: Value, for key: PreferenceKey<Value>, durability: Durability) throws {
        var change = PendingChanges()
        change.record(key.name, value.plistValue)
        try file.changeDurably(change, key: key.name, durability: durability, by: ObjectIdentifier(self))
    }

    /// Removes the stored value of `key` in memory at once, and in the file shortly after, so
    /// that it reads as its default again.
    ///
    /// ```swift
    /// try preferences.removeValue(for: .firstLogin)
    /// ```
    ///
    /// - Throws: as ``set(_:for:)``.
    /// - Complexity: O(1) expected; no file I/O.
    public func removeValue<Value>(for key: PreferenceKey<Value>) throws {
        var change = PendingChanges()
        change.record(key.name, nil)
        try file.change(change, key: key.name, by: ObjectIdentifier(self))
    }

    /// Removes the stored value of `key` and writes the file before returning, synced as
    /// `durability` says.
    ///
    /// ```swift
    /// try preferences.removeValue(for: .sessionToken, durability: .file)
    /// ```
    ///
    /// - Throws: as ``set(_:for:durability:)``.
    /// - Complexity: as ``set(_:for:durability:)``.
    public func removeValue<Value>(for key: PreferenceKey<Value>, durability: Durability) throws {
        var change = PendingChanges()
        change.record(key.name, nil)
        try file.changeDurably(change, key: key.name, durability: durability, by: ObjectIdentifier(self))
    }

    /// Removes every stored value in memory at once, and in the file shortly after, so that
    /// every key reads as its default. Keys other processes set after the file is written
    /// stay.
    ///
    /// ```swift
    /// try preferences.removeAll()   // "reset settings"
    /// ```
    ///
    /// - Throws: ``StoreError``: the failure of an earlier background write not yet
    ///   reported; the call then makes no change.
    /// - Complexity: O(n) in the number of keys; no file I/O.
    public func removeAll() throws {
        try file.change(PendingChanges(removesAll: true), key: nil, by: ObjectIdentifier(self))
    }

    /// Removes every stored value and writes the file before returning, synced as
    /// `durability` says.
    ///
    /// ```swift
    /// try preferences.removeAll(durability: .fileAndFolder)
    /// ```
    ///
    /// - Throws: as ``set(_:for:durability:)``.
    /// - Complexity: as ``set(_:for:durability:)``.
    public func removeAll(durability: Durability) throws {
        try file.changeDurably(
            PendingChanges(removesAll: true),
            key: nil,
            durability: durability,
            by: ObjectIdentifier(self)
        )
    }

    /// Writes every change not yet written and returns when it is in the file (synced as
    /// ``Durability/fileAndFolder``), visible to every process.
    ///
    /// ```swift
    /// try preferences.set(3, for: Keys.launchCount)
    /// try preferences.flush()   // before the app is suspended, or another process reads
    /// ```
    ///
    /// - Throws: ``StoreError``: the write's failure (the changes then stay in memory,
    ///   unwritten, for the next write), or else the failure of an earlier background write
    ///   not yet reported; each is reported once.
    /// - Complexity: O(n) in the file's size when changes are pending, blocking file I/O with
    ///   two syncs; O(1) otherwise.
    public func flush() throws {
        try file.flush()
    }

    /// Writes every change not yet written, as `flush()`, without blocking the caller.
    ///
    /// ```swift
    /// try await preferences.flush()
    /// ```
    ///
    /// - Throws: as `flush()`.
    /// - Complexity: as `flush()`, on a background queue.
    public func flush() async throws {
        let file = file
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(with: Result { try file.flush() })
            }
        }
    }

    /// Re-reads the file now, reporting an error that reads hide (they serve the values last
    /// read when the file cannot be read). Reads already notice changes made by others, so
    /// this is not needed to see them. Changes not yet written stay on top.
    ///
    /// ```swift
    /// try preferences.reload()
    /// ```
    ///
    /// - Throws: as ``init(store:name:)``; memory keeps the old values.
    /// - Complexity: as ``value(for:)``.
    public func reload() throws {
        try file.reload()
    }

    /// How many times this `Preferences` replaced its file (tests count the writes that
    /// coalesced sets make).
    package var fileWrites: Int { file.fileWrites }
}
