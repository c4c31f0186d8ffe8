import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// One convention for where an error happened, on every decoding path: `codingPath` runs from
/// the `$top` key the decode started at (`root`) down to the failing key, as
/// `docs/FoundationBridge.md` shows (`["root", "array", "[1]"]`). Paths into the archive's own
/// layout (a malformed table) start with `$objects` or `$top` instead.
@Suite struct KeyedArchiveErrorPathTests {
    struct Strings: Decodable, KeyedArchiveDecodable {
        var array: [String]
        init(from unarchiver: KeyedArchiveUnarchiver) throws {
            array = try unarchiver.decodeRequiredObject(of: [String].self, forKey: "array")
        }
    }

    @Test(.needsKeyedArchiveFixtures) func theDecoderAndTheCoderShapedAPIAgree() throws {
        let data = try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/note.plist")
        let archive = try KeyedArchive(data: data)
        let codable = try #require(throws: ArchiveError.self) { try archive.decode(Strings.self) }
        let coder = try #require(throws: ArchiveError.self) { try archive.unarchive(Strings.self) }
        #expect(codable.code == .typeMismatch && coder.code == .typeMismatch)
        #expect(codable.codingPath == ["root", "array", "[1]"])
        #expect(coder.codingPath == codable.codingPath)
        let bridged = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.decode(Strings.self, from: data, allowedClassNames: ["Note"])
        }
        #expect(bridged.codingPath == codable.codingPath)
    }

    @Test(.needsKeyedArchiveFixtures) func theTopKeyNamesTheStart() throws {
        struct Title: Decodable { var title: Int }
        let data = try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/note.plist")
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchive(data: data).decode(Title.self, key: "root")
        }
        #expect(error.codingPath == ["root", "title"])
        let missing = try #require(throws: ArchiveError.self) {
            try KeyedArchive(data: data).decode(Title.self, key: "other")
        }
        #expect(missing.code == .keyNotFound && missing.codingPath == ["$top", "other"])
    }

    /// A model's own `DecodingError` keeps its place, under the same start.
    @Test func aModelsOwnErrorKeepsItsPath() throws {
        struct Picky: Decodable {
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: AnyKey.self)
                throw DecodingError.dataCorruptedError(
                    forKey: AnyKey(stringValue: "title"),
                    in: container,
                    debugDescription: "no"
                )
            }
        }
        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        let data = try KeyedArchiveWriter.encode([["title": "x"]])
        let error = try #require(throws: ArchiveError.self) { try KeyedArchive.decode([Picky].self, from: data) }
        #expect(error.codingPath == ["root", "[0]", "title"], "\(error)")
        #expect(error.underlyingError is DecodingError)
    }
}
