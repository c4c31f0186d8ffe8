import Archivist
import Foundation

/// The elements of an unkeyed container: an `NSArray`'s (or set's) references, or a plain
/// plist array's fields, kept as they are in the table (wrapping each as an item up front cost
/// an array per container).
enum KeyedArchiveElements {
    case references([KeyedArchiveReference])
    case fields([KeyedArchiveField])

    var count: Int {
        switch self {
        case .references(let references): references.count
        case .fields(let fields): fields.count
        }
    }

    subscript(index: Int) -> KeyedArchiveItem {
        switch self {
        case .references(let references): .object(references[index])
        case .fields(let fields): KeyedArchiveItem(fields[index])
        }
    }
}

/// The unkeyed container: an array's, set's or ordered set's elements.
struct KeyedArchiveUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: KeyedArchiveValueDecoder
    let elements: KeyedArchiveElements
    private(set) var currentIndex = 0

    init(decoder: KeyedArchiveValueDecoder, elements: KeyedArchiveElements) {
        self.decoder = decoder
        self.elements = elements
        count = elements.count
    }

    let count: Int?
    /// The decoder's coding path, built once (when first needed) and shared by every child.
    var codingPath: [any CodingKey] { decoder.containerPath }
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
        guard !child.isNil else {
            throw decoder.error(.valueNotFound, "element \(index) is nil", key: IndexKey(intValue: index))
        }
        return child
    }

    /// The next element when it is a string object, taken (depth and budget checked as for a
    /// child decoder, which it does without); `nil`, taking nothing, for anything else.
    private mutating func nextString() throws -> String? {
        guard !isAtEnd, case .references(let references) = elements,
            case .string(let value) = decoder.session.objects[references[currentIndex].index]
        else { return nil }
        try decoder.admit(key: IndexKey(intValue: currentIndex), depth: decoder.depth)
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return false }
        let isNil: Bool
        switch elements[currentIndex] {
        case .object(let reference):
            switch decoder.session.objects[reference.index] {
            case .null, .nsNull: isNil = true
            default: isNil = false
            }
        case .field: isNil = false
        }
        if isNil {
            try decoder.admit(key: IndexKey(intValue: currentIndex), depth: decoder.depth)
            currentIndex += 1
        }
        return isNil
    }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try nonNil().bool() }
    mutating func decode(_ type: String.Type) throws -> String {
        if let value = try nextString() { return value }
        return try nonNil().string()
    }
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
        // `[String]` comes here (`Array.init(from:)` is generic): a metatype compare, then the
        // string read in place instead of through a child decoder.
        if T.self == String.self, let value = try nextString() { return value as! T }
        // `NSNull` and `$null` reach `T`: its `init(from:)` may accept them (`decodeNil()`),
        // and asking such a decoder for a value throws `.valueNotFound`.
        return try next().decode(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
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
