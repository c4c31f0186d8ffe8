#if canImport(Observation)
import Observation

/// One preference as an `@Observable` model, for SwiftUI views that update when the
/// preference changes — in this process, or in another one (an app's widget or extension
/// sharing the file): what `@AppStorage` does for `UserDefaults`.
///
/// ``value`` reads the key's current value; setting it writes through
/// ``Preferences/set(_:for:)``. The model follows ``Preferences/changes(for:pollingInterval:)``
/// and updates ``value`` (notifying its observers) when the key changes through any
/// `Preferences`, in any process. It holds the observation weakly: releasing the model ends
/// it, and its change stream with it.
///
/// ```swift
/// struct ThemePicker: View {
///     @State var theme = ObservedPreference(Keys.theme, in: preferences)
///     var body: some View {
///         Picker("Theme", selection: $theme.value) {
///             Text("Light").tag(Theme.light)
///             Text("Dark").tag(Theme.dark)
///         }
///     }
/// }
/// ```
///
/// Main actor only, like the views that show it.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor @Observable
public final class ObservedPreference<Value: PlistConvertible> {
    /// The preferences the value is read from and written to.
    ///
    /// ```swift
    /// try theme.preferences.flush()
    /// ```
    public let preferences: Preferences
    /// The key observed.
    ///
    /// ```swift
    /// print(theme.key.name)   // "theme"
    /// ```
    public let key: PreferenceKey<Value>
    /// The value as last read (observed by ``value``).
    private var current: Value
    /// The error of the last write through ``value``'s setter, or `nil` once a write
    /// succeeds: a setter cannot throw, so a failure is kept here (use ``set(_:)`` to have it
    /// thrown).
    ///
    /// ```swift
    /// if let error = theme.lastError { showError(error) }
    /// ```
    public private(set) var lastError: (any Error)?
    /// The task following the key's changes; cancelled on `deinit`.
    private let observation = ObservationTask()

    /// The key's current value (its default when absent or stored with another type); set it
    /// to write the key through ``Preferences/set(_:for:)``.
    ///
    /// Reading it in a SwiftUI `body` (or in `withObservationTracking`) makes the view update
    /// when the key changes, here or in another process. A write that fails leaves the value
    /// as stored and records the error in ``lastError``.
    ///
    /// <!-- snippet: skip SwiftUI exists on Apple platforms only -->
    /// ```swift
    /// Toggle("Dark mode", isOn: $darkMode.value)
    /// ```
    ///
    /// - Complexity: O(1) to read, from memory; a write as ``Preferences/set(_:for:)``.
    public var value: Value {
        get { current }
        set {
            do { try set(newValue) } catch {}
        }
    }

    /// Observes `key` in `preferences`.
    ///
    /// ```swift
    /// let theme = ObservedPreference(Keys.theme, in: preferences)
    /// ```
    ///
    /// - Parameters:
    ///   - key: the key to follow.
    ///   - preferences: the preferences holding it.
    ///   - pollingInterval: as in ``Preferences/changes(for:pollingInterval:)``: how often to
    ///     look for other processes' changes besides the change signal; `nil` (the default)
    ///     polls only where no signal can be observed, every second.
    /// - Complexity: O(1), plus one read of the key.
    public init(_ key: PreferenceKey<Value>, in preferences: Preferences, pollingInterval: Duration? = nil) {
        // Subscribe before reading, so that no change falls between the read and the stream.
        let changes = preferences.changes(for: key, pollingInterval: pollingInterval)
        self.preferences = preferences
        self.key = key
        self.current = preferences[key]
        observation.follow(changes, updating: self) { $0.reload() }
    }

    deinit {
        observation.cancel()
    }

    /// Writes `newValue` for the key through ``Preferences/set(_:for:)``, throwing its error.
    ///
    /// ```swift
    /// try theme.set(.dark)
    /// ```
    ///
    /// - Parameter newValue: the value to store.
    /// - Throws: as ``Preferences/set(_:for:)``; the value then stays as stored, and the error
    ///   is also kept in ``lastError``.
    /// - Complexity: as ``Preferences/set(_:for:)``.
    public func set(_ newValue: Value) throws {
        do {
            try preferences.set(newValue, for: key)
        } catch {
            lastError = error
            reload()
            throw error
        }
        if lastError != nil { lastError = nil }
        reload()
    }

    /// Removes the key's stored value through ``Preferences/removeValue(for:)``, so that
    /// ``value`` reads as the key's default.
    ///
    /// <!-- snippet: skip SwiftUI exists on Apple platforms only -->
    /// ```swift
    /// Button("Reset") { try? theme.reset() }
    /// ```
    ///
    /// - Throws: as ``Preferences/removeValue(for:)``; the error is also kept in
    ///   ``lastError``.
    /// - Complexity: as ``Preferences/removeValue(for:)``.
    public func reset() throws {
        do {
            try preferences.removeValue(for: key)
        } catch {
            lastError = error
            throw error
        }
        if lastError != nil { lastError = nil }
        reload()
    }

    /// Reads the key again, changing ``value`` (and notifying its observers) only when the
    /// stored value differs.
    private func reload() {
        let latest = preferences[key]
        if latest.plistValue != current.plistValue { current = latest }
    }
}
#endif
