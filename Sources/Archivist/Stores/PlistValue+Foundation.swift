import Foundation

extension PlistValue {
    /// Converts a Foundation property-list object (`String`, `NSNumber`, `Bool`, `Date`,
    /// `Data`, arrays and string-keyed dictionaries of those, Swift or `NS` classes alike) into
    /// a ``PlistValue``.
    ///
    /// This is the bridge for code that still holds `Any`, such as the seeds'
    /// `[String: Any]`. Anything else, including `NSNull`, an optional that is `nil`, a
    /// dictionary with a non-string key, or an unsigned integer above `Int.max`, throws and
    /// names the offending value's path.
    ///
    /// ```swift
    /// let legacy: [String: Any] = ["id": 2, "tags": ["a", "b"], "alert": ["hour": 7]]
    /// let value = try PlistValue(propertyList: legacy)
    /// try store.set(value, forKey: "task", in: "taskData")
    /// ```
    ///
    /// - Parameter object: a property-list object.
    /// - Throws: ``StoreError`` with code ``StoreError/Code/notRepresentable``; its `key` is
    ///   the path to the offending value (`alert.hour`, `tags[1]`).
    /// - Complexity: O(n) in the number of values; no file I/O.
    public init(propertyList object: Any) throws {
        do {
            self = try Self.convert(object)
        } catch {
            throw StoreError(.notRepresentable, error.reason, key: error.path.isEmpty ? nil : error.pathDescription)
        }
    }

    /// The Foundation object `PropertyListSerialization` writes for this value: `String`,
    /// `Int`, `Double`, `Bool`, `Date`, `Data`, `[Any]` or `[String: Any]`.
    ///
    /// ```swift
    /// let bytes = try PropertyListSerialization.data(
    ///     fromPropertyList: value.propertyListObject, format: .binary, options: 0)
    /// ```
    ///
    /// - Complexity: O(n) in the number of values; no file I/O.
    public var propertyListObject: Any {
        switch self {
        case .string(let value): value
        case .int(let value): value
        case .double(let value): value
        case .bool(let value): value
        case .date(let value): value
        case .data(let value): value
        case .array(let elements): elements.map(\.propertyListObject)
        case .dictionary(let entries): entries.mapValues(\.propertyListObject)
        }
    }

    // MARK: Conversion

    /// Why a conversion failed and where, built up as the error unwinds.
    struct ConversionFailure: Error {
        var reason: String
        var path: [String] = []

        var pathDescription: String {
            var out = ""
            for component in path {
                if component.hasPrefix("[") || out.isEmpty { out += component } else { out += "." + component }
            }
            return out
        }
    }

    static func convert(_ object: Any) throws(ConversionFailure) -> PlistValue {
        // Fast path: the exact types PropertyListSerialization produces, matched by metatype
        // (cheap) before any dynamic cast (not cheap); this keeps a read within a few percent
        // of PropertyListSerialization alone. Numbers are classified by their storage type,
        // because a Swift cast would turn NSNumber(1) into `true` on Apple platforms.
        let dynamicType = type(of: object)
        if dynamicType == String.self, let value = object as? String { return .string(value) }
        if dynamicType is NSNumber.Type, let number = object as? NSNumber { return try convert(number) }
        if dynamicType == Bool.self, let value = object as? Bool { return .bool(value) }
        if dynamicType == [AnyHashable: Any].self, let value = object as? [AnyHashable: Any] {
            return .dictionary(try convertEntries(value))
        }
        if dynamicType == [Any].self, let value = object as? [Any] { return .array(try convertElements(value)) }
        if dynamicType == Date.self, let value = object as? Date { return .date(value) }
        if dynamicType == Data.self, let value = object as? Data { return .data(value) }
        return try convertBridged(object)
    }

    /// The general path: Swift values of other types, `NS` containers and bridged objects.
    private static func convertBridged(_ object: Any) throws(ConversionFailure) -> PlistValue {
        switch object {
        case let value as String: return .string(value)
        case let value as Bool: return .bool(value)
        case let value as Int: return .int(value)
        case let value as Double: return .double(value)
        case let value as Date: return .date(value)
        case let value as Data: return .data(value)
        case let value as [String: Any]:
            return .dictionary(try convertEntries(value))
        case let value as [AnyHashable: Any]:
            return .dictionary(try convertEntries(value))
        case let value as [Any]:
            return .array(try convertElements(value))
        case let value as any BinaryInteger:
            guard let int = Int(exactly: value) else {
                throw ConversionFailure(reason: "integer \(value) does not fit in a property-list integer (Int)")
            }
            return .int(int)
        case let value as Float: return .double(Double(value))
        default:
            if Mirror(reflecting: object).displayStyle == .optional {
                throw ConversionFailure(reason: "nil cannot be stored in a property list; remove the key instead")
            }
            throw ConversionFailure(reason: "a value of type \(type(of: object)) cannot be stored in a property list")
        }
    }

    private static func convertEntries(_ entries: [String: Any]) throws(ConversionFailure) -> [String: PlistValue] {
        var converted: [String: PlistValue] = [:]
        converted.reserveCapacity(entries.count)
        for (key, element) in entries {
            do { converted[key] = try convert(element) } catch {
                var failure = error
                failure.path.insert(key, at: 0)
                throw failure
            }
        }
        return converted
    }

    private static func convertEntries(_ entries: [AnyHashable: Any]) throws(ConversionFailure) -> [String: PlistValue] {
        var converted: [String: PlistValue] = [:]
        converted.reserveCapacity(entries.count)
        for (key, element) in entries {
            guard let key = key.base as? String else {
                throw ConversionFailure(
                    reason: "property-list dictionary keys must be strings, found \(type(of: key.base)) \(key)")
            }
            do { converted[key] = try convert(element) } catch {
                var failure = error
                failure.path.insert(key, at: 0)
                throw failure
            }
        }
        return converted
    }

    private static func convertElements(_ elements: [Any]) throws(ConversionFailure) -> [PlistValue] {
        var converted: [PlistValue] = []
        converted.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do { converted.append(try convert(element)) } catch {
                var failure = error
                failure.path.insert("[\(index)]", at: 0)
                throw failure
            }
        }
        return converted
    }

    private static func convert(_ number: NSNumber) throws(ConversionFailure) -> PlistValue {
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "f"), UInt8(ascii: "d"):
            return .double(number.doubleValue)
        case UInt8(ascii: "c") where number === NSNumber(value: true) || number === NSNumber(value: false):
            // Booleans are the two CFBoolean singletons on every platform.
            return .bool(number.boolValue)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"):
            guard let int = Int(exactly: number.uint64Value) else {
                throw ConversionFailure(
                    reason: "integer \(number.uint64Value) does not fit in a property-list integer (Int)")
            }
            return .int(int)
        default:
            return .int(Int(truncatingIfNeeded: number.int64Value))
        }
    }
}
