import Foundation
import Testing

@testable import Archivist

/// A record whose keys are chosen at run time, to drive the encoder's key table.
private struct DynamicKeys: Archivable, Equatable {
    var fields: [(key: String, value: Int)]

    init(_ fields: [(key: String, value: Int)]) { self.fields = fields }

    static func == (a: DynamicKeys, b: DynamicKeys) -> Bool {
        a.fields.map(\.key) == b.fields.map(\.key) && a.fields.map(\.value) == b.fields.map(\.value)
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(fields.map(\.key), forKey: "order")
        for (key, value) in fields { try archive.encode(value, forKey: key) }
    }

    init(from archive: ArchiveDecoder) throws {
        let order = try archive.decode([String].self, forKey: "order")
        fields = try order.map { ($0, try archive.decode(Int.self, forKey: $0)) }
    }
}

private struct Box<Value: Archivable>: Archivable {
    var value: Value
    init(_ value: Value) { self.value = value }
    func encode(to archive: ArchiveEncoder) throws { try archive.encode(value, forKey: "value") }
    init(from archive: ArchiveDecoder) throws { value = try archive.decode(Value.self, forKey: "value") }
}

/// The encoder's key table, the cached default type names and the ASCII fast path of
/// string decoding: each must give the same archives and values as the general paths.
@Suite struct ArchiveFastPathTests {
    /// How many times `needle` occurs in `data`.
    private func occurrences(of needle: String, in data: Data) -> Int {
        let bytes = [UInt8](data)
        let pattern = [UInt8](needle.utf8)
        guard bytes.count >= pattern.count else { return 0 }
        return (0...(bytes.count - pattern.count)).filter { Array(bytes[$0..<($0 + pattern.count)]) == pattern }.count
    }

    @Test func keysPastTheScanLimitInAnyOrderKeepTheirIndices() throws {
        let count = KeyTable.linearLimit * 2 + 3
        let forward = DynamicKeys((0..<count).map { ("key\($0)", $0) })
        let backward = DynamicKeys(forward.fields.reversed())
        let shuffled = DynamicKeys(
            forward.fields.enumerated().sorted { ($0.offset * 7) % count < ($1.offset * 7) % count }.map(\.element)
        )
        let records = [forward, backward, shuffled, forward]
        let data = try Archive.encode(records)
        #expect(try Archive.decode([DynamicKeys].self, from: data) == records)
        // The key is in the key table once (and in each record's "order" array as a value),
        // however often and in whatever order the records use it.
        #expect(occurrences(of: "key\(count - 1)", in: data) == 1 + records.count)
    }

    @Test func keysThatShareLengthAndFirstByteStayDistinct() throws {
        let fields = [("ab", 1), ("ac", 2), ("ab", 3), ("ba", 4), ("", 5), ("ac", 6)]
        let record = DynamicKeys(fields.map { (key: $0.0, value: $0.1) })
        var table = KeyTable()
        let indices = fields.map { table.intern($0.0) }
        #expect(indices == [0, 1, 0, 2, 3, 1])
        #expect(table.keys == ["ab", "ac", "ba", ""])
        let decoded = try Archive.decode(DynamicKeys.self, from: try Archive.encode(record))
        #expect(decoded.fields.map(\.key) == record.fields.map(\.key))
    }

    @Test func archivedKeysMatchByBytesIncludingNonASCIIAndEmptyKeys() throws {
        let record = DynamicKeys([("ключ", 1), ("é", 2), ("", 3), ("e", 4), ("éa", 5), ("ключи", 6)])
        let data = try Archive.encode(record)
        #expect(try Archive.decode(DynamicKeys.self, from: data) == record)
        // Same length and first byte as a stored key, but not equal: absent.
        struct Probe: Archivable {
            var found: [Int?]
            func encode(to archive: ArchiveEncoder) throws {}
            init(from archive: ArchiveDecoder) throws {
                found = try ["ключь", "è", "E", "", "éb"].map { try archive.decodeIfPresent(Int.self, forKey: $0) }
            }
        }
        #expect(
            try Archive.decode(Probe.self, from: data, options: ArchiveOptions(renamedTypes: ["DynamicKeys": "Probe"]))
                .found
                == [nil, nil, nil, 3, nil]
        )
    }

    @Test func keysMatchWhetherTheModelsKeyIsASmallStringOrNot() throws {
        // Keys of 0 to 20 ASCII bytes: up to 15 they are small strings, which match an archived
        // key by their bits; the same keys in string storage of their own compare by bytes.
        let keys = (0...20).map { String(repeating: "k", count: $0 / 2) + String(repeating: "7", count: ($0 + 1) / 2) }
        let record = DynamicKeys(keys.enumerated().map { (key: $0.element, value: $0.offset) })
        let data = try Archive.encode(record)
        #expect(try Archive.decode(DynamicKeys.self, from: data) == record)
        struct Probe: Archivable {
            nonisolated(unsafe) static var keys: [String] = []
            var found: [Int?]
            func encode(to archive: ArchiveEncoder) throws {}
            init(from archive: ArchiveDecoder) throws {
                found = try Self.keys.map { try archive.decodeIfPresent(Int.self, forKey: $0) }
            }
        }
        let options = ArchiveOptions(renamedTypes: ["DynamicKeys": "Probe"])
        func native(_ key: String) -> String {
            var copy = String()
            copy.reserveCapacity(64)  // storage of its own, even for a short key
            copy += key
            return copy
        }
        Probe.keys = keys.map(native)
        #expect(try Archive.decode(Probe.self, from: data, options: options).found == keys.indices.map { $0 })
        // Same length, one byte changed (first, middle or last): absent, small or not.
        let near = keys.dropFirst().map { key in
            var bytes = Array(key.utf8)
            bytes[bytes.count / 2] = UInt8(ascii: "x")
            return String(decoding: bytes, as: UTF8.self)
        }
        Probe.keys = near + near.map(native)
        #expect(
            try Archive.decode(Probe.self, from: data, options: options).found
                == Array(repeating: nil, count: near.count * 2)
        )
    }

    @Test func invalidUTF8InTheKeyTableIsCorrupt() throws {
        var bytes = [UInt8](try Archive.encode(DynamicKeys([("é", 1)])))
        let index = try #require(bytes.lastIndex(of: 0xA9))  // "é" is C3 A9, in the key table
        bytes[index] = 0x41
        var options = ArchiveOptions()
        options.verifiesChecksum = false
        let error = #expect(throws: ArchiveError.self) {
            try Archive.decode(DynamicKeys.self, from: Data(bytes), options: options)
        }
        #expect(error?.code == .corrupt)
    }

    @Test func aLargeKeyTableFindsEveryKeyAgain() {
        var table = KeyTable()
        let keys = (0..<200).map { "k\($0)" }
        for (i, key) in keys.enumerated() { #expect(table.intern(key) == i) }
        for (i, key) in keys.enumerated().reversed() { #expect(table.intern(key) == i) }
        #expect(table.intern("new") == 200)
        #expect(table.keys.count == 201)
    }

    @Test func defaultTypeNamesAreTheDescribedNamesPerGenericInstance() throws {
        #expect(Box<Int>.archiveTypeName == String(describing: Box<Int>.self))
        #expect(Box<String>.archiveTypeName == String(describing: Box<String>.self))
        #expect(Box<Int>.archiveTypeName != Box<String>.archiveTypeName)
        #expect(Box<Int>.archiveTypeName == Box<Int>.archiveTypeName)  // from the cache now
        let data = try Archive.encode(Box(7))
        #expect(try Archive.decode(Box<Int>.self, from: data).value == 7)
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(Box<String>.self, from: data) }
        #expect(error?.code == .typeMismatch)
    }

    @Test func stringsOfEveryLengthRoundTripWithAndWithoutNonASCII() throws {
        for length in 0..<40 {
            let ascii = String(repeating: "a", count: length)
            #expect(try Archive.decode(String.self, from: try Archive.encode(ascii)) == ascii)
            for position in 0...length {
                var characters = Array(ascii)
                characters.insert("é", at: position)
                let mixed = String(characters)
                #expect(try Archive.decode(String.self, from: try Archive.encode(mixed)) == mixed)
            }
        }
    }

    @Test func invalidUTF8AfterAnASCIIPrefixIsCorrupt() throws {
        for prefix in [0, 3, 8, 15, 16] {
            let string = String(repeating: "a", count: prefix) + "é"
            var bytes = [UInt8](try Archive.encode(string))
            // "é" is C3 A9; C3 41 is not UTF-8. Skip the checksum to reach the string check.
            let index = try #require(bytes.lastIndex(of: 0xA9))
            bytes[index] = 0x41
            var options = ArchiveOptions()
            options.verifiesChecksum = false
            let error = #expect(throws: ArchiveError.self, "prefix \(prefix)") {
                try Archive.decode(String.self, from: Data(bytes), options: options)
            }
            #expect(error?.code == .corrupt, "prefix \(prefix)")
        }
    }
}

/// A model holding a blob between other fields, so the output buffer grows in the middle.
private struct Attachment: Archivable, Equatable {
    var title: String
    var blobs: [Data]
    var trailer: Int

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(title, forKey: "title")
        try archive.encode(blobs, forKey: "blobs")
        try archive.encode(trailer, forKey: "trailer")
    }

    init(title: String, blobs: [Data], trailer: Int) {
        self.title = title
        self.blobs = blobs
        self.trailer = trailer
    }

    init(from archive: ArchiveDecoder) throws {
        title = try archive.decode(String.self, forKey: "title")
        blobs = try archive.decode([Data].self, forKey: "blobs")
        trailer = try archive.decode(Int.self, forKey: "trailer")
    }
}

/// Blobs: the output buffer grows with `realloc` and is handed to the `Data` as it is.
@Suite struct ArchiveBlobTests {
    private func pattern(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) &+ seed })
    }

    @Test func largeBlobsAfterOtherValuesRoundTrip() throws {
        // 3 MB after a 5 KB one: the buffer doubles, then jumps to fit; the archive keeps
        // over 64 KiB of unused capacity only if it is not given back.
        let value = Attachment(
            title: String(repeating: "t", count: 5_000),
            blobs: [pattern(5_000, seed: 1), pattern(3_000_000, seed: 2), pattern(70_000, seed: 3)],
            trailer: -7
        )
        let data = try Archive.encode(value)
        #expect(try Archive.decode(Attachment.self, from: data) == value)
        #expect(Archive.checksumOfEncoded(data) == CRC32C.checksum(data))
    }

    @Test func emptyDataRoundTrips() throws {
        #expect(try Archive.decode(Data.self, from: try Archive.encode(Data())) == Data())
        let value = Attachment(title: "", blobs: [Data(), Data([1]), Data()], trailer: 0)
        #expect(try Archive.decode(Attachment.self, from: try Archive.encode(value)) == value)
    }

    @Test func dataSlicesWithANonZeroStartIndexRoundTripFromIndexZero() throws {
        let whole = pattern(200_000, seed: 9)
        for range in [1..<2, 1_000..<1_100, 100..<150_000, 199_999..<200_000] {
            let slice = whole[range]
            let decoded = try Archive.decode(Data.self, from: try Archive.encode(slice))
            #expect(decoded == slice)
            #expect(decoded.startIndex == 0)
            #expect(decoded.count == range.count)
        }
    }

    @Test func anArchiveDecodesFromASliceOfALargerBuffer() throws {
        let archive = try Archive.encode(pattern(100_000, seed: 4))
        let padded = Data([7, 7, 7]) + archive + Data([8])
        let slice = padded[3..<(3 + archive.count)]
        #expect(try Archive.decode(Data.self, from: slice) == pattern(100_000, seed: 4))
    }

    @Test func manyEncodesOfOneValueGiveIdenticalBytes() throws {
        let value = Attachment(title: "x", blobs: [pattern(70_000, seed: 5)], trailer: 1)
        let first = try Archive.encode(value)
        for _ in 0..<5 { #expect(try Archive.encode(value) == first) }
    }
}
