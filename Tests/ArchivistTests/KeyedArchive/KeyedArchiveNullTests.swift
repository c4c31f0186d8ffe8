import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// `NSNull` and `$null` reach the `init(from:)` of the type being decoded, as JSON's `null`
/// reaches it through `JSONDecoder`: `decodeNil()` answers `true`, and only a type that then
/// asks for a value gets `.valueNotFound`, with its path.
@Suite struct KeyedArchiveNullTests {
    /// The usual "any JSON-like value", which tells a null apart itself.
    indirect enum AnyValue: Decodable, Equatable {
        case null
        case string(String)
        case number(Double)
        case array([AnyValue])
        case object([String: AnyValue])

        init(from decoder: any Decoder) throws {
            if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
                var object: [String: AnyValue] = [:]
                for key in keyed.allKeys { object[key.stringValue] = try keyed.decode(AnyValue.self, forKey: key) }
                self = .object(object)
                return
            }
            if var unkeyed = try? decoder.unkeyedContainer() {
                var array: [AnyValue] = []
                while !unkeyed.isAtEnd { array.append(try unkeyed.decode(AnyValue.self)) }
                self = .array(array)
                return
            }
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .null
            } else if let string = try? single.decode(String.self) {
                self = .string(string)
            } else {
                self = .number(try single.decode(Double.self))
            }
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    @Test func nsNullInAnArrayReachesTheElementType() throws {
        let data = try NSKeyedArchiver.archivedData(
            withRootObject: NSArray(array: [foundationNull, "hello"]),
            requiringSecureCoding: true
        )
        #expect(try KeyedArchive.decode([AnyValue].self, from: data) == [.null, .string("hello")])
        #expect(try KeyedArchive.decode(AnyValue.self, from: data) == .array([.null, .string("hello")]))
        // JSONDecoder reads the same shape the same way.
        #expect(
            try JSONDecoder().decode([AnyValue].self, from: Data(#"[null, "hello"]"#.utf8)) == [
                .null, .string("hello"),
            ]
        )
    }

    @Test func nsNullUnderAKeyReachesTheFieldType() throws {
        struct Record: Decodable, Equatable {
            var note: AnyValue
            var rest: AnyValue
        }
        let root = NSDictionary(dictionary: [
            "note": foundationNull, "rest": NSArray(array: [foundationNull, NSNumber(value: 2.5)]),
        ])
        let data = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: true)
        #expect(
            try KeyedArchive.decode(Record.self, from: data)
                == Record(note: .null, rest: .array([.null, .number(2.5)]))
        )
        #expect(
            try KeyedArchive.decode(AnyValue.self, from: data)
                == .object(["note": .null, "rest": .array([.null, .number(2.5)])])
        )
    }

    @Test func nullReferencesReachTheTypeToo() throws {
        // `KeyedArchiveWriter` writes a nil element as the `$null` reference, as NSKeyedArchiver writes nil.
        let data = try KeyedArchiveWriter.encode(["a", nil, "c"] as [String?])
        #expect(try KeyedArchive.decode([AnyValue].self, from: data) == [.string("a"), .null, .string("c")])
        #expect(try KeyedArchive.decode([String?].self, from: data) == ["a", nil, "c"])
    }

    @Test func aNullRootReachesTheType() throws {
        let data = try NSKeyedArchiver.archivedData(withRootObject: foundationNull, requiringSecureCoding: true)
        #expect(try KeyedArchive.decode(AnyValue.self, from: data) == .null)
        #expect(try KeyedArchive.decode(String?.self, from: data) == nil)
        let error = try #require(throws: ArchiveError.self) { try KeyedArchive.decode(String.self, from: data) }
        #expect(error.code == .valueNotFound, "\(error)")
    }

    /// A type that asks for a value where there is none: `.valueNotFound` naming the place,
    /// whatever it asks for (a scalar, a keyed or an unkeyed container, a special value).
    @Test func askingANullForAValueIsValueNotFoundWithThePath() throws {
        struct Point: Decodable { var x: Int }
        struct Holder<Value: Decodable>: Decodable { var value: Value }
        let root = NSArray(array: [NSDictionary(dictionary: ["value": foundationNull])])
        let data = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: true)
        func expectValueNotFound<Value: Decodable>(_ type: Value.Type) {
            let error = #expect(throws: ArchiveError.self, "\(Value.self)") {
                try KeyedArchive.decode([Holder<Value>].self, from: data)
            }
            #expect(error?.code == .valueNotFound, "\(Value.self): \(String(describing: error))")
            #expect(error?.codingPath == ["root", "[0]", "value"], "\(Value.self): \(String(describing: error))")
        }
        expectValueNotFound(Int.self)
        expectValueNotFound(String.self)
        expectValueNotFound(Bool.self)
        expectValueNotFound(Double.self)
        expectValueNotFound(Date.self)
        expectValueNotFound(URL.self)
        expectValueNotFound(UUID.self)
        expectValueNotFound(Data.self)
        expectValueNotFound(Point.self)
        expectValueNotFound([Int].self)
        #expect(try KeyedArchive.decode([Holder<AnyValue>].self, from: data).map(\.value) == [.null])
        #expect(try KeyedArchive.decode([Holder<Int?>].self, from: data).map(\.value) == [nil])

        let elements = try NSKeyedArchiver.archivedData(
            withRootObject: NSArray(array: [foundationNull, "a"]),
            requiringSecureCoding: true
        )
        for decode in [
            { _ = try KeyedArchive.decode([String].self, from: elements) },
            { _ = try KeyedArchive.decode([Point].self, from: elements) },
        ] as [() throws -> Void] {
            let error = #expect(throws: ArchiveError.self) { try decode() }
            #expect(error?.code == .valueNotFound, "\(String(describing: error))")
            #expect(error?.codingPath == ["root", "[0]"], "\(String(describing: error))")
        }
    }
}
