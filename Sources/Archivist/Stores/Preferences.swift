import Foundation

/// Typed settings persisted in one property-list file: the `NSUserDefaults` job of seed 003
/// (`[userDefaults setBool:YES forKey:@"firstLogin"]`) with keys that carry their type and
/// default.
///
/// The whole file is loaded when the preferences are opened and kept in memory. A read costs
/// one `stat` of the file and a dictionary lookup: when the file's stamp (device, inode,
/// size, modification time to the nanosecond) is the one last seen, memory answers; when
/// another process, or another `Preferences` or ``PlistStore`` on the file, changed it, the
/// file is read again first — a value whose `set` has returned anywhere is what the next read
/// returns. Each write goes through to the file at once (atomically, through ``PlistStore``,
/// under the file's cross-process lock) and only then updates memory, so there is no
/// `synchronize()` to forget; if the write fails, memory keeps the old value too.
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
/// Writes hold the file's lock (see ``PlistStore``), so a write of one key never loses
/// another's; reads never wait for a writer. When the file cannot be read (another writer
/// left it corrupt), reads serve the values last read and the next write throws.
///
/// ```swift
/// let preferences = try Preferences(store: PlistStore(directory: libraryPreferences, format: .binary))
/// if preferences[.firstLogin] == false {
///     showOnboarding()
///     try preferences.set(true, for: .firstLogin)
/// }
/// ```
public final class Preferences: Sendable {
    /// The store holding the preferences file.
    public let store: PlistStore
    /// The name of the preferences file in ``store``.
    public let name: String
    /// The file the preferences live in, as in `print(preferences.fileURL.path)`.
    public let fileURL: URL
    /// The file's root as last read or written, with the file's stamp then.
    private let remembered: Locked<PlistSnapshot>

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
        self.fileURL = try store.fileURL(for: name)
        self.remembered = Locked(try store.snapshot(of: name))
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
        guard let stored = PlistStore.entry(key.name, in: currentRoot()) else { return key.defaultValue }
        return Value(plistValue: stored) ?? key.defaultValue
    }

    /// Returns the stored value of `key` strictly: `nil` when absent, an error when it has
    /// another type.
    ///
    /// ```swift
    /// do { _ = try preferences.storedValue(for: .firstLogin) }
    /// catch let error as StoreError where error.code == .typeMismatch { … }
    /// ```
    ///
    /// - Throws: ``StoreError`` with code ``StoreError/Code/typeMismatch``.
    /// - Complexity: as ``value(for:)``.
    public func storedValue<Value>(for key: PreferenceKey<Value>) throws -> Value? {
        guard let stored = PlistStore.entry(key.name, in: currentRoot()) else { return nil }
        return try PlistStore.convert(stored, to: Value.self, key: key.name, url: fileURL)
    }

    /// Stores `value` for `key`, writing the file before returning.
    ///
    /// ```swift
    /// try preferences.set(true, for: .firstLogin)
    /// ```
    ///
    /// - Throws: ``StoreError``: `corrupt` when the file was damaged since it was opened,
    ///   `notRepresentable` when the file holds another spelling of the key's name (equal as
    ///   a `String`, different in bytes; see "Keys are bytes" in ``PlistStore``),
    ///   `permissionDenied`, `noSpace` or `ioFailed`; memory then keeps the old value.
    /// - Complexity: O(n) in the file's size; blocking file I/O with an `fsync`.
    public func set<Value>(_ value: Value, for key: PreferenceKey<Value>) throws {
        try change { root in
            try PlistStore.checkNoLookalike(of: key.name, in: root, url: fileURL)
            root[key.name] = value.plistValue
        }
    }

    /// Removes the stored value of `key`, so that it reads as its default again.
    ///
    /// ```swift
    /// try preferences.removeValue(for: .firstLogin)
    /// ```
    ///
    /// - Throws: as ``set(_:for:)``.
    /// - Complexity: O(n) in the file's size; blocking file I/O with an `fsync` when the key
    ///   was present.
    public func removeValue<Value>(for key: PreferenceKey<Value>) throws {
        try change { root in
            if PlistStore.entry(key.name, in: root) != nil { root[key.name] = nil }
        }
    }

    /// Removes every stored value, so that every key reads as its default.
    ///
    /// ```swift
    /// try preferences.removeAll()   // "reset settings"
    /// ```
    ///
    /// - Throws: as ``set(_:for:)``.
    /// - Complexity: O(n) in the file's size; blocking file I/O with an `fsync`.
    public func removeAll() throws {
        try change { $0.removeAll() }
    }

    /// Re-reads the file now, reporting an error that reads hide (they serve the values last
    /// read when the file cannot be read). Reads already notice changes made by others, so
    /// this is not needed to see them.
    ///
    /// ```swift
    /// try preferences.reload()
    /// ```
    ///
    /// - Throws: as ``init(store:name:)``; memory keeps the old values.
    /// - Complexity: as ``value(for:)``.
    public func reload() throws {
        let current = try store.snapshot(of: name)
        remembered.withLock { $0 = current }
    }

    /// The file's root: from memory when the file's stamp is the one last seen, else read
    /// (or, when it cannot be read, the root last read).
    private func currentRoot() -> [String: PlistValue] {
        let known = remembered.withLock { $0 }
        if let stamp = known.stamp, (try? FileStamp.of(fileURL)) == stamp { return known.root }
        guard let current = try? store.snapshot(of: name) else { return known.root }
        // Two readers may race here; a stale winner is read again by the next read (its
        // stamp differs from the file's), so memory is never trusted beyond one `stat`.
        remembered.withLock { $0 = current }
        return current.root
    }

    /// Applies `body` to the file's root through the store, then remembers the written root.
    private func change(_ body: (inout [String: PlistValue]) throws -> Void) throws {
        let written = try store.modify(name) { root in try body(&root) }.snapshot
        remembered.withLock { $0 = written }
    }
}
