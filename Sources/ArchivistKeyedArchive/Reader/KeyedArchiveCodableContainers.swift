import Archivist
import Foundation

/// The unkeyed container: an array's, set's or ordered set's elements.
struct KeyedArchiveUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: KeyedArchiveValueDecoder
    let elements: [KeyedArchiveItem]
    /// The decoder's coding path, built once and shared by every child.
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(decoder: KeyedArchiveValueDecoder, elements: [KeyedArchiveItem], codingPath: [any CodingKey]) {
        self.decoder = decoder
        self.elements = elements
        self.codingPath = codingPath
    }
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> KeyedArchiveValueDecoder {
        let key = IndexKey(intValue: currentIndex)
        guard !isAtEnd else { throw decoder.error(.valueNotFound, "no element at \(currentIndex)", key: key) }
        let child = try decoder.nested(elements[currentIndex], key: key, path: codingPath)
        currentIndex += 1
        return child
    }

    private mutating func nonNil() throws -> KeyedArchiveValueDecoder {
        let index = currentIndex
        let child = try next()
        guard !child.isNil else { throw decoder.error(.valueNotFound, "element \(index) is nil", key: IndexKey(intValue: index)) }
        return child
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        let isNil = try decoder.nested(elements[currentIndex], key: IndexKey(intValue: currentIndex), path: codingPath).isNil
        if isNil { currentIndex += 1 }
        return isNil
    }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try nonNil().bool() }
    mutating func decode(_ type: String.Type) throws -> String { try nonNil().string() }
    mutating func decode(_ type: Double.Type) throws -> Double { try nonNil().double() }
    mutating func decode(_ type: Float.Type) throws -> Float { try nonNil().float() }
    mutating func decode(_ type: Int.Type) throws -> Int { try nonNil().integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try nonNil().integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try nonNil().integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try nonNil().integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try nonNil().integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try nonNil().integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try nonNil().integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try nonNil().integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try nonNil().integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try nonNil().integer(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // `NSNull` and `$null` reach `T`: its `init(from:)` may accept them (`decodeNil()`),
        // and asking such a decoder for a value throws `.valueNotFound`.
        try next().decode(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try nonNil().container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try nonNil().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}

/// The single-value container: a string, number, date, data, URL or UUID.
struct KeyedArchiveSingleValueContainer: SingleValueDecodingContainer {
    let decoder: KeyedArchiveValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.isNil }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool() }
    func decode(_ type: String.Type) throws -> String { try decoder.string() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.double() }
    func decode(_ type: Float.Type) throws -> Float { try decoder.float() }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type) }
}

/// An array index as a coding key.
struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "[\(intValue ?? 0)]" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
