/// The single-value container of the value being decoded: reads it through the
/// ``ArchiveDecoder`` as its own `init(from:)` would.
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
