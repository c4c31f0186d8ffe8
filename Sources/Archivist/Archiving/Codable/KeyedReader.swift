/// The number of keys a learning ``KeyedReader`` remembers, outside the generic class, so that
/// ``CachedKeyedReader`` reads it without looking up the class's metadata.
enum KeyedReaderSlots {
    static var count: Int { 32 }
}

/// A keyed container's reader. A class, not a struct: the standard library's container box
/// copies its reader through the value witnesses for every field it decodes, and a copy of a
/// class is one retain, where a struct of two references was two retains and two releases
/// behind two witness calls (about a seventh of decoding a model of primitive fields).
final class KeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let archive: ArchiveDecoder
    let record: NestedRecord?
    var codingPath: [any CodingKey] { [] }

    /// Where each key is in the archive's key table, for keys of one byte or none that are
    /// plain values (a synthesized `CodingKeys` enum): a field is then found by comparing key
    /// indexes, without asking the key for its `stringValue` and comparing strings. Slot 0
    /// holds the key table's ``ArchivedKeys/generation`` the others were learnt from; slot
    /// `1 + key byte` holds 0 (not seen yet) or 1 + the index the key was last found under.
    /// `nil` for other keys, for nested records and for a reader that does not learn keys.
    /// Keys whose byte is ``keySlotCount`` or more are looked up by name.
    let keySlots: UnsafeMutablePointer<Int>?
    /// Whether a key is one byte (else none, or ``keySlots`` is `nil`).
    let oneByteKey: Bool

    /// The keys remembered: a reader is made per archive, so its table is small enough to
    /// clear in a few stores (257 slots cost more to clear than they saved on a one-model
    /// archive).
    static var keySlotCount: Int { KeyedReaderSlots.count }

    /// A reader of `record`, or of the current record if `nil`; `learnsKeys` (for the current
    /// record only) makes it remember key indexes.
    init(archive: ArchiveDecoder, record: NestedRecord?, learnsKeys: Bool = false) {
        self.archive = archive
        self.record = record
        oneByteKey = MemoryLayout<Key>.size == 1
        if learnsKeys, record == nil, _isPOD(Key.self), MemoryLayout<Key>.size <= 1 {
            let slots = UnsafeMutablePointer<Int>.allocate(capacity: 1 + Self.keySlotCount)
            slots.initialize(to: archive.storage.pointee.keys.generation)
            (slots + 1).initialize(repeating: 0, count: Self.keySlotCount)
            keySlots = slots
        } else {
            keySlots = nil
        }
    }

    deinit { keySlots?.deallocate() }

    /// Positions the reader at the value of `key` in the current record (not a nested one);
    /// false if it has no such field. A key seen before is looked for by its index; when that
    /// misses (or the key is new) the name decides, as in ``DecoderStorage/seek(_:)``, so the
    /// answer is the same unless a hostile record holds two fields of one name.
    @inline(__always)
    func seek(_ key: Key, _ s: UnsafeMutablePointer<DecoderStorage>) throws -> Bool {
        guard let slots = keySlots else { return try s.pointee.seek(key.stringValue) }
        // Not `withUnsafeBytes(of:)`: unspecialized, it was a generic call per field.
        let byte = oneByteKey ? Int(unsafeBitCast(key, to: UInt8.self)) : 0
        guard byte < Self.keySlotCount else { return try s.pointee.seek(key.stringValue) }
        if _slowPath(slots.pointee != s.pointee.keys.generation) {
            slots.pointee = s.pointee.keys.generation
            (slots + 1).update(repeating: 0, count: Self.keySlotCount)
        }
        let slot = slots + 1 + byte
        if slot.pointee != 0, try s.pointee.seek(keyIndex: slot.pointee &- 1) { return true }
        return try s.pointee.seek(key.stringValue, learning: slot)
    }

    /// Reads a primitive field of the current record; nested records take ``field(_:_:)``.
    @inline(__always)
    private func primitive<P: ArchivePrimitive>(_ type: P.Type, _ key: Key) throws -> P {
        guard record == nil else { return try field(key) { try $0.decodePrimitive(P.self, forKey: $1) } }
        let archive = self.archive
        let s = archive.storage
        return try archive.decodeField(key.stringValue, found: seek(key, s)) {
            try P.read(from: &s.pointee.reader)
        }
    }

    /// Reads an optional primitive field of the current record (`nil` when absent or null).
    @inline(__always)
    private func primitiveIfPresent<P: ArchivePrimitive>(_ type: P.Type, _ key: Key) throws -> P? {
        guard record == nil else { return try field(key) { try $0.decodePrimitiveIfPresent(P.self, forKey: $1) } }
        let archive = self.archive
        let s = archive.storage
        return try archive.decodeFieldIfPresent(key.stringValue, found: seek(key, s)) {
            try P.read(from: &s.pointee.reader)
        }
    }

    @inline(__always)
    private func scoped<R>(_ body: () throws -> R) throws -> R {
        guard let record else { return try body() }
        return try archive.within(record, body)
    }

    /// Runs `body` with the decoder and the field's name, in the nested record if this is one.
    /// `body` captures nothing: a closure that captured `self` when this was a struct copied
    /// it through its value witnesses (a metadata lookup) on every field.
    @inline(__always)
    private func field<R>(_ key: Key, _ body: (ArchiveDecoder, String) throws -> R) throws -> R {
        let name = key.stringValue
        let archive = self.archive
        guard let record else { return try body(archive, name) }
        return try archive.within(record) { try body(archive, name) }
    }

    var allKeys: [Key] {
        ((try? scoped { try archive.allKeys() }) ?? []).compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        (try? scoped { try archive.contains(key.stringValue) }) ?? false
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if record == nil {
            guard try seek(key, archive.storage) else { throw archive.keyNotFound(key.stringValue) }
            return try archive.skipNullField()
        }
        return try field(key) { archive, name in
            guard try archive.storage.pointee.seek(name) else { throw archive.keyNotFound(name) }
            return try archive.skipNullField()
        }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try primitive(Bool.self, key)
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try primitive(String.self, key)
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try primitive(Double.self, key)
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try primitive(Float.self, key)
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try primitive(Int.self, key)
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try primitive(Int8.self, key)
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try primitive(Int16.self, key)
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try primitive(Int32.self, key)
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try primitive(Int64.self, key)
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try primitive(UInt.self, key)
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try primitive(UInt8.self, key)
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try primitive(UInt16.self, key)
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try primitive(UInt32.self, key)
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try primitive(UInt64.self, key)
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try primitiveIfPresent(Bool.self, key)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try primitiveIfPresent(String.self, key)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try primitiveIfPresent(Double.self, key)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try primitiveIfPresent(Int.self, key)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try primitiveIfPresent(Int64.self, key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if record == nil {
            let archive = self.archive
            let s = archive.storage
            return try archive.decodeField(key.stringValue, found: seek(key, s)) {
                try archive.readDecodable(T.self)
            }
        }
        return try field(key) { archive, name in
            try archive.decodeField(name, found: archive.storage.pointee.seek(name)) {
                try archive.readDecodable(T.self)
            }
        }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if record == nil {
            let archive = self.archive
            let s = archive.storage
            return try archive.decodeFieldIfPresent(key.stringValue, found: seek(key, s)) {
                try archive.readDecodable(T.self)
            }
        }
        return try field(key) { archive, name in
            try archive.decodeFieldIfPresent(name, found: archive.storage.pointee.seek(name)) {
                try archive.readDecodable(T.self)
            }
        }
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try scoped {
            let s = archive.storage
            guard try s.pointee.seek(key.stringValue) else { throw archive.keyNotFound(key.stringValue) }
            let nested = try archive.nestedRecord()
            s.pointee.fieldDone()
            return KeyedDecodingContainer(KeyedReader<NestedKey>(archive: archive, record: nested))
        }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try scoped {
            let s = archive.storage
            guard try s.pointee.seek(key.stringValue) else { throw archive.keyNotFound(key.stringValue) }
            let reader = try UnkeyedReader(archive: archive)
            s.pointee.fieldDone()
            return reader
        }
    }

    func superDecoder() throws -> any Decoder { try superDecoder(key: "super") }

    func superDecoder(forKey key: Key) throws -> any Decoder { try superDecoder(key: key.stringValue) }

    private func superDecoder(key: String) throws -> any Decoder {
        try scoped {
            let s = archive.storage
            guard try s.pointee.seek(key) else { throw archive.keyNotFound(key) }
            let start = s.pointee.reader.pos
            try s.pointee.reader.skipValue()
            s.pointee.fieldDone()
            return SlotDecoder(archive: archive, start: start, end: s.pointee.reader.pos)
        }
    }
}
