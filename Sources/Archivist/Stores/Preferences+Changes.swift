import Foundation

extension Preferences {
    /// One change to a ``Preferences`` file, as ``Preferences/changes(pollingInterval:)`` and
    /// ``Preferences/changes(for:pollingInterval:)`` deliver it.
    ///
    /// ```swift
    /// for await change in preferences.changes() where change.keys.contains("theme") { applyTheme() }
    /// ```
    public struct Change: Sendable, Hashable {
        /// The names of the keys whose values may have changed (a key's stream: that key).
        public var keys: Set<String>
        /// Whether the change was made elsewhere than through this `Preferences`: by another
        /// process (or by another `Preferences` or ``PlistStore`` on the file in this one),
        /// and read from the file.
        public var isFromAnotherProcess: Bool

        /// A change of `keys`.
        ///
        /// ```swift
        /// let change = Preferences.Change(keys: ["theme"], isFromAnotherProcess: false)
        /// ```
        public init(keys: Set<String>, isFromAnotherProcess: Bool) {
            self.keys = keys
            self.isFromAnotherProcess = isFromAnotherProcess
        }
    }

    /// The changes to these preferences from now on: this instance's as they are made (when
    /// `set` or `removeValue` returns, before the file is written; every set counts, even of
    /// an equal value), and other writers' as soon as their write reaches the file and its
    /// change signal arrives (a Darwin notification on Apple platforms, `inotify` on Linux;
    /// soon after their write, which follows their `set` by the write delay of about 20 ms;
    /// the `processes` suite's latency rows guard it). The signal is named and observed when
    /// the first stream on the file starts, or — when the folder does not exist yet — by the
    /// poll once it does. Changes made through another `Preferences` on the file in this
    /// process arrive as they are made, marked ``Change/isFromAnotherProcess``. Other writers'
    /// changes to keys unwritten in this process are not reported: reads still return this
    /// process's values.
    ///
    /// ```swift
    /// for await change in preferences.changes() where change.isFromAnotherProcess {
    ///     reloadSettingsScreen()
    /// }
    /// ```
    ///
    /// Events are buffered (the newest 256 kept) until iterated; end the iteration (or cancel
    /// its task) to stop observing and polling. The stream ends when the `Preferences` is
    /// deinitialized.
    ///
    /// - Parameter pollingInterval: How often to look for other writers' changes besides the
    ///   signal, give or take half of it — for changes whose signal does not arrive (a write
    ///   from another machine to a network volume). `nil` (the default): no poll while the
    ///   change signal is observed (a Darwin notification, `inotify`); where none can be
    ///   observed (the folder missing, the system's limit on file watches reached), a poll
    ///   every second, which also observes the signal once it can and then stops.
    /// - Complexity: O(1) to subscribe. Each signal or poll makes one `stat`; one that finds
    ///   the file changed reads it, O(n) in its size.
    public func changes(pollingInterval: Duration? = nil) -> AsyncStream<Change> {
        file.subscribe(key: nil, pollingInterval: pollingInterval, owner: ObjectIdentifier(self))
    }

    /// The changes to `key` from now on, as ``changes(pollingInterval:)`` reports them, each
    /// naming `key` alone.
    ///
    /// ```swift
    /// for await _ in preferences.changes(for: Keys.theme) { apply(preferences[Keys.theme]) }
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key to follow.
    ///   - pollingInterval: as in ``changes(pollingInterval:)``.
    /// - Complexity: as ``changes(pollingInterval:)``.
    public func changes<Value>(
        for key: PreferenceKey<Value>,
        pollingInterval: Duration? = nil
    ) -> AsyncStream<Change> {
        file.subscribe(key: key.name, pollingInterval: pollingInterval, owner: ObjectIdentifier(self))
    }
}
