import Foundation
import Testing

@testable import Archivist

/// Archives in format version 1, written by the encoder before version 2 (commit d30f346):
/// caches on disk hold such bytes, so every reader must keep decoding them.
enum Version1Archives {
    static let allKinds =
        Data(
            base64Encoded: [
                "iUFSVgEAAAApAgAAAAAAAHIBAAAAAAAAQBe+wA5RAQAAAQACAQNTAgMPAwP//wMEA/7///8PBQP///////////8BBgT/////",
                "//////8BBwT/AQgE//8DCQQHCgT///////////8BCwUAAMA/DAYYLURU+yEJQA0HE2jDqWxsbywg5LiW55WMIPCfkYsOCAQA",
                "AQL/DwnJdr6fDCT+QBAKG2h0dHBzOi8vZXhhbXBsZS5jb20vYT9iPWMjZBEL5iHh+MNsSVqT/Awkej5uXxIDChMMCgAAAAMA",
                "AAADAgMEAwYUDAoAAAACAAAABwFiBwFhFQ0SAAAAAgAAAAcDb25lAwIHA3R3bwMEFg0SAAAAAgAAAAMEBwN0d28DAgcDb25l",
                "Fww6AAAAAwAAAAwNAAAAAQAAAAYAAAAAAAD4PwwEAAAAAAAAAAwWAAAAAgAAAAYAAAAAAAAEQAYAAAAAAAAMQBgDBBkMCQAA",
                "AAMAAAADAgADBgEIQWxsS2luZHMAGgRib29sA2ludARpbnQ4BWludDE2BWludDMyBWludDY0BHVpbnQFdWludDgGdWludDE2",
                "BnVpbnQzMgZ1aW50NjQFZmxvYXQGZG91YmxlBnN0cmluZwRkYXRhBGRhdGUDdXJsBHV1aWQLb3B0aW9uYWxTZXQFYXJyYXkD",
                "c2V0CmRpY3Rpb25hcnkHaW50S2V5cwZuZXN0ZWQIcHJpb3JpdHkJb3B0aW9uYWxzAA==",
            ].joined()
        ) ?? Data()

    static let codable =
        Data(
            base64Encoded: [
                "iUFSVgEAAAAZAgAAAAAAAI0BAAAAAAAAdOBehQ5sAQAAAQABAQMFAgT///////////8BAwUAAIA+BAcLQ29kYWJsZSDinJMF",
                "CGQHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH",
                "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBgkAAAAgQyDNwQcKDWZpbGU6Ly8vdG1wL3gICw47HC1KX05rnH2On6Cx",
                "wtMJAxIKDFwAAAADAAAADhIAAAAACw4LAAAAAAwGAAAAAAAAAEAOLwAAAAANDigAAAAADgwfAAAAAwAAAAYAAAAAAADwPwYA",
                "AAAAAAAAQAYAAAAAAAAIQA8CDggAAAAAEA4BAAAAABEHBWdyZWVuEg0gAAAAAgAAAAcBYQwIAAAAAgAAAAMCAwQHAWIMBAAA",
                "AAAAAAATDBoAAAACAAAADAgAAAACAAAABwF4AAwEAAAAAAAAAAEMQ29kYWJsZUtpbmRzABQEYm9vbARpbnQ4BnVpbnQ2NAVm",
                "bG9hdAR0ZXh0BGRhdGEEZGF0ZQN1cmwEdXVpZAdwcmVzZW50BnNoYXBlcwZjaXJjbGUGcmFkaXVzB3BvbHlnb24CXzAGY2xv",
                "c2VkBWVtcHR5BWNvbG9yCW5lc3RlZE1hcAZ0dXBsZXMA",
            ].joined()
        ) ?? Data()

    static let letters =
        Data(
            base64Encoded: [
                "iUFSVgEAAAA3AQAAAAAAANYAAAAAAAAAGkb1TQy1AAAAAQAAAA8ADqoAAAABAAcRdXNlcjNAZXhhbXBsZS5jb20BBwhXcml0",
                "ZXIgMwIMhAAAAAIAAAAPAQ45AAAAAgMD8C4EBwhzZW5kZXIgMAUHFURlYXIgMywgbGV0dGVyIDAg8J+SjAYJAAAAAACkD0EH",
                "AggBCRAADwIOOQAAAAIDA/IuBAcIc2VuZGVyIDEFBxVEZWFyIDMsIGxldHRlciAxIPCfkowGCQAAAAAIpA9BBwEIAgkQAAIE",
                "VXNlcgAGTGV0dGVyAAoHYWNjb3VudAl3cml0ZU5hbWUHbGV0dGVycwhwa051bWJlcgZzZW5kZXIHY29udGVudARkYXRlBmlz",
                "UmVhZAhpbmNvbWluZwR1c2VyAyZXlwE=",
            ].joined()
        ) ?? Data()

    static let selfLoop =
        Data(
            base64Encoded: [
                "iUFSVgEAAABCAAAAAAAAAC4AAAAAAAAA4sF2Sg8ADgsAAAABAAcEbG9vcAEQAAEETm9kZQACBG5hbWUEbmV4dAEd"
            ].joined()
        ) ?? Data()

    static let animals =
        Data(
            base64Encoded: [
                "iUFSVgEAAABoAAAAAAAAAEkAAAAAAAAAPqTIHgwoAAAAAwAAAA8ADgsAAAABAAcHZ2VuZXJpYw8BDgkAAAACAAcDUmV4AQIQ",
                "AQIGQW5pbWFsAANEb2cAAgRuYW1lB2dvb2RCb3kCJjg=",
            ].joined()
        ) ?? Data()

    static let mailbox =
        Data(
            base64Encoded: [
                "iUFSVgEAAACEAAAAAAAAAFQAAAAAAAAAASLAPg8ADjEAAAABAAcDYW5uAQwkAAAAAgAAAA8BDgkAAAACAgcCaGkDEAAPAg4J",
                "AAAAAgIHAnlvAxAAAgdNYWlsYm94AAROb3RlAAQFb3duZXIHbGV0dGVycwR0ZXh0B21haWxib3gDHTVF",
            ].joined()
        ) ?? Data()
}

@Suite struct ArchiveVersion1Tests {
    @Test func fixturesAreVersion1() {
        for data in [
            Version1Archives.allKinds, Version1Archives.codable, Version1Archives.letters,
            Version1Archives.selfLoop, Version1Archives.animals, Version1Archives.mailbox,
        ] {
            #expect(data.count > ArchiveFormat.version1HeaderSize)
            #expect(data[4] == 1 && data[5] == 0)
        }
    }

    @Test func handWrittenValuesDecode() throws {
        #expect(try Archive.decode(AllKinds.self, from: Version1Archives.allKinds) == AllKinds())
    }

    @Test func codableValuesDecode() throws {
        var expected = CodableKinds()
        expected.uuid = try #require(UUID(uuidString: "0E3B1C2D-4A5F-4E6B-9C7D-8E9FA0B1C2D3"))
        #expect(try Archive.decode(CodableKinds.self, from: Version1Archives.codable) == expected)
    }

    @Test func objectGraphsKeepIdentityAndBackReferences() throws {
        let users = try Archive.decode([User].self, from: Version1Archives.letters)
        let user = try #require(users.first)
        #expect(users.count == 1 && user.account == "user3@example.com" && user.writeName == "Writer 3")
        #expect(user.letters.map(\.pkNumber) == [3_000, 3_001])
        #expect(user.letters.map(\.content) == ["Dear 3, letter 0 💌", "Dear 3, letter 1 💌"])
        #expect(user.letters.allSatisfy { $0.user === user })

        let loop = try Archive.decode(Node.self, from: Version1Archives.selfLoop)
        #expect(loop.name == "loop" && loop.next === loop)
        loop.next = nil

        let animals = try Archive.decode(
            [Animal].self,
            from: Version1Archives.animals,
            options: ArchiveOptions(allowedTypes: [Dog.self])
        )
        #expect(animals.count == 3 && animals[0].name == "generic" && !(animals[0] is Dog))
        #expect((animals[1] as? Dog)?.goodBoy == true && animals[1] === animals[2])

        let mailbox = try Archive.decode(Mailbox.self, from: Version1Archives.mailbox)
        #expect(mailbox.owner == "ann" && mailbox.letters.map(\.text) == ["hi", "yo"])
        #expect(mailbox.letters.allSatisfy { $0.mailbox === mailbox })
    }

    @Test func version1ChecksumIsStillVerified() throws {
        var bytes = [UInt8](Version1Archives.letters)
        bytes[bytes.count - 2] ^= 0x10
        let error = #expect(throws: ArchiveError.self) { try Archive.decode([User].self, from: Data(bytes)) }
        #expect(error?.code == .checksumMismatch)
    }

    @Test func version1TruncationIsReported() throws {
        let data = Version1Archives.selfLoop
        for length in 0..<data.count {
            let error = #expect(throws: ArchiveError.self, "cut at \(length)") {
                try Archive.decode(Node.self, from: data.prefix(length))
            }
            #expect(error?.code == .truncated || error?.code == .badMagic, "cut at \(length)")
        }
    }

    @Test func derivedChecksumWorksForVersion1() {
        for data in [Version1Archives.allKinds, Version1Archives.letters] {
            #expect(Archive.checksumOfEncoded(data) == CRC32C.checksum(data))
        }
    }
}

@Suite struct ArchiveVersion2HeaderTests {
    @Test func smallArchivesHaveAShortHeader() throws {
        let data = try Archive.encode(makeUser(1, letters: 1))
        let header = try [UInt8](data).withUnsafeBytes { try ArchiveHeader(parsing: $0) }
        #expect(header.version == 2 && data[4] == 2 && data[5] == 0)
        #expect(header.bodyStart == ArchiveFormat.fixedHeaderSize + 3, "two varints: total (2 bytes), body length (1)")
        #expect(data[header.bodyStart] == ArchiveTag.object)
    }

    @Test func largeArchivesRoundTripWithoutAMove() throws {
        // Above ByteBuffer.moveLimit the Data points into the encoder's memory past the
        // unused header room.
        let blob = Data((0..<200_000).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 31) })
        let data = try Archive.encode(blob)
        #expect(data.count > ByteBuffer.moveLimit)
        #expect(try Archive.decode(Data.self, from: data) == blob)
        #expect(Archive.checksumOfEncoded(data) == CRC32C.checksum(data))
        let copy = Data(data)
        #expect(try Archive.decode(Data.self, from: copy) == blob)
    }

    @Test func unknownVersionsAreRefused() throws {
        var bytes = [UInt8](try Archive.encode("x"))
        bytes[4] = UInt8(ArchiveFormat.decimalVersion + 1)
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(String.self, from: Data(bytes)) }
        #expect(error?.code == .unsupportedVersion)
    }

    @Test func aBodyLengthPastTheEndIsCorrupt() throws {
        var bytes = [UInt8](try Archive.encode("x"))
        bytes[ArchiveFormat.fixedHeaderSize + 1] = 0x7F  // body length varint (total is 1 byte)
        var options = ArchiveOptions()
        options.verifiesChecksum = false
        let error = #expect(throws: ArchiveError.self) {
            try Archive.decode(String.self, from: Data(bytes), options: options)
        }
        #expect(error?.code == .corrupt)
    }
}
