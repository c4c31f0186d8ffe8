import Archivist
import Foundation

/// A Codable type that is written as an instance of a named class (so an app's NSCoding class
/// of that name reads it with `decodeObject(of:forKey:)`, `decodeInt64(forKey:)`, …) instead of
/// as an `NSDictionary`.
///
/// ```swift
/// struct Note: Codable, KeyedArchiveClassNamed {
///     static let keyedArchiveClassChain = ["MyApp.Note", "NSObject"]
///     var title: String
/// }
/// ```
public protocol KeyedArchiveClassNamed {
    /// The class chain to write, most derived first.
    static var keyedArchiveClassChain: [String] { get }
}

extension KeyedArchiveWriter {
    /// Archives an `Encodable` value for `NSKeyedUnarchiver`.
    ///
    /// Keyed containers become `NSDictionary`s (string keys, every value an object) — or, for a
    /// ``KeyedArchiveClassNamed`` type, instances of its class with numbers and Booleans inline
    /// as `encode(with:)` would write them; unkeyed containers become `NSArray`s; `String`,
    /// numbers, `Bool`, `Data`, `Date`, `URL` and `UUID` the Foundation values. Class instances
    /// encoded twice are written once (a cycle of classes becomes a reference back, which
    /// Foundation on Linux cannot read; Apple platforms and ``KeyedArchive`` can).
    ///
    /// ```swift
    /// let data = try KeyedArchiveWriter.encode(["title": "hi"])
    /// let dictionary = try NSKeyedUnarchiver.unarchivedObject(ofClass: NSDictionary.self, from: data)
    /// ```
    ///
    /// - Throws: `ArchiveError`: `.limitExceeded` past `maxDepth`, `maxObjectCount` or
    ///   `maxTotalBytes` (the archive's size, as the reader bounds its input); the
    ///   model's own error wrapped as `.invalidValue`.
    public static func encode(_ root: some Encodable, limits: ArchiveLimits = .init()) throws -> Data {
        let state = KeyedArchiveWriterState(limits: limits)
        do {
            let object = try KeyedArchiveCodableWriter(state: state).object(for: root, codingPath: ["root"])
            return try state.finish(root: object)
        } catch let error as ArchiveError {
            throw error
        } catch {
            throw ArchiveError(.invalidValue, "encoding failed: \(error)", underlyingError: error)
        }
    }
}

/// A value of an encoding container: a scalar (inline in named instances) or an object.
enum KeyedArchiveEncodedValue {
    case scalar(PropertyListDocument.Node)
    case object(Int)
    /// A container created by `nestedContainer`/`superEncoder`, written when its parent is.
    case pending(KeyedArchiveEncodedContent)
}

/// What one `encode(to:)` produced.
final class KeyedArchiveEncodedContent {
    /// The keyed container's values by key, in the order first encoded.
    var keyed: KeyedArchiveKeyTable<KeyedArchiveEncodedValue>?
    var unkeyed: [KeyedArchiveEncodedValue]?
    var single: KeyedArchiveEncodedValue?
    var classChain: [String]?
}

/// Turns Encodable values into objects of a ``KeyedArchiveWriterState``.
struct KeyedArchiveCodableWriter {
    let state: KeyedArchiveWriterState

    /// Writes `value` and returns its object index (once per class instance).
    func object<T: Encodable>(for value: T, codingPath: [String]) throws -> Int {
        if T.self == String.self { return try state.plainObject(.string(value as! String)) }
        switch value {
        case let value as String: return try state.plainObject(.string(value))
        case let value as Data: return try state.plainObject(.data([UInt8](value)))
        case let value as Date: return try KeyedArchiveWriter.object(for: value, state: state, codingPath: codingPath)
        case let value as URL: return try KeyedArchiveWriter.object(for: value, state: state, codingPath: codingPath)
        case let value as UUID: return try KeyedArchiveWriter.object(for: value, state: state, codingPath: codingPath)
        default: break
        }
        if let scalar = Self.scalar(value) { return try state.plainObject(scalar) }
        let instance = T.self is AnyClass ? value as AnyObject : nil
        if let instance, let written = state.writtenObject(for: instance) { return written }
        return try state.nested(codingPath) {
            let object = try state.reserveObject()
            if let instance { state.record(instance, as: object) }
            let content = KeyedArchiveEncodedContent()
            content.classChain = state.classChain(of: T.self)
            try value.encode(to: KeyedArchiveValueEncoder(writer: self, content: content, codingPath: codingPath))
            state.setObject(object, node: try node(for: content, codingPath: codingPath))
            return object
        }
    }

    /// The plain plist value of a number or Boolean, or `nil`. Compares metatypes first (a
    /// pointer comparison) so that the common types cost one cast, not a chain of them.
    static func scalar<T>(_ value: T) -> PropertyListDocument.Node? {
        let type = ObjectIdentifier(T.self)
        if type == ObjectIdentifier(Int.self) { return .integer(Int64(value as! Int)) }
        if type == ObjectIdentifier(Bool.self) { return .bool(value as! Bool) }
        if type == ObjectIdentifier(Double.self) { return .real(value as! Double) }
        if type == ObjectIdentifier(String.self) || type == ObjectIdentifier(Date.self) { return nil }
        switch value {
        case let value as Int8: return .integer(Int64(value))
        case let value as Int16: return .integer(Int64(value))
        case let value as Int32: return .integer(Int64(value))
        case let value as Int64: return .integer(value)
        case let value as UInt:
            return UInt64(value) <= UInt64(Int64.max) ? .integer(Int64(value)) : .unsignedInteger(UInt64(value))
        case let value as UInt8: return .integer(Int64(value))
        case let value as UInt16: return .integer(Int64(value))
        case let value as UInt32: return .integer(Int64(value))
        case let value as UInt64: return value <= UInt64(Int64.max) ? .integer(Int64(value)) : .unsignedInteger(value)
        case let value as Float: return .real(Double(value))
        default: return nil
        }
    }

    /// The node an encoded content is written as.
    func node(for content: KeyedArchiveEncodedContent, codingPath: [String]) throws -> Int {
        if let keyed = content.keyed?.entries {
            if let chain = content.classChain {
                var fields: [(key: String, value: Int)] = []
                fields.reserveCapacity(keyed.count)
                for entry in keyed {
                    fields.append((entry.key, try fieldNode(entry.value, inline: true) { codingPath + [entry.key] }))
                }
                return try state.instanceNode(classChain: chain, fields: fields)
            }
            let keys = try keyed.map { state.uid(try state.plainObject(.string($0.key))) }
            let values = try keyed.map { entry in try fieldNode(entry.value, inline: false) { codingPath + [entry.key] }
            }
            return try state.instanceNode(
                classChain: ["NSDictionary", "NSObject"],
                fields: [
                    ("NS.keys", state.node(.array(keys))), ("NS.objects", state.node(.array(values))),
                ]
            )
        }
        if let unkeyed = content.unkeyed {
            let elements = try unkeyed.enumerated().map { position, value in
                try fieldNode(value, inline: false) { codingPath + ["[\(position)]"] }
            }
            return try state.instanceNode(
                classChain: ["NSArray", "NSObject"],
                fields: [("NS.objects", state.node(.array(elements)))]
            )
        }
        switch content.single {
        case .scalar(let value)?: return state.node(value)
        case .object(let object)?:
            return state.objects[object] >= 0 ? state.objects[object] : state.node(.uid(UInt64(object)))
        case .pending(let inner)?: return try node(for: inner, codingPath: codingPath)
        case nil:
            // Encoded nothing: an empty dictionary, as JSONEncoder writes `{}`.
            return try state.instanceNode(
                classChain: ["NSDictionary", "NSObject"],
                fields: [
                    ("NS.keys", state.node(.array([]))), ("NS.objects", state.node(.array([]))),
                ]
            )
        }
    }

    /// A field or element: scalars inline when allowed, otherwise a reference to an object.
    ///
    /// - Parameter codingPath: The value's path, built only for a pending container (once per
    ///   nested container, not once per field).
    private func fieldNode(_ value: KeyedArchiveEncodedValue, inline: Bool, codingPath: () -> [String]) throws -> Int {
        switch value {
        case .scalar(let node) where inline: return state.node(node)
        case .scalar(let node): return state.uid(try state.plainObject(node))
        case .object(let object): return state.uid(object)
        case .pending(let content):
            let object = try state.reserveObject()
            state.setObject(object, node: try self.node(for: content, codingPath: codingPath()))
            return state.uid(object)
        }
    }
}

/// The `Encoder` one `encode(to:)` writes into.
struct KeyedArchiveValueEncoder: Encoder {
    let writer: KeyedArchiveCodableWriter
    let content: KeyedArchiveEncodedContent
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(writer: KeyedArchiveCodableWriter, content: KeyedArchiveEncodedContent, codingPath: [String]) {
        self.init(writer: writer, content: content, keys: codingPath.map { KeyedArchivePathKey(stringValue: $0) })
    }

    init(writer: KeyedArchiveCodableWriter, content: KeyedArchiveEncodedContent, keys: [any CodingKey]) {
        self.writer = writer
        self.content = content
        self.codingPath = keys
    }

    var path: [String] { codingPath.map(\.stringValue) }

    /// Encodes a value: a scalar stays a scalar, anything else becomes an object.
    func value<T: Encodable>(_ value: T, key: String) throws -> KeyedArchiveEncodedValue {
        // Strings are the commonest objects and need no coding path: skip building it.
        if T.self == String.self { return .object(try writer.state.plainObject(.string(value as! String))) }
        if let scalar = KeyedArchiveCodableWriter.scalar(value) { return .scalar(scalar) }
        // A nil `Optional` is the `$null` reference (UID 0), as `NSKeyedArchiver` writes a nil
        // object: written as an object of its own, it would read back as the string "$null".
        if let optional = value as? any KeyedArchiveOptionalValue, optional.isNone { return .object(0) }
        return .object(try writer.object(for: value, codingPath: path + [key]))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if content.keyed == nil { content.keyed = KeyedArchiveKeyTable() }
        return KeyedEncodingContainer(KeyedArchiveKeyedEncodingContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if content.unkeyed == nil { content.unkeyed = [] }
        return KeyedArchiveUnkeyedEncodingContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        KeyedArchiveSingleValueEncodingContainer(encoder: self)
    }
}

/// A coding key built from a path component.
struct KeyedArchivePathKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// `Optional`, seen through a generic value: whether it is `nil`.
protocol KeyedArchiveOptionalValue {
    var isNone: Bool { get }
}

extension Optional: KeyedArchiveOptionalValue {
    var isNone: Bool { self == nil }
}
