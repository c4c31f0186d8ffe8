import Foundation
import Testing

@testable import Archivist

/// Codable reaches `Date`, `Data`, `URL` and `UUID` through its generic `encode<T>` and
/// `decode<T>`, which write and read them inline: the bytes must match the hand-written
/// overloads, and a wrong value must still throw a typed error naming the key.
@Suite struct ArchiveCodablePrimitiveTests {
    struct CodableStamp: Codable, Archivable, Equatable {
        var date = Date(timeIntervalSinceReferenceDate: 12.5)
        var data = Data([1, 2, 3])
        var url = URL(string: "https://example.com/x")
        var uuid = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1)]
        var single = Wrapper()

        /// A single-value container holding a `Date`.
        struct Wrapper: Codable, Equatable {
            var when = Date(timeIntervalSinceReferenceDate: -3)
            init() {}
            init(from decoder: any Decoder) throws { when = try decoder.singleValueContainer().decode(Date.self) }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(when)
            }
        }
    }

    /// The same fields written by hand, under the same type name.
    struct HandStamp: Archivable {
        static var archiveTypeName: String { CodableStamp.archiveTypeName }
        let stamp = CodableStamp()
        init() {}
        init(from archive: ArchiveDecoder) throws {}
        func encode(to archive: ArchiveEncoder) throws {
            try archive.encode(stamp.date, forKey: "date")
            try archive.encode(stamp.data, forKey: "data")
            try archive.encode(stamp.url, forKey: "url")
            try archive.encode(stamp.uuid, forKey: "uuid")
            try archive.encode(stamp.dates, forKey: "dates")
            try archive.encode(HandWrapper(), forKey: "single")
        }
    }

    struct HandWrapper: Archivable {
        init() {}
        init(from archive: ArchiveDecoder) throws {}
        func encode(to archive: ArchiveEncoder) throws { try archive.encodeSingleValue(CodableStamp.Wrapper().when) }
    }

    @Test func codableFoundationValuesWriteTheHandWrittenBytes() throws {
        let codable = try Archive.encode(CodableStamp())
        #expect(codable == (try Archive.encode(HandStamp())))
        #expect(try Archive.decode(CodableStamp.self, from: codable) == CodableStamp())
    }

    @Test func aWrongKindOfValueNamesTheKey() throws {
        struct WrongDate: Codable, Archivable {
            static var archiveTypeName: String { "Stamp" }
            var date = "not a date"
        }
        struct WantsDate: Codable, Archivable {
            static var archiveTypeName: String { "Stamp" }
            var date: Date
        }
        let data = try Archive.encode(WrongDate())
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(WantsDate.self, from: data) }
        #expect(error?.code == .typeMismatch)
        #expect(error?.codingPath == ["date"])
    }
}
