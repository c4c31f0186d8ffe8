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
