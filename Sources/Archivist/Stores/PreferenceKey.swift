/// A typed key into ``Preferences``: its name in the file and the value read when nothing
/// (or something of the wrong type) is stored.
///
/// Declare keys once, as static members, so every read and write of a setting agrees on its
/// name and type:
///
/// ```swift
/// extension PreferenceKey where Value == Bool {
///     static let firstLogin = PreferenceKey("firstLogin", default: false)
/// }
/// enum Keys {
///     static let launchCount = PreferenceKey<Int>("launchCount", default: 0)
///     static let theme = PreferenceKey<Theme>("theme", default: .light)   // a PlistConvertible enum
/// }
/// if preferences[.firstLogin] == false { showOnboarding() }
/// try preferences.set(preferences[Keys.launchCount] + 1, for: Keys.launchCount)
/// ```
public struct PreferenceKey<Value: PlistConvertible>: Sendable {
    /// The key's name in the preferences file.
    public let name: String
    /// The value read when the key is absent or holds a value of another type.
    public let defaultValue: Value

    /// Creates a key.
    ///
    /// <!-- snippet: member SettingsKeys -->
    /// ```swift
    /// static let firstLogin = PreferenceKey<Bool>("firstLogin", default: false)
    /// ```
    ///
    /// - Parameters:
    ///   - name: the name stored in the file; any string.
    ///   - defaultValue: what reads return when no usable value is stored.
    public init(_ name: String, default defaultValue: Value) {
        self.name = name
        self.defaultValue = defaultValue
    }
}
