import Archivist
import Foundation

/// The keyed container: an instance's fields or a string-keyed dictionary's entries.
///
/// `Key` is the caller's type, so code generic over it runs unspecialized (metadata look-ups
/// and witness calls on every use); the container only forwards to its decoder's non-generic
/// keyed reads with the key's string. It holds nothing but the decoder, whose keyed state
/// (``KeyedArchiveValueDecoder/keyedEntries`` and the lookup cursor) `container(keyedBy:)` set:
/// one allocation per object fewer than a reader object of its own.
struct KeyedArchiveKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let reader: KeyedArchiveValueDecoder

    init(decoder: KeyedArchiveValueDecoder) {
        reader = decoder
    }

    var codingPath: [any CodingKey] { reader.containerPath }
    var allKeys: [Key] { reader.keyedEntries.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { reader.keyedEntries[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { try reader.child(key.stringValue, key).isNil }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try reader.bool(key.stringValue, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try reader.string(key.stringValue, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try reader.double(key.stringValue, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try reader.float(key.stringValue, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try reader.integer(key.stringValue, key, type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try reader.integer(key.stringValue, key, type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try reader.integer(key.stringValue, key, type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try reader.integer(key.stringValue, key, type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try reader.integer(key.stringValue, key, type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try reader.integer(key.stringValue, key, type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try reader.integer(key.stringValue, key, type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try reader.integer(key.stringValue, key, type)
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try reader.integer(key.stringValue, key, type)
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try reader.integer(key.stringValue, key, type)
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if T.self == Date.self { return try reader.date(key.stringValue, key) as! T }
        // `NSNull` and `$null` reach `T`: its `init(from:)` may accept them (`decodeNil()`).
        return try reader.child(key.stringValue, key).decode(type)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try reader.child(key.stringValue, key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try reader.child(key.stringValue, key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { reader }
    func superDecoder(forKey key: Key) throws -> any Decoder { try reader.child(key.stringValue, key) }
}

/// What a keyed container does, by key string: look the entry up, check depth and the value
/// budget, and read it. Scalars of the expected kind are read straight from the field or
/// object, without making a child decoder; anything else (another kind of number, which it
/// converts, nil or another kind of value, which it refuses) goes through the child.
extension KeyedArchiveValueDecoder {
    /// Makes `entries` this decoder's keyed entries, for a ``KeyedArchiveKeyedContainer`` over it.
    ///
    /// A second container of the same decoder (`superDecoder()` hands out the decoder itself)
    /// has the same entries; it only restarts the lookup cursor, which is a hint.
    func startKeyed(_ entries: KeyedArchiveKeyedEntries) {
        keyedEntries = entries
        hint = 0
        lookups = 0
        switch entries {
        case .instance(let table):
            instanceKeys = table.keys
            instanceValues = table.values
            readsDictionary = false
            if session.predictedShape !== table.keys {
                // This shape records its lookups from now on (until another shape's instance starts).
                session.predictedShape = table.keys
                session.predictedPositions.removeAll(keepingCapacity: true)
                session.predictedNames.removeAll(keepingCapacity: true)
            }
        case .dictionary(let keys, let values, _):
            instanceKeys = nil
            instanceValues = []
            dictionaryKeys = keys
            dictionaryValues = values
            readsDictionary = true
        case .fields, .items:
            instanceKeys = nil
            instanceValues = []
            readsDictionary = false
        }
    }

    /// The entry under `name`, or `nil`.
    ///
    /// An `NSDictionary`'s keys are scanned in place (``KeyedArchiveKeyedEntries/position(of:keys:objects:)``).
    /// An instance's key is looked for first where the session predicts it (the position the
    /// same lookup found in the previous instance of this shape: archivers write keys in any
    /// order, `Decodable`s read them in one), else after the last key found.
    private func entry(_ name: String) -> KeyedArchiveItem? {
        if readsDictionary { return dictionaryEntry(name) }
        guard let instanceKeys else { return keyedEntries[name] }
        let lookup = lookups
        lookups += 1
        let predicted = session.predictedShape === instanceKeys && lookup < session.predictedPositions.count
        let position: Int?
        if predicted, session.predictedNames[lookup] == name {
            // The same name as this lookup of the previous instance of the shape (the very
            // string, a `CodingKey`'s literal: one word compare), so the same position.
            let known = session.predictedPositions[lookup]
            position = known >= 0 ? known : nil
        } else {
            position = instanceKeys.position(of: name, hint: predicted ? session.predictedPositions[lookup] : hint)
            if !predicted, session.predictedShape === instanceKeys, lookup == session.predictedPositions.count {
                session.predictedPositions.append(position ?? -1)
                session.predictedNames.append(name)
            }
        }
        guard let position else { return nil }
        hint = position + 1
        return KeyedArchiveItem(instanceValues[position])
    }

    /// An `NSDictionary`'s entry under `name`: where the key object the same lookup of the
    /// previous dictionary found is (integer compares), else by scanning the keys' strings.
    ///
    /// A key written twice (no archiver writes one) reads the value of the last of its key
    /// objects, and of the last such object when scanning.
    private func dictionaryEntry(_ name: String) -> KeyedArchiveItem? {
        let lookup = lookups
        lookups += 1
        if lookup < session.dictionaryLookups.count, session.dictionaryLookups[lookup].name == name {
            let key = session.dictionaryLookups[lookup].key
            var position = dictionaryKeys.count
            while position > 0 {
                position -= 1
                if dictionaryKeys[position].index == key { return .object(dictionaryValues[position]) }
            }
        }
        guard let position = KeyedArchiveKeyedEntries.position(of: name, keys: dictionaryKeys, objects: session.objects)
        else {
            return nil
        }
        let found = KeyedArchiveDecodingSession.DictionaryLookup(name: name, key: dictionaryKeys[position].index)
        if lookup < session.dictionaryLookups.count {
            session.dictionaryLookups[lookup] = found
        } else if lookup == session.dictionaryLookups.count {
            session.dictionaryLookups.append(found)
        }
        return .object(dictionaryValues[position])
    }

    /// The entry under `name`, admitted (depth and budget checked once).
    private func admitted(_ name: String, _ key: () -> any CodingKey) throws -> KeyedArchiveItem {
        guard let item = entry(name) else {
            throw error(.keyNotFound, "no value for \(name)", key: key())
        }
        try admit(key: key(), depth: depth)
        return item
    }

    /// The child decoder of an admitted item. Asked for a value it does not hold — `$null` or
    /// `NSNull` included — it throws (`.valueNotFound` for those), with its path.
    private func child(_ item: KeyedArchiveItem, _ key: any CodingKey) -> KeyedArchiveValueDecoder {
        KeyedArchiveValueDecoder(session: session, item: item, parentPath: containerPath, key: key)
    }

    /// The child decoder for `name`.
    func child(_ name: String, _ key: @autoclosure () -> any CodingKey) throws -> KeyedArchiveValueDecoder {
        child(try admitted(name, key), key())
    }

    // Each matches the item, then the object it names, in place: a tuple of the two (or the
    // object returned as an optional) copied both, a retain and release per field read.

    func string(_ name: String, _ key: @autoclosure () -> any CodingKey) throws -> String {
        let item = try admitted(name, key)
        switch item {
        case .field(.string(let value)): return value
        case .object(let reference): if case .string(let value) = session.objects[reference.index] { return value }
        default: break
        }
        return try child(item, key()).string()
    }

    /// The number an item is (inline, or the object it names), if it is one.
    @inline(__always)
    private func number(_ item: KeyedArchiveItem) -> KeyedArchiveNumber? {
        switch item {
        case .field(let field): KeyedArchiveNumber(field)
        case .object(let reference): KeyedArchiveNumber(session.objects[reference.index])
        }
    }

    // Numbers of any kind convert in place (corelibs stores a record's `true` and another's `1`
    // as one object, so a Boolean field meeting an integer is common, not an error); only a
    // value that is no number, or does not fit, goes through the child for its error.

    func bool(_ name: String, _ key: @autoclosure () -> any CodingKey) throws -> Bool {
        let item = try admitted(name, key)
        if let value = number(item)?.bool { return value }
        return try child(item, key()).bool()
    }

    func double(_ name: String, _ key: @autoclosure () -> any CodingKey) throws -> Double {
        let item = try admitted(name, key)
        if case .field(.real(let value)) = item { return value }
        if let value = number(item)?.double { return value }
        return try child(item, key()).double()
    }

    func float(_ name: String, _ key: @autoclosure () -> any CodingKey) throws -> Float {
        let item = try admitted(name, key)
        if let value = number(item)?.float { return value }
        return try child(item, key()).float()
    }

    func integer<T: FixedWidthInteger>(
        _ name: String,
        _ key: @autoclosure () -> any CodingKey,
        _ type: T.Type
    ) throws -> T {
        let item = try admitted(name, key)
        if case .field(.integer(let value)) = item, let converted = T(exactly: value) { return converted }
        if let value = number(item)?.exactly(T.self) { return value }
        return try child(item, key()).integer(type)
    }

    func date(_ name: String, _ key: @autoclosure () -> any CodingKey) throws -> Date {
        let item = try admitted(name, key)
        switch item {
        case .field(.date(let value)): return value
        case .object(let reference): if case .date(let value) = session.objects[reference.index] { return value }
        default: break
        }
        return try child(item, key()).decode(Date.self)
    }
}
