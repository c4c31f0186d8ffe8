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
        do {
            return try s.reading(from: position, to: end) {
                let value = try body(s)
                position = s.pointee.reader.pos
                currentIndex += 1
                return value
            }
        } catch let error as ArchiveError {
            throw error.prefixed(by: "[\(currentIndex)]")
        }
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        let s = archive.storage
        try s.pointee.checkDecoding()
        guard position < end, s.pointee.reader.base.load(fromByteOffset: position, as: UInt8.self) == ArchiveTag.null
        else {
            return false
        }
        position += 1
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try element { try Bool.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: String.Type) throws -> String {
        try element { try String.read(from: &$0.pointee.reader) }
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        try element { try Double.read(from: &$0.pointee.reader) }
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        try element { try Float.read(from: &$0.pointee.reader) }
    }
    mutating func decode(_ type: Int.Type) throws -> Int { try element { try Int.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try element { try Int8.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        try element { try Int16.read(from: &$0.pointee.reader) }
    }
    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        try element { try Int32.read(from: &$0.pointee.reader) }
    }
    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        try element { try Int64.read(from: &$0.pointee.reader) }
    }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try element { try UInt.read(from: &$0.pointee.reader) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        try element { try UInt8.read(from: &$0.pointee.reader) }
    }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        try element { try UInt16.read(from: &$0.pointee.reader) }
    }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        try element { try UInt32.read(from: &$0.pointee.reader) }
    }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        try element { try UInt64.read(from: &$0.pointee.reader) }
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let archive = self.archive
        return try element { _ in try archive.readDecodable(T.self) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
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
