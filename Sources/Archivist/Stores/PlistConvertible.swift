import Foundation

/// A Swift type that converts to and from a ``PlistValue``: what ``PlistStore``'s typed
/// accessors and ``Preferences`` keys read and write.
///
/// `String`, `Bool`, `Int`, `Double`, `Date`, `Data`, ``PlistValue`` itself, arrays of
/// convertible elements and string-keyed dictionaries of convertible values conform. A
/// `RawRepresentable` type with a convertible raw value (a `String` or `Int` enum) only needs
/// to declare the conformance.
///
/// Reading is strict about kinds so that a wrong type is reported rather than guessed: a
/// string never reads as a number or a Boolean. The one conversion is between numbers, and
/// only when it is exact (the real `2.0` reads as the `Int` 2, `2.5` does not).
///
/// ```swift
/// enum Theme: String, PlistConvertible { case light, dark }
/// try store.set(Theme.dark, forKey: "theme", in: "settings")
/// let theme = try store.value(forKey: "theme", in: "settings", default: Theme.light)
/// ```
public protocol PlistConvertible: Sendable {
    /// Creates a value from `plistValue`, or returns `nil` when it holds a different kind.
    init?(plistValue: PlistValue)

    /// The value as a property-list value.
    var plistValue: PlistValue { get }
}

extension PlistValue: PlistConvertible {
    /// Returns `plistValue` itself.
    public init?(plistValue: PlistValue) { self = plistValue }

    /// Returns `self`.
    public var plistValue: PlistValue { self }
}

extension String: PlistConvertible {
    /// Reads a ``PlistValue/string(_:)``.
    public init?(plistValue: PlistValue) {
        guard case .string(let value) = plistValue else { return nil }
        self = value
    }

    /// Writes a ``PlistValue/string(_:)``.
    public var plistValue: PlistValue { .string(self) }
}

extension Bool: PlistConvertible {
    /// Reads a ``PlistValue/bool(_:)``; numbers and strings are not reinterpreted.
    public init?(plistValue: PlistValue) {
        guard case .bool(let value) = plistValue else { return nil }
        self = value
    }

    /// Writes a ``PlistValue/bool(_:)``.
    public var plistValue: PlistValue { .bool(self) }
}

extension Int: PlistConvertible {
    /// Reads an ``PlistValue/int(_:)``, or a ``PlistValue/double(_:)`` holding a whole number
    /// that fits.
    public init?(plistValue: PlistValue) {
        switch plistValue {
        case .int(let value): self = value
        case .double(let value):
            guard let exact = Int(exactly: value) else { return nil }
            self = exact
        default: return nil
        }
    }

    /// Writes an ``PlistValue/int(_:)``.
    public var plistValue: PlistValue { .int(self) }
}

extension Double: PlistConvertible {
    /// Reads a ``PlistValue/double(_:)``, or an ``PlistValue/int(_:)`` that a `Double`
    /// represents exactly.
    public init?(plistValue: PlistValue) {
        switch plistValue {
        case .double(let value): self = value
        case .int(let value):
            guard let exact = Double(exactly: value) else { return nil }
            self = exact
        default: return nil
        }
    }

    /// Writes a ``PlistValue/double(_:)``.
    public var plistValue: PlistValue { .double(self) }
}

extension Date: PlistConvertible {
    /// Reads a ``PlistValue/date(_:)``.
    public init?(plistValue: PlistValue) {
        guard case .date(let value) = plistValue else { return nil }
        self = value
    }

    /// Writes a ``PlistValue/date(_:)``.
    public var plistValue: PlistValue { .date(self) }
}

extension Data: PlistConvertible {
    /// Reads a ``PlistValue/data(_:)``.
    public init?(plistValue: PlistValue) {
        guard case .data(let value) = plistValue else { return nil }
        self = value
    }

    /// Writes a ``PlistValue/data(_:)``.
    public var plistValue: PlistValue { .data(self) }
}

extension Array: PlistConvertible where Element: PlistConvertible {
    /// Reads a ``PlistValue/array(_:)`` whose every element converts to `Element`.
    public init?(plistValue: PlistValue) {
        guard case .array(let elements) = plistValue else { return nil }
        var converted: [Element] = []
        converted.reserveCapacity(elements.count)
        for element in elements {
            guard let value = Element(plistValue: element) else { return nil }
            converted.append(value)
        }
        self = converted
    }

    /// Writes a ``PlistValue/array(_:)``.
    public var plistValue: PlistValue { .array(map(\.plistValue)) }
}

extension Dictionary: PlistConvertible where Key == String, Value: PlistConvertible {
    /// Reads a ``PlistValue/dictionary(_:)`` whose every value converts to `Value`.
    public init?(plistValue: PlistValue) {
        guard case .dictionary(let entries) = plistValue else { return nil }
        var converted: [String: Value] = [:]
        converted.reserveCapacity(entries.count)
        for (key, entry) in entries {
            guard let value = Value(plistValue: entry) else { return nil }
            converted[key] = value
        }
        self = converted
    }

    /// Writes a ``PlistValue/dictionary(_:)``.
    public var plistValue: PlistValue { .dictionary(mapValues(\.plistValue)) }
}

extension PlistConvertible where Self: RawRepresentable, RawValue: PlistConvertible {
    /// Reads the raw value, then the case it names; `nil` for an unknown raw value.
    public init?(plistValue: PlistValue) {
        guard let raw = RawValue(plistValue: plistValue) else { return nil }
        self.init(rawValue: raw)
    }

    /// Writes the raw value.
    public var plistValue: PlistValue { rawValue.plistValue }
}
