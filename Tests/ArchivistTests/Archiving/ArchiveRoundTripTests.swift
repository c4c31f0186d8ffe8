import Foundation
import Testing

@testable import Archivist

/// A struct with one field of every supported primitive, written by hand.
struct AllKinds: Archivable, Equatable {
    var bool = true
    var int = -42
    var int8: Int8 = -8
    var int16: Int16 = .min
    var int32: Int32 = .max
    var int64: Int64 = .min
    var uint: UInt = .max
    var uint8: UInt8 = 255
    var uint16: UInt16 = 65_535
    var uint32: UInt32 = 7
    var uint64: UInt64 = .max
    var float: Float = 1.5
    var double = Double.pi
    var string = "héllo, 世界 👋"
    var data = Data([0, 1, 2, 255])
    var date = Date(timeIntervalSinceReferenceDate: 123_456.789)
    var url = URL(string: "https://example.com/a?b=c#d")!
    var uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    var optional: String? = nil
    var optionalSet: Int? = 5
    var array = [1, 2, 3]
    var set: Set<String> = ["a", "b"]
    var dictionary = ["one": 1, "two": 2]
    var intKeys = [1: "one", 2: "two"]
    var nested = [[1.5], [], [2.5, 3.5]]
    var priority = Priority.high
    var optionals: [Int?] = [1, nil, 3]

    init() {}

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(bool, forKey: "bool")
        try archive.encode(int, forKey: "int")
        try archive.encode(int8, forKey: "int8")
        try archive.encode(int16, forKey: "int16")
        try archive.encode(int32, forKey: "int32")
        try archive.encode(int64, forKey: "int64")
        try archive.encode(uint, forKey: "uint")
        try archive.encode(uint8, forKey: "uint8")
        try archive.encode(uint16, forKey: "uint16")
        try archive.encode(uint32, forKey: "uint32")
        try archive.encode(uint64, forKey: "uint64")
        try archive.encode(float, forKey: "float")
        try archive.encode(double, forKey: "double")
        try archive.encode(string, forKey: "string")
        try archive.encode(data, forKey: "data")
        try archive.encode(date, forKey: "date")
        try archive.encode(url, forKey: "url")
        try archive.encode(uuid, forKey: "uuid")
        try archive.encode(optional, forKey: "optional")
        try archive.encode(optionalSet, forKey: "optionalSet")
        try archive.encode(array, forKey: "array")
        try archive.encode(set, forKey: "set")
        try archive.encode(dictionary, forKey: "dictionary")
        try archive.encode(intKeys, forKey: "intKeys")
        try archive.encode(nested, forKey: "nested")
        try archive.encode(priority, forKey: "priority")
        try archive.encode(optionals, forKey: "optionals")
    }

    init(from archive: ArchiveDecoder) throws {
        bool = try archive.decode(Bool.self, forKey: "bool")
        int = try archive.decode(Int.self, forKey: "int")
        int8 = try archive.decode(Int8.self, forKey: "int8")
        int16 = try archive.decode(Int16.self, forKey: "int16")
        int32 = try archive.decode(Int32.self, forKey: "int32")
        int64 = try archive.decode(Int64.self, forKey: "int64")
        uint = try archive.decode(UInt.self, forKey: "uint")
        uint8 = try archive.decode(UInt8.self, forKey: "uint8")
        uint16 = try archive.decode(UInt16.self, forKey: "uint16")
        uint32 = try archive.decode(UInt32.self, forKey: "uint32")
        uint64 = try archive.decode(UInt64.self, forKey: "uint64")
        float = try archive.decode(Float.self, forKey: "float")
        double = try archive.decode(Double.self, forKey: "double")
        string = try archive.decode(String.self, forKey: "string")
        data = try archive.decode(Data.self, forKey: "data")
        date = try archive.decode(Date.self, forKey: "date")
        url = try archive.decode(URL.self, forKey: "url")
        uuid = try archive.decode(UUID.self, forKey: "uuid")
        optional = try archive.decodeIfPresent(String.self, forKey: "optional")
        optionalSet = try archive.decodeIfPresent(Int.self, forKey: "optionalSet")
        array = try archive.decode([Int].self, forKey: "array")
        set = try archive.decode(Set<String>.self, forKey: "set")
        dictionary = try archive.decode([String: Int].self, forKey: "dictionary")
        intKeys = try archive.decode([Int: String].self, forKey: "intKeys")
        nested = try archive.decode([[Double]].self, forKey: "nested")
        priority = try archive.decode(Priority.self, forKey: "priority")
        optionals = try archive.decode([Int?].self, forKey: "optionals")
    }
}

@Suite struct ArchiveRoundTripTests {
    @Test func everyValueKindRoundTrips() throws {
        let value = AllKinds()
        let data = try Archive.encode(value)
        #expect(try Archive.decode(AllKinds.self, from: data) == value)
    }

    @Test(arguments: [Int.min, -1, 0, 1, 63, 64, 127, 128, 300, Int(Int32.max), Int.max])
    func integersRoundTripAtTheirEdges(value: Int) throws {
        #expect(try Archive.decode(Int.self, from: Archive.encode(value)) == value)
        #expect(try Archive.decode([Int].self, from: Archive.encode([value, value])) == [value, value])
    }

    @Test func topLevelCollectionsRoundTrip() throws {
        let strings = ["a", "", "ß", String(repeating: "x", count: 10_000)]
        #expect(try Archive.decode([String].self, from: Archive.encode(strings)) == strings)
        let map: [UUID: [Date]] = [UUID(): [Date(timeIntervalSince1970: 0)], UUID(): []]
        #expect(try Archive.decode([UUID: [Date]].self, from: Archive.encode(map)) == map)
        let optional: String? = nil
        #expect(try Archive.decode(String?.self, from: Archive.encode(optional)) == nil)
    }

    @Test func integersWidenAndNarrowWithRangeChecks() throws {
        let small = try Archive.encode(Int8(-5))
        #expect(try Archive.decode(Int64.self, from: small) == -5)
        let big = try Archive.encode(Int64(300))
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(Int8.self, from: big) }
        #expect(error?.code == .typeMismatch)
        #expect(try Archive.decode(Double.self, from: big) == 300)
    }

    @Test func unknownRawValueIsATypeMismatch() throws {
        let data = try Archive.encode(7)
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(Priority.self, from: data) }
        #expect(error?.code == .typeMismatch)
    }

    @Test func wrongFieldTypeNamesTheKeyPath() throws {
        struct Wrong: Archivable {
            var letters: [Int]
            func encode(to archive: ArchiveEncoder) throws { try archive.encode(letters, forKey: "letters") }
            init(from archive: ArchiveDecoder) throws { letters = try archive.decode([Int].self, forKey: "letters") }
            init() { letters = [] }
        }
        let user = makeUser(1, letters: 2)
        let data = try Archive.encode(user)
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(Wrong.self, from: data) }
        #expect(error?.code == .typeMismatch)
    }
}
