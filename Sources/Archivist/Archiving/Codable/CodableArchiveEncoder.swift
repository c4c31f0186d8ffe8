import Foundation

/// Where a Codable container writes: the value frame's own record, or a nested container
/// (or an unwritten `superEncoder` slot) on the encoder's stack of open containers.
enum CodableTarget {
    case frame(id: Int)
    case nested(level: Int, id: Int)
}

/// The `Encoder` that runs a `Codable` type's `encode(to:)` over the native format, so
/// Codable and hand-written models land in the same archive (and keep object identity for
/// `Archivable` classes).
struct CodableArchiveEncoder: Encoder {
    let archive: ArchiveEncoder
    let target: CodableTarget
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let writer = CodableWriter(
            archive: archive,
            target: archive.codableContainerTarget(from: target, kind: .record)
        )
        return KeyedEncodingContainer(KeyedContainer<Key>(writer: writer))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedContainer(
            writer: CodableWriter(archive: archive, target: archive.codableContainerTarget(from: target, kind: .array))
        )
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(writer: CodableWriter(archive: archive, target: target))
    }
}

/// The shared write path of the three container kinds.
struct CodableWriter {
    let archive: ArchiveEncoder
    /// Where the writes go; `nil` when the container could not be opened (the error is
    /// reported by the first write, as containers can't throw when created).
    let target: CodableTarget?

    private var storage: UnsafeMutablePointer<EncoderStorage> { archive.storage }

    /// Checks the container is still open and closes nested containers written after it.
    func prepare() throws {
        guard let target else {
            throw ArchiveError(
                .invalidValue,
                "a Codable container was requested after this value wrote another kind of value"
            )
        }
        switch target {
        case .frame(let id):
            guard storage.pointee.frame.id == id else { throw stale() }
            storage.pointee.closeContainers(above: storage.pointee.frame.baseLevel)
        case .nested(let level, let id):
            guard level < storage.pointee.open.count, storage.pointee.open[level].id == id else { throw stale() }
            storage.pointee.closeContainers(above: level + 1)
        }
    }

    private func stale() -> ArchiveError {
        ArchiveError(
            .invalidValue,
            "a Codable container was written to after its value or a sibling container ended; the archive writes containers in one pass"
        )
    }

    /// Writes a field key (keyed containers) and prepares for its value.
    @inline(__always)
    func beginField(_ key: String) throws {
        // Nearly every field: the value's own record, open, with no nested container above
        // it. What `prepare()` and `EncoderStorage.beginField` would check, in one test.
        if case .frame(let id)? = target, storage.pointee.frame.id == id, storage.pointee.frame.mode == .keyed,
            storage.pointee.open.count <= storage.pointee.frame.baseLevel
        {
            storage.pointee.out.appendVarint(storage.pointee.intern(key))
            return
        }
        try beginFieldInGeneral(key)
    }

    private func beginFieldInGeneral(_ key: String) throws {
        try prepare()
        switch target {
        case .frame?: try storage.pointee.beginField(key)
        case .nested?: storage.pointee.out.appendVarint(storage.pointee.intern(key))
        case nil: break
        }
    }

    /// Counts an element (unkeyed containers) and prepares for it.
    func beginElement() throws {
        try prepare()
        if case .nested(let level, _)? = target { storage.pointee.open[level].count += 1 }
    }

    /// Prepares for the single value of a single-value container.
    func beginSingle() throws {
        try prepare()
        switch target {
        case .frame?: try storage.pointee.beginSingleValue()
        case .nested(let level, _)?:
            guard storage.pointee.open[level].kind == .slot else {
                throw ArchiveError(.invalidValue, "a single value written into a container")
            }
            storage.pointee.open[level].kind = .closed
        case nil: break
        }
    }

    func primitive<P: ArchivePrimitive>(_ value: P, key: String) throws {
        try beginField(key)
        P.write(value, to: &storage.pointee.out)
    }

    /// Writes an element of an unkeyed container.
    func element<P: ArchivePrimitive>(_ value: P) throws {
        try beginElement()
        P.write(value, to: &storage.pointee.out)
    }

    /// Writes the single value of a single-value container: its value's own, or a
    /// `superEncoder` slot's, which it fills (so the slot is not closed again as unwritten).
    func single<P: ArchivePrimitive>(_ value: P) throws {
        try beginSingle()
        P.write(value, to: &storage.pointee.out)
    }

    func value<T: Encodable>(_ value: T) throws {
        try archive.writeEncodable(value)
    }

    func nested(_ kind: EncoderStorage.OpenContainer.Kind) -> CodableTarget {
        let id = storage.pointee.pushContainer(kind)
        return .nested(level: storage.pointee.open.count - 1, id: id)
    }
}

struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: CodableWriter
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {
        try writer.beginField(key.stringValue)
        writer.archive.storage.pointee.out.append(ArchiveTag.null)
    }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try writer.primitive(value, key: key.stringValue) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try writer.beginField(key.stringValue)
        do {
            try writer.value(value)
        } catch let error as ArchiveError {
            throw error.prefixed(by: key.stringValue)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let target: CodableTarget? = (try? writer.beginField(key.stringValue)).map { writer.nested(.record) }
        return KeyedEncodingContainer(
            KeyedContainer<NestedKey>(writer: CodableWriter(archive: writer.archive, target: target))
        )
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let target: CodableTarget? = (try? writer.beginField(key.stringValue)).map { writer.nested(.array) }
        return UnkeyedContainer(writer: CodableWriter(archive: writer.archive, target: target))
    }

    mutating func superEncoder() -> any Encoder { superEncoder(key: "super") }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(key: key.stringValue) }

    private func superEncoder(key: String) -> any Encoder {
        let target: CodableTarget? = (try? writer.beginField(key)).map { writer.nested(.slot) }
        return SlotEncoder(archive: writer.archive, target: target)
    }
}

struct UnkeyedContainer: UnkeyedEncodingContainer {
    let writer: CodableWriter
    var codingPath: [any CodingKey] { [] }
    var count: Int {
        guard case .nested(let level, let id)? = writer.target,
            level < writer.archive.storage.pointee.open.count,
            writer.archive.storage.pointee.open[level].id == id
        else { return 0 }
        return writer.archive.storage.pointee.open[level].count
    }

    mutating func encodeNil() throws {
        try writer.beginElement()
        writer.archive.storage.pointee.out.append(ArchiveTag.null)
    }
    mutating func encode(_ value: Bool) throws { try writer.element(value) }
    mutating func encode(_ value: String) throws { try writer.element(value) }
    mutating func encode(_ value: Double) throws { try writer.element(value) }
    mutating func encode(_ value: Float) throws { try writer.element(value) }
    mutating func encode(_ value: Int) throws { try writer.element(value) }
    mutating func encode(_ value: Int8) throws { try writer.element(value) }
    mutating func encode(_ value: Int16) throws { try writer.element(value) }
    mutating func encode(_ value: Int32) throws { try writer.element(value) }
    mutating func encode(_ value: Int64) throws { try writer.element(value) }
    mutating func encode(_ value: UInt) throws { try writer.element(value) }
    mutating func encode(_ value: UInt8) throws { try writer.element(value) }
    mutating func encode(_ value: UInt16) throws { try writer.element(value) }
    mutating func encode(_ value: UInt32) throws { try writer.element(value) }
    mutating func encode(_ value: UInt64) throws { try writer.element(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = count
        try writer.beginElement()
        do {
            try writer.value(value)
        } catch let error as ArchiveError {
            throw error.prefixed(by: "[\(index)]")
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let target: CodableTarget? = (try? writer.beginElement()).map { writer.nested(.record) }
        return KeyedEncodingContainer(
            KeyedContainer<NestedKey>(writer: CodableWriter(archive: writer.archive, target: target))
        )
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let target: CodableTarget? = (try? writer.beginElement()).map { writer.nested(.array) }
        return UnkeyedContainer(writer: CodableWriter(archive: writer.archive, target: target))
    }

    mutating func superEncoder() -> any Encoder {
        let target: CodableTarget? = (try? writer.beginElement()).map { writer.nested(.slot) }
        return SlotEncoder(archive: writer.archive, target: target)
    }
}

struct SingleValueContainer: SingleValueEncodingContainer {
    let writer: CodableWriter
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws {
        try writer.beginSingle()
        writer.archive.storage.pointee.out.append(ArchiveTag.null)
    }
    mutating func encode(_ value: Bool) throws { try writer.single(value) }
    mutating func encode(_ value: String) throws { try writer.single(value) }
    mutating func encode(_ value: Double) throws { try writer.single(value) }
    mutating func encode(_ value: Float) throws { try writer.single(value) }
    mutating func encode(_ value: Int) throws { try writer.single(value) }
    mutating func encode(_ value: Int8) throws { try writer.single(value) }
    mutating func encode(_ value: Int16) throws { try writer.single(value) }
    mutating func encode(_ value: Int32) throws { try writer.single(value) }
    mutating func encode(_ value: Int64) throws { try writer.single(value) }
    mutating func encode(_ value: UInt) throws { try writer.single(value) }
    mutating func encode(_ value: UInt8) throws { try writer.single(value) }
    mutating func encode(_ value: UInt16) throws { try writer.single(value) }
    mutating func encode(_ value: UInt32) throws { try writer.single(value) }
    mutating func encode(_ value: UInt64) throws { try writer.single(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try writer.beginSingle()
        try writer.value(value)
    }
}

/// The encoder `superEncoder()` returns: its first container decides what the slot holds.
struct SlotEncoder: Encoder {
    let archive: ArchiveEncoder
    let target: CodableTarget?
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedContainer<Key>(writer: CodableWriter(archive: archive, target: fill(.record))))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedContainer(writer: CodableWriter(archive: archive, target: fill(.array)))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(writer: CodableWriter(archive: archive, target: target))
    }

    /// Turns the unwritten slot into a record or array where it stands.
    private func fill(_ kind: EncoderStorage.OpenContainer.Kind) -> CodableTarget? {
        guard let target, case .nested(let level, _) = target else { return nil }
        let writer = CodableWriter(archive: archive, target: target)
        guard (try? writer.prepare()) != nil, archive.storage.pointee.open[level].kind == .slot else { return nil }
        archive.storage.pointee.open.removeLast()
        return writer.nested(kind)
    }
}

/// A Codable value the archive writes as a conditional reference to an object (``BackReference``),
/// found by ``CodableTypeKinds`` once per type rather than by its `encode(to:)` casting the
/// `Encoder` back to ``CodableArchiveEncoder`` for every value.
protocol CodableReferenceWriting {
    /// The referenced object, or `nil`.
    var referencedObject: AnyObject? { get }
}

extension CodableArchiveEncoder {
    /// Writes `object` as a conditional reference (or `nil`) as the single value at `target`.
    static func writeReference(_ object: AnyObject?, archive: ArchiveEncoder, target: CodableTarget) throws {
        let writer = CodableWriter(archive: archive, target: target)
        try writer.beginSingle()
        if let object {
            try archive.storage.pointee.writeConditionalReference(object)
        } else {
            archive.storage.pointee.out.append(ArchiveTag.null)
        }
    }
}

/// What `ArchiveEncoder.writeEncodable` found each Codable type it met to be, so a type pays
/// for its two conditional casts (to `any Archivable`, then to ``CodableReferenceWriting``)
/// once per encoder rather than once per value: the cast that fails, as it does for every
/// ``BackReference`` and plain Codable struct, walks the conformance cache each time (about
/// 400 instructions).
struct CodableTypeKinds {
    enum Kind {
        /// Written through its `Archivable` conformance.
        case archivable(any Archivable.Type)
        /// Written as a conditional reference.
        case reference(any CodableReferenceWriting.Type)
        /// Written by its `encode(to:)` in a value frame of its own.
        case plain
        /// A class or `Optional` that is not `Archivable` itself: a value may still be (a
        /// subclass, or the wrapped value, which a conditional cast unwraps), so it is cast
        /// each time.
        case dynamic
    }

    /// The types met so far; a handful in practice, so a linear search.
    private var entries: [(type: ObjectIdentifier, kind: Kind)] = []
    /// More types than this are looked up each time (the search would cost more than a cast).
    private static let capacity = 16

    mutating func kind<T>(of type: T.Type) -> Kind {
        let id = ObjectIdentifier(type)
        for entry in entries where entry.type == id { return entry.kind }
        let kind: Kind
        if let archivable = type as? any Archivable.Type {
            kind = .archivable(archivable)
        } else if type is AnyObject.Type || type is any OptionalMarker.Type {
            kind = .dynamic
        } else if let reference = type as? any CodableReferenceWriting.Type {
            kind = .reference(reference)
        } else {
            kind = .plain
        }
        if entries.count < Self.capacity { entries.append((id, kind)) }
        return kind
    }
}

/// Marks `Optional`, for ``CodableTypeKinds``.
protocol OptionalMarker {}
extension Optional: OptionalMarker {}
