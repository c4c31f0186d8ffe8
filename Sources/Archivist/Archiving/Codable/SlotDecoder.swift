/// The decoder `superDecoder()` returns: it decodes the value stored at one position.
///
/// It and its single-value container read with the reader on the slot's value and bounded by
/// it (``Swift/UnsafeMutablePointer/reading(from:to:_:)``): the slot may be read after the
/// container that holds it was left.
struct SlotDecoder: Decoder {
    let archive: ArchiveDecoder
    let start: Int
    let end: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try archive.storage.reading(from: start, to: end) {
            KeyedDecodingContainer(KeyedReader<Key>(archive: archive, record: try archive.nestedRecord()))
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try archive.storage.reading(from: start, to: end) { try UnkeyedReader(archive: archive) }
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

    /// Reads the primitive stored in the slot.
    @inline(__always)
    private func primitive<P: ArchivePrimitive>(_ type: P.Type) throws -> P {
        let s = archive.storage
        return try s.reading(from: start, to: end) { try P.read(from: &s.pointee.reader) }
    }

    func decodeNil() -> Bool {
        archive.storage.pointee.reader.base.load(fromByteOffset: start, as: UInt8.self) == ArchiveTag.null
    }

    func decode(_ type: Bool.Type) throws -> Bool { try primitive(Bool.self) }
    func decode(_ type: String.Type) throws -> String { try primitive(String.self) }
    func decode(_ type: Double.Type) throws -> Double { try primitive(Double.self) }
    func decode(_ type: Float.Type) throws -> Float { try primitive(Float.self) }
    func decode(_ type: Int.Type) throws -> Int { try primitive(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try primitive(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try primitive(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try primitive(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try primitive(Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try primitive(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try primitive(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try primitive(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try primitive(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try primitive(UInt64.self) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try archive.storage.reading(from: start, to: end) { try archive.readDecodable(T.self) }
    }
}
