import Foundation

/// A property-list value: the eight kinds a plist file can hold, as a `Sendable` enum instead
/// of `Any`.
///
/// Nested dictionaries and arrays are ordinary cases, so they are stored as real plist
/// containers (no JSON-string workaround), and any `PlistValue` can be written: there is
/// nothing to check at run time. Integers and reals stay distinct, as they are in the file;
/// ``PlistConvertible`` converts between them when no precision is lost.
///
/// Literals build values directly:
///
/// ```swift
/// let task: PlistValue = [
///     "id": "t1", "name": "Reading", "diligenceTime": 25, "isRestMode": false,
///     "tags": ["focus", "books"], "alert": ["hour": 7, "minute": 30],
/// ]
/// let hour = task["alert"]?["hour"]?.intValue   // 7
/// ```
///
/// XML plists store dates to the whole second; binary plists keep the full `Date`.
public enum PlistValue: Sendable, Hashable {
    /// A `<string>`.
    case string(String)
    /// An `<integer>` that fits in `Int`.
    case int(Int)
    /// A `<real>`.
    case double(Double)
    /// A `<true/>` or `<false/>`.
    case bool(Bool)
    /// A `<date>`.
    case date(Date)
    /// A `<data>` blob.
    case data(Data)
    /// An `<array>`.
    case array([PlistValue])
    /// A `<dict>`; plist keys are always strings.
    case dictionary([String: PlistValue])
}

// MARK: - Accessors

extension PlistValue {
    /// The string, or `nil` when this is not a ``string(_:)``.
    ///
    /// ```swift
    /// let name = value.stringValue ?? "untitled"
    /// ```
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The integer, or `nil` when this is neither an ``int(_:)`` nor a ``double(_:)`` holding a
    /// whole number that fits in `Int`.
    ///
    /// ```swift
    /// let minutes = value.intValue ?? 25
    /// ```
    public var intValue: Int? { Int(plistValue: self) }

    /// The number as a `Double`, or `nil` when this is neither an ``int(_:)`` nor a
    /// ``double(_:)``.
    ///
    /// ```swift
    /// let ratio = value.doubleValue ?? 1
    /// ```
    public var doubleValue: Double? { Double(plistValue: self) }

    /// The Boolean, or `nil` when this is not a ``bool(_:)`` (numbers and strings are not
    /// reinterpreted).
    ///
    /// ```swift
    /// let enabled = value.boolValue ?? false
    /// ```
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The date, or `nil` when this is not a ``date(_:)``.
    ///
    /// ```swift
    /// let alertTime = value.dateValue
    /// ```
    public var dateValue: Date? {
        if case .date(let value) = self { value } else { nil }
    }

    /// The bytes, or `nil` when this is not a ``data(_:)``.
    ///
    /// ```swift
    /// let image = value.dataValue ?? Data()
    /// ```
    public var dataValue: Data? {
        if case .data(let value) = self { value } else { nil }
    }

    /// The elements, or `nil` when this is not an ``array(_:)``.
    ///
    /// ```swift
    /// let tags = value.arrayValue?.compactMap(\.stringValue) ?? []
    /// ```
    public var arrayValue: [PlistValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    /// The entries, or `nil` when this is not a ``dictionary(_:)``.
    ///
    /// ```swift
    /// let keys = value.dictionaryValue?.keys.sorted() ?? []
    /// ```
    public var dictionaryValue: [String: PlistValue]? {
        if case .dictionary(let value) = self { value } else { nil }
    }

    /// The entry for `key` when this is a dictionary, otherwise `nil`.
    ///
    /// ```swift
    /// let hour = task["alert"]?["hour"]?.intValue
    /// ```
    ///
    /// - Complexity: O(1) expected.
    public subscript(key: String) -> PlistValue? {
        dictionaryValue?[key]
    }

    /// The element at `index` when this is an array and the index is in range, otherwise `nil`.
    ///
    /// ```swift
    /// let firstTag = task["tags"]?[0]?.stringValue
    /// ```
    ///
    /// - Complexity: O(1).
    public subscript(index: Int) -> PlistValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// A short name for the kind of value, as used in error messages: `string`, `integer`,
    /// `real`, `bool`, `date`, `data`, `array` or `dictionary`.
    ///
    /// ```swift
    /// print("found a \(value.kindName)")
    /// ```
    public var kindName: String {
        switch self {
        case .string: "string"
        case .int: "integer"
        case .double: "real"
        case .bool: "bool"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }
}

// MARK: - Literals

extension PlistValue: ExpressibleByStringLiteral {
    /// Creates a ``string(_:)`` from a literal: `let value: PlistValue = "hello"`.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension PlistValue: ExpressibleByIntegerLiteral {
    /// Creates an ``int(_:)`` from a literal: `let value: PlistValue = 42`.
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension PlistValue: ExpressibleByFloatLiteral {
    /// Creates a ``double(_:)`` from a literal: `let value: PlistValue = 2.5`.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension PlistValue: ExpressibleByBooleanLiteral {
    /// Creates a ``bool(_:)`` from a literal: `let value: PlistValue = true`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension PlistValue: ExpressibleByArrayLiteral {
    /// Creates an ``array(_:)`` from a literal: `let value: PlistValue = [1, "two"]`.
    public init(arrayLiteral elements: PlistValue...) { self = .array(elements) }
}

extension PlistValue: ExpressibleByDictionaryLiteral {
    /// Creates a ``dictionary(_:)`` from a literal: `let value: PlistValue = ["a": 1]`.
    ///
    /// A repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, PlistValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension PlistValue: CustomStringConvertible {
    /// A compact, JSON-like rendering for logs: `{"a": 1, "b": [true, "x"]}`.
    public var description: String {
        switch self {
        case .string(let value): String(reflecting: value)
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        case .date(let value): value.formatted(.iso8601)
        case .data(let value): "<\(value.count) bytes>"
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let entries):
            "{"
                + entries.sorted { $0.key < $1.key }
                .map { "\(String(reflecting: $0.key)): \($0.value)" }
                .joined(separator: ", ") + "}"
        }
    }
}
