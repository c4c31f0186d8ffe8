import Archivist
import Foundation

/// Keyed fields of an instance or entries of a dictionary.
struct KeyedArchiveKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: KeyedArchiveValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    /// Sets a field in place (the content is shared by every container of this value, and
    /// copying its arrays on each write made encoding quadratic in the number of fields).
    private func set(_ key: Key, _ value: KeyedArchiveEncodedValue) {
        encoder.content.keyed?.set(value, forKey: key.stringValue)
    }

    mutating func encodeNil(forKey key: Key) throws { set(key, .object(0)) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        set(key, try encoder.value(value, key: key.stringValue))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let content = KeyedArchiveEncodedContent()
        set(key, .pending(content))
        return KeyedArchiveValueEncoder(writer: encoder.writer, content: content, keys: codingPath + [key]).container(
            keyedBy: keyType
        )
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let content = KeyedArchiveEncodedContent()
        set(key, .pending(content))
        return KeyedArchiveValueEncoder(writer: encoder.writer, content: content, keys: codingPath + [key])
            .unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let content = KeyedArchiveEncodedContent()
        set(key, .pending(content))
        return KeyedArchiveValueEncoder(writer: encoder.writer, content: content, keys: codingPath + [key])
    }
}

/// Elements of an array.
struct KeyedArchiveUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: KeyedArchiveValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.content.unkeyed?.count ?? 0 }

    /// Appends in place (rebuilding the array on each element made encoding quadratic).
    private func append(_ value: KeyedArchiveEncodedValue) { encoder.content.unkeyed?.append(value) }

    mutating func encodeNil() throws { append(.object(0)) }
    mutating func encode<T: Encodable>(_ value: T) throws { append(try encoder.value(value, key: "[\(count)]")) }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let content = KeyedArchiveEncodedContent()
        let key = KeyedArchivePathKey(stringValue: "[\(count)]")
        append(.pending(content))
        return KeyedArchiveValueEncoder(writer: encoder.writer, content: content, keys: codingPath + [key]).container(
            keyedBy: keyType
        )
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let content = KeyedArchiveEncodedContent()
        let key = KeyedArchivePathKey(stringValue: "[\(count)]")
        append(.pending(content))
        return KeyedArchiveValueEncoder(writer: encoder.writer, content: content, keys: codingPath + [key])
            .unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let content = KeyedArchiveEncodedContent()
        let key = KeyedArchivePathKey(stringValue: "[\(count)]")
        append(.pending(content))
        return KeyedArchiveValueEncoder(writer: encoder.writer, content: content, keys: codingPath + [key])
    }
}

/// A single value: the object is that value.
struct KeyedArchiveSingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: KeyedArchiveValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.content.single = .object(0) }  // the `$null` reference
    mutating func encode<T: Encodable>(_ value: T) throws {
        switch value {
        case let value as String: encoder.content.single = .scalar(.string(value))
        case let value as Data: encoder.content.single = .scalar(.data([UInt8](value)))
        default: encoder.content.single = try encoder.value(value, key: "")
        }
    }
}
