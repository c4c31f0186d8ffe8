import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// The bridge's Swift-type path: validator, then the pure-Swift reader instead of NSKeyedUnarchiver.
@Suite struct KeyedArchiverBridgeSwiftTests {
    struct Letter: Decodable {
        var content: String
        var sent: Date
    }

    @Test func swiftTypeDecodesWithoutFoundationsUnarchiver() throws {
        let sent = Date(timeIntervalSinceReferenceDate: 1_000)
        let data = try NSKeyedArchiver.archivedData(
            withRootObject: SecureLetter(content: "hi", sent: sent),
            requiringSecureCoding: true
        )
        let letter = try KeyedArchiverBridge.decode(
            Letter.self,
            from: data,
            allowedClassNames: [NSStringFromClass(SecureLetter.self)]
        )
        #expect(letter.content == "hi" && letter.sent == sent)
    }

    /// `SecureLetter`'s fields, read through the NSCoder-shaped API.
    struct HandLetter: KeyedArchiveDecodable {
        var content: String
        var sent: Date
        init(from unarchiver: KeyedArchiveUnarchiver) throws {
            content = try unarchiver.decodeRequiredObject(of: String.self, forKey: "content")
            sent = try unarchiver.decodeRequiredObject(of: Date.self, forKey: "sent")
        }
    }

    @Test func keyedArchiveDecodableTypeDecodesThroughTheBridge() throws {
        let sent = Date(timeIntervalSinceReferenceDate: 2_000)
        let data = try NSKeyedArchiver.archivedData(
            withRootObject: SecureLetter(content: "hello", sent: sent),
            requiringSecureCoding: true
        )
        let letter = try KeyedArchiverBridge.unarchive(
            HandLetter.self,
            from: data,
            allowedClassNames: [NSStringFromClass(SecureLetter.self)]
        )
        #expect(letter.content == "hello" && letter.sent == sent)
        let list = try KeyedArchiverBridge.unarchive(
            [String].self,
            from: try KeyedArchiverBridge.archive(NSArray(array: ["a", "b"]))
        )
        #expect(list == ["a", "b"])
    }

    @Test(.needsKeyedArchiveFixtures) func keyedArchiveDecodableKeepsTheValidatorsGuarantees() throws {
        let data = try NSKeyedArchiver.archivedData(
            withRootObject: SecureLetter(content: "hi", sent: Date()),
            requiringSecureCoding: true
        )
        let disallowed = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive(HandLetter.self, from: data)
        }
        #expect(disallowed.code == .disallowedType)
        let bomb = Data(KeyedArchiveDAGs.doubling(.array, levels: 64))
        let unfolded = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive([[String]].self, from: bomb)
        }
        #expect(unfolded.code == .limitExceeded(.objectCount))
        let cyclic = try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/circularReference.plist")
        let cycle = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive([[String]].self, from: cyclic)
        }
        #expect(cycle.code == .unresolvedReference)
        let wrong = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive(
                HandLetter.self,
                from: try KeyedArchiverBridge.archive(NSArray(array: ["a"]))
            )
        }
        #expect(wrong.code == .valueNotFound)
    }

    @Test(.needsKeyedArchiveFixtures) func validatorGuaranteesStillHold() throws {
        let data = try NSKeyedArchiver.archivedData(
            withRootObject: SecureLetter(content: "hi", sent: Date()),
            requiringSecureCoding: true
        )
        let disallowed = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.decode(Letter.self, from: data)
        }
        #expect(disallowed.code == .disallowedType)
        let bomb = Data(KeyedArchiveDAGs.doubling(.array, levels: 64))
        let unfolded = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.decode([[String]].self, from: bomb)
        }
        #expect(unfolded.code == .limitExceeded(.objectCount))
        let cyclic = try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/circularReference.plist")
        let cycle = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.decode([[String]].self, from: cyclic)
        }
        #expect(cycle.code == .unresolvedReference)
    }
}
