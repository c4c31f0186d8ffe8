import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// The bridge's own bounded property-list readers, on inputs the fuzzers found.
@Suite struct PropertyListReaderTests {
    /// A valid binary plist (a keyed archive of an array) whose trailer is then rewritten.
    static func binaryPlist(objectCount: UInt64, offsetSize: UInt8) throws -> [UInt8] {
        var bytes = [UInt8](try KeyedArchiverBridge.archive(NSArray(array: ["a", 1])))
        let trailer = bytes.count - 32
        bytes[trailer + 6] = offsetSize
        withUnsafeBytes(of: objectCount.bigEndian) { raw in
            for i in 0..<8 { bytes[trailer + 8 + i] = raw[i] }
        }
        return bytes
    }

    /// libFuzzer find (`Fuzz/KeyedArchiveFuzzer.swift`): a trailer claiming 2^64 - 1 objects with
    /// 1-byte offsets overflowed `tableOffset + count × offsetSize` and trapped.
    @Test(arguments: [(UInt64.max, 1), (UInt64.max / 2, 2), (UInt64.max / 8, 8), (1 << 61, 8)] as [(UInt64, UInt8)])
    func objectCountNear2To64IsTruncatedNotATrap(count: UInt64, offsetSize: UInt8) throws {
        let bytes = try Self.binaryPlist(objectCount: count, offsetSize: offsetSize)
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiveValidator.parse(bytes, limits: ArchiveLimits())
        }
        #expect(error.code == .truncated || error.code == .corrupt, "\(error)")
    }

    @Test func untouchedTrailerParses() throws {
        var bytes = [UInt8](try KeyedArchiverBridge.archive(NSArray(array: ["a", 1])))
        let document = try KeyedArchiveValidator.parse(bytes, limits: ArchiveLimits())
        #expect(document.format == .binary)
        bytes.removeLast()
        #expect(throws: ArchiveError.self) { try KeyedArchiveValidator.parse(bytes, limits: ArchiveLimits()) }
    }

    /// Short ASCII strings are made once per content (`SmallStringCache`): repeated, evicted
    /// (far more distinct strings than slots), of every short length, with NUL bytes, and past
    /// the cached length, a parse reads back exactly the strings written.
    @Test func repeatedShortStringsReadBackExactly() throws {
        var strings = [
            "", "a", "a\u{0}", "\u{0}", "a\u{0}\u{0}", "$class", "NS.objects", "fifteen-bytes-x", "sixteen-bytes-xy",
            "seventeen-bytes-x", "caf\u{e9}",
        ]
        strings += (0..<1_000).map { "key\($0 % 600)-\(String(repeating: "z", count: $0 % 9))" }
        strings += strings.reversed()
        var nodes = strings.map(PropertyListDocument.Node.string)
        nodes.append(.array(Array(0..<strings.count)))
        let document = PropertyListDocument(nodes: nodes, root: strings.count, format: .binary)
        var reader = BinaryPropertyListReader(bytes: BinaryPropertyListWriter.write(document), limits: ArchiveLimits())
        let parsed = try reader.read()
        #expect(parsed.nodes == document.nodes)
    }

    /// A short string marked ASCII with a byte above 0x7F is refused whether or not an equal
    /// prefix was read before it.
    @Test func shortNonASCIIBytesInAnASCIIStringAreCorrupt() throws {
        let document = PropertyListDocument(
            nodes: [.string("abc"), .string("abd"), .array([0, 1])],
            root: 2,
            format: .binary
        )
        var bytes = BinaryPropertyListWriter.write(document)
        let target = Array("abd".utf8)
        let start = try #require((0...(bytes.count - 3)).first { Array(bytes[$0..<($0 + 3)]) == target })
        bytes[start + 2] = 0xE4
        var reader = BinaryPropertyListReader(bytes: bytes, limits: ArchiveLimits())
        let error = try #require(throws: ArchiveError.self) { try reader.read() }
        #expect(error.code == .corrupt)
    }
}
