import Foundation

/// The `Decoder` that runs a `Codable` type's `init(from:)` over the native format.
struct CodableArchiveDecoder: Decoder {
    let archive: ArchiveDecoder

    /// The archive behind `decoder` if it is this decoder: a metatype compare, not the dynamic
    /// cast `decoder as? CodableArchiveDecoder` (called with an `any Decoder`, opened).
    @inline(__always)
    static func archive<D: Decoder>(of decoder: D) -> ArchiveDecoder? {
        guard D.self == CodableArchiveDecoder.self else { return nil }
        return withUnsafePointer(to: decoder) {
            UnsafeRawPointer($0).assumingMemoryBound(to: CodableArchiveDecoder.self).pointee.archive
        }
    }
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let s = archive.storage
        try s.pointee.openRecord()
        // A container of the current record reads whatever record is current, so one per key
        // type serves every model of the archive: making one cost an allocation and two
        // runtime metadata lookups per model.
        let id = ObjectIdentifier(Key.self)
        for index in s.pointee.keyedContainers.indices where s.pointee.keyedContainers[index].key == id {
            if s.pointee.keyedContainers[index].learnsKeys {
                // Copied out by the cache itself, straight into this function's result: the
                // copy takes `KeyedDecodingContainer<Key>`'s metadata from the cache's class
                // (its generic argument), where copying it here looked the metadata up in the
                // runtime's generic cache (about 340 instructions per model).
                return unsafeDowncast(
                    s.pointee.keyedContainers[index].container.unsafelyUnwrapped,
                    to: KeyedContainerCache<KeyedDecodingContainer<Key>>.self
                ).copy()
            }
            return learningContainer(Key.self, at: index)
        }
        return firstContainer(Key.self)
    }

    /// The first model with these keys: an ordinary container, the key type only noted, so a
    /// one-model archive keeps nothing. Out of line, like ``learningContainer(_:at:)``, so
    /// that ``container(keyedBy:)``'s usual path makes nothing.
    @inline(never)
    private func firstContainer<Key: CodingKey>(_ type: Key.Type) -> KeyedDecodingContainer<Key> {
        let s = archive.storage
        if s.pointee.keyedContainers.count < DecoderStorage.keyedContainerLimit {
            s.pointee.keyedContainers.append((ObjectIdentifier(Key.self), false, nil))
        }
        return KeyedDecodingContainer(KeyedReader<Key>(archive: archive, record: nil))
    }

    /// The second model with these keys: a container whose reader remembers key indexes pays
    /// off now (for the first, as in a one-model archive, it cost more than it saved); kept in
    /// entry `index` of the decoder's containers. A ``CachedKeyedReader``: the fields of every
    /// later model go through it. Not inlined: a local container in
    /// ``container(keyedBy:)`` made it look up `KeyedDecodingContainer<Key>` on every call.
    @inline(never)
    private func learningContainer<Key: CodingKey>(_ type: Key.Type, at index: Int) -> KeyedDecodingContainer<Key> {
        let s = archive.storage
        let reader = KeyedReader<Key>(archive: archive, record: nil, learnsKeys: true)
        let (word, epoch) = s.pointee.currentEpoch()
        // The cache holds the reader the container refers to without a strong reference, until
        // the epoch ends (see ``CachedKeyedReader``).
        let cache = KeyedContainerCache(
            KeyedDecodingContainer(CachedKeyedReader(reader, word: word, epoch: epoch)), keeping: reader)
        s.pointee.keyedContainers[index].container = cache
        s.pointee.keyedContainers[index].learnsKeys = true
        return cache.copy()
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try archive.storage.pointee.beginSingleValue()
        return try UnkeyedReader(archive: archive)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueReader(archive: archive)
    }
}

/// A keyed container of the current record, kept by the decoder for the next model with the
/// same coding keys (see ``CodableArchiveDecoder/container(keyedBy:)``).
///
/// Generic over the container type itself (`KeyedDecodingContainer<Key>`), not over `Key`:
/// ``copy()`` then finds the container type's metadata among this class's generic arguments,
/// with no runtime lookup (`KeyedDecodingContainer` is resilient, so every copy of one in
/// unspecialized code goes through its metadata).
final class KeyedContainerCache<Container> {
    let container: Container
    /// What `container` refers to without holding it (its ``KeyedReader``).
    private let kept: AnyObject

    init(_ container: Container, keeping kept: AnyObject) {
        self.container = container
        self.kept = kept
    }

    /// A copy of the container. Not inlined: inlined into a caller generic over `Key`, the copy
    /// would look up `KeyedDecodingContainer<Key>` again.
    @inline(never)
    func copy() -> Container { container }
}

/// A nested keyed record's bounds and read cursor (a class: decoding containers are copied
/// and their methods are non-mutating).
final class NestedRecord {
    let start: Int
    let fieldsStart: Int
    let end: Int
    var cursor: Int

    init(start: Int, fieldsStart: Int, end: Int) {
        self.start = start
        self.fieldsStart = fieldsStart
        self.end = end
        cursor = fieldsStart
    }
}

extension ArchiveDecoder {
    /// Decodes a Codable value: through its `Archivable` conformance when it has one,
    /// otherwise as an anonymous value of its own.
    func readDecodable<T: Decodable>(_ type: T.Type) throws -> T {
        let s = storage
        // A failed conformance lookup is the slow kind; a model's field of a type that is not
        // Archivable (a `@BackReference` in every letter) repeats it per model.
        let id = ObjectIdentifier(T.self)
        if id == s.pointee.lastNonArchivableType {
            if let backReference = s.pointee.lastBackReferenceType {
                // `T` is that type.
                return try readBackReference(backReference, as: T.self)
            }
        } else {
            if CodablePrimitives.isInline(T.self) { return try CodablePrimitives.read(T.self, from: &s.pointee.reader) }
            if let archivable = T.self as? any Archivable.Type {
                return try readOpened(archivable, as: T.self)
            }
            s.pointee.lastNonArchivableType = id
            s.pointee.lastBackReferenceType = T.self as? any BackReferenceDecoding.Type
            if let backReference = s.pointee.lastBackReferenceType {
                return try readBackReference(backReference, as: T.self)
            }
        }
        let saved = try s.pointee.enterValue(nil, weight: ArchiveLimits.codableLevelWeight)
        defer { s.pointee.leaveValue(saved) }
        let value = try T(from: CodableArchiveDecoder(archive: self))
        try s.pointee.finishValue()
        return value
    }

    /// Reads a `@BackReference` of type `B`, which is `T`, at the reader: what its
    /// `init(from:)` reads in a value frame of its own, without the frame (a reference is
    /// one value, and its reading restores the reader's bounds itself), charging the frame's
    /// depth all the same.
    private func readBackReference<B: BackReferenceDecoding, T>(_ type: B.Type, as: T.Type) throws -> T {
        let s = storage
        try s.pointee.chargeDepth(ArchiveLimits.codableLevelWeight)
        defer { s.pointee.depth -= ArchiveLimits.codableLevelWeight }
        return try B.readBackReference(from: self, as: T.self)
    }

    private func readOpened<A: Archivable, T>(_ type: A.Type, as: T.Type) throws -> T {
        // `A` is `T` opened from its metatype, so nearly always the very same type.
        if A.self == T.self { return unsafeBitCast(try read(A.self), to: T.self) }
        guard let value = try read(A.self) as? T else {
            throw ArchiveError(.typeMismatch, "\(A.self) is not \(T.self)")
        }
        return value
    }

    /// Reads a nested record's header at the reader and returns its bounds.
    func nestedRecord() throws -> NestedRecord {
        let s = storage
        let start = s.pointee.reader.pos
        let tag = try s.pointee.reader.byte()
        guard tag == ArchiveTag.record else { throw s.pointee.mismatch(expected: "a keyed container", found: tag, at: start) }
        let length = Int(clamping: try s.pointee.reader.fixed(UInt32.self))
        guard length <= s.pointee.reader.remaining else { throw s.pointee.reader.truncated("a keyed container") }
        let end = s.pointee.reader.pos + length
        let saved = s.pointee.reader.end
        s.pointee.reader.end = end
        defer { s.pointee.reader.end = saved }
        _ = try s.pointee.reader.index(below: s.pointee.types.count + 1, "type reference")
        let record = NestedRecord(start: start, fieldsStart: s.pointee.reader.pos, end: end)
        s.pointee.reader.pos = end
        return record
    }

    /// Runs `body` with a nested record standing in for the current frame, and puts the
    /// reader back where it was: a read of a nested record's field may come after the
    /// enclosing value moved past it (an unkeyed container at a value's root leaves the reader
    /// after its array, which is where the value must end).
    func within<R>(_ record: NestedRecord, _ body: () throws -> R) throws -> R {
        let s = storage
        // The record's positions are in the archive's bytes, which may be gone after the decode.
        try s.pointee.checkDecoding()
        let savedFrame = s.pointee.frame
        let savedPos = s.pointee.reader.pos
        let savedEnd = s.pointee.reader.end
        var frame = DecoderStorage.Frame()
        frame.mode = .keyed
        frame.start = record.start
        frame.fieldsStart = record.fieldsStart
        frame.end = record.end
        frame.cursor = record.cursor
        frame.outerEnd = savedEnd
        s.pointee.frame = frame
        s.pointee.reader.end = record.end
        defer {
            record.cursor = s.pointee.frame.cursor
            s.pointee.frame = savedFrame
            s.pointee.reader.pos = savedPos
            s.pointee.reader.end = savedEnd
        }
        return try body()
    }
}

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
        let s = archive.storage
        guard try seek(key, s) else { throw archive.keyNotFound(key.stringValue) }
        return try DecoderStorage.readField(P.self, key, s)
    }

    /// Reads an optional primitive field of the current record (`nil` when absent or null).
    @inline(__always)
    private func primitiveIfPresent<P: ArchivePrimitive>(_ type: P.Type, _ key: Key) throws -> P? {
        guard record == nil else { return try field(key) { try $0.decodePrimitiveIfPresent(P.self, forKey: $1) } }
        let s = archive.storage
        guard try seek(key, s) else { return nil }
        if try s.pointee.reader.peekByte() == ArchiveTag.null {
            s.pointee.reader.pos += 1
            s.pointee.fieldDone()
            return nil
        }
        return try DecoderStorage.readField(P.self, key, s)
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
            let s = archive.storage
            guard try seek(key, s) else { throw archive.keyNotFound(key.stringValue) }
            guard try s.pointee.reader.peekByte() == ArchiveTag.null else { return false }
            s.pointee.reader.pos += 1
            s.pointee.fieldDone()
            return true
        }
        return try field(key) { archive, name in
            let s = archive.storage
            guard try s.pointee.seek(name) else { throw archive.keyNotFound(name) }
            guard try s.pointee.reader.peekByte() == ArchiveTag.null else { return false }
            s.pointee.reader.pos += 1
            s.pointee.fieldDone()
            return true
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
            let s = archive.storage
            guard try seek(key, s) else { throw archive.keyNotFound(key.stringValue) }
            do {
                let value = try archive.readDecodable(T.self)
                s.pointee.fieldDone()
                return value
            } catch let error as ArchiveError {
                throw error.prefixed(by: key.stringValue)
            }
        }
        return try field(key) { archive, name in
            let s = archive.storage
            guard try s.pointee.seek(name) else { throw archive.keyNotFound(name) }
            do {
                let value = try archive.readDecodable(T.self)
                s.pointee.fieldDone()
                return value
            } catch let error as ArchiveError {
                throw error.prefixed(by: name)
            }
        }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if record == nil {
            let s = archive.storage
            guard try seek(key, s) else { return nil }
            if try s.pointee.reader.peekByte() == ArchiveTag.null {
                s.pointee.reader.pos += 1
                s.pointee.fieldDone()
                return nil
            }
            do {
                let value = try archive.readDecodable(T.self)
                s.pointee.fieldDone()
                return value
            } catch let error as ArchiveError {
                throw error.prefixed(by: key.stringValue)
            }
        }
        return try field(key) { archive, name in
            let s = archive.storage
            guard try s.pointee.seek(name) else { return nil }
            if try s.pointee.reader.peekByte() == ArchiveTag.null {
                s.pointee.reader.pos += 1
                s.pointee.fieldDone()
                return nil
            }
            do {
                let value = try archive.readDecodable(T.self)
                s.pointee.fieldDone()
                return value
            } catch let error as ArchiveError {
                throw error.prefixed(by: name)
            }
        }
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
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

extension DecoderStorage {
    /// Positions the reader at the value of the field whose key is entry `index` of the key
    /// table in the open record; false if absent. The same reads and errors as ``seek(_:)``
    /// with that entry's name, when the name is in the table once.
    @inline(__always)
    mutating func seek(keyIndex index: Int) throws -> Bool {
        if _slowPath(frame.mode != .keyed) { try openRecord() }
        if frame.cursor < frame.end {
            reader.pos = frame.cursor
            if try reader.index(below: keys.count, "key index") == index { return true }
        }
        reader.pos = frame.fieldsStart
        while reader.pos < frame.end {
            if try reader.index(below: keys.count, "key index") == index { return true }
            try reader.skipValue()
        }
        return false
    }

    /// ``seek(_:)``, which also stores 1 + the index of the key it finds in `slot`.
    mutating func seek(_ key: String, learning slot: UnsafeMutablePointer<Int>) throws -> Bool {
        if _slowPath(frame.mode != .keyed) { try openRecord() }
        if frame.cursor < frame.end {
            reader.pos = frame.cursor
            let index = try reader.index(below: keys.count, "key index")
            if keys.matches(index, key) {
                slot.pointee = index &+ 1
                return true
            }
        }
        reader.pos = frame.fieldsStart
        while reader.pos < frame.end {
            let index = try reader.index(below: keys.count, "key index")
            if keys.matches(index, key) {
                slot.pointee = index &+ 1
                return true
            }
            try reader.skipValue()
        }
        return false
    }
}

/// Reads an array's elements one by one; positions live here because Codable's unkeyed
/// container is a mutating value.
struct UnkeyedReader: UnkeyedDecodingContainer {
    let archive: ArchiveDecoder
    let count: Int?
    let end: Int
    var position: Int
    var currentIndex = 0
    var codingPath: [any CodingKey] { [] }
    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    /// Opens the array at the reader and moves the reader past it.
    init(archive: ArchiveDecoder) throws {
        self.archive = archive
        let s = archive.storage
        let (count, end, outerEnd) = try s.pointee.openContainer(ArchiveTag.array, "an array", minimumElementSize: 1)
        self.count = count
        self.end = end
        position = s.pointee.reader.pos
        s.pointee.reader.pos = end
        s.pointee.reader.end = outerEnd
    }

    private mutating func element<R>(_ body: (UnsafeMutablePointer<DecoderStorage>) throws -> R) throws -> R {
        guard !isAtEnd else {
            throw ArchiveError(.valueNotFound, "unkeyed container is at its end (\(count ?? 0) elements)")
        }
        let s = archive.storage
        // `position` and `end` are in the archive's bytes, which may be gone after the decode.
        try s.pointee.checkDecoding()
        let savedPos = s.pointee.reader.pos
        let savedEnd = s.pointee.reader.end
        s.pointee.reader.pos = position
        s.pointee.reader.end = end
        defer {
            s.pointee.reader.pos = savedPos
            s.pointee.reader.end = savedEnd
        }
        do {
            let value = try body(s)
            position = s.pointee.reader.pos
            currentIndex += 1
            return value
        } catch let error as ArchiveError {
            throw error.prefixed(by: "[\(currentIndex)]")
        }
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        let s = archive.storage
        try s.pointee.checkDecoding()
        guard position < end, s.pointee.reader.base.load(fromByteOffset: position, as: UInt8.self) == ArchiveTag.null else {
            return false
        }
        position += 1
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try element { try Bool.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: String.Type) throws -> String { try element { try String.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try element { try Double.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try element { try Float.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try element { try Int.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try element { try Int8.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try element { try Int16.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try element { try Int32.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try element { try Int64.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try element { try UInt.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try element { try UInt8.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try element { try UInt16.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try element { try UInt32.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try element { try UInt64.read(from: &$0.pointee.reader) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let archive = self.archive
        return try element { _ in try archive.readDecodable(T.self) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let archive = self.archive
        let record = try element { _ in try archive.nestedRecord() }
        return KeyedDecodingContainer(KeyedReader<NestedKey>(archive: archive, record: record))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let archive = self.archive
        return try element { _ in try UnkeyedReader(archive: archive) }
    }

    mutating func superDecoder() throws -> any Decoder {
        let archive = self.archive
        return try element { s in
            let start = s.pointee.reader.pos
            try s.pointee.reader.skipValue()
            return SlotDecoder(archive: archive, start: start, end: s.pointee.reader.pos)
        }
    }
}

struct SingleValueReader: SingleValueDecodingContainer {
    let archive: ArchiveDecoder
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { (try? archive.decodeNil()) ?? false }
    func decode(_ type: Bool.Type) throws -> Bool { try archive.decodePrimitive(Bool.self) }
    func decode(_ type: String.Type) throws -> String { try archive.decodePrimitive(String.self) }
    func decode(_ type: Double.Type) throws -> Double { try archive.decodePrimitive(Double.self) }
    func decode(_ type: Float.Type) throws -> Float { try archive.decodePrimitive(Float.self) }
    func decode(_ type: Int.Type) throws -> Int { try archive.decodePrimitive(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try archive.decodePrimitive(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try archive.decodePrimitive(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try archive.decodePrimitive(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try archive.decodePrimitive(Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try archive.decodePrimitive(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try archive.decodePrimitive(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try archive.decodePrimitive(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try archive.decodePrimitive(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try archive.decodePrimitive(UInt64.self) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try archive.storage.pointee.beginSingleValue()
        return try archive.readDecodable(T.self)
    }
}

/// The decoder `superDecoder()` returns: it decodes the value stored at one position.
struct SlotDecoder: Decoder {
    let archive: ArchiveDecoder
    let start: Int
    let end: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Runs `body` with the reader on the slot's value and bounded by it (the slot may be
    /// read after the container that holds it was left), then puts the reader back.
    private func at<R>(_ body: () throws -> R) throws -> R {
        let s = archive.storage
        let saved = s.pointee.reader.pos
        let savedEnd = s.pointee.reader.end
        s.pointee.reader.pos = start
        s.pointee.reader.end = end
        defer {
            s.pointee.reader.pos = saved
            s.pointee.reader.end = savedEnd
        }
        return try body()
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try at { KeyedDecodingContainer(KeyedReader<Key>(archive: archive, record: try archive.nestedRecord())) }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try at { try UnkeyedReader(archive: archive) }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SlotValueReader(archive: archive, start: start, end: end)
    }
}

/// The single-value container of a `superDecoder` slot: reads the value stored there.
struct SlotValueReader: SingleValueDecodingContainer {
    let archive: ArchiveDecoder
    let start: Int
    /// Where the slot's value ends.
    let end: Int
    var codingPath: [any CodingKey] { [] }

    /// Runs `body` with the reader on the slot's value and bounded by it (the slot may be
    /// read after the container that holds it was left), then puts the reader back.
    private func at<R>(_ body: () throws -> R) throws -> R {
        let s = archive.storage
        let saved = s.pointee.reader.pos
        let savedEnd = s.pointee.reader.end
        s.pointee.reader.pos = start
        s.pointee.reader.end = end
        defer {
            s.pointee.reader.pos = saved
            s.pointee.reader.end = savedEnd
        }
        return try body()
    }

    func decodeNil() -> Bool {
        archive.storage.pointee.reader.base.load(fromByteOffset: start, as: UInt8.self) == ArchiveTag.null
    }

    func decode(_ type: Bool.Type) throws -> Bool { try at { try Bool.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: String.Type) throws -> String { try at { try String.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: Double.Type) throws -> Double { try at { try Double.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: Float.Type) throws -> Float { try at { try Float.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: Int.Type) throws -> Int { try at { try Int.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: Int8.Type) throws -> Int8 { try at { try Int8.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: Int16.Type) throws -> Int16 { try at { try Int16.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: Int32.Type) throws -> Int32 { try at { try Int32.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: Int64.Type) throws -> Int64 { try at { try Int64.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: UInt.Type) throws -> UInt { try at { try UInt.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try at { try UInt8.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try at { try UInt16.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try at { try UInt32.read(from: &archive.storage.pointee.reader) } }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try at { try UInt64.read(from: &archive.storage.pointee.reader) } }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try at { try archive.readDecodable(T.self) } }
}
