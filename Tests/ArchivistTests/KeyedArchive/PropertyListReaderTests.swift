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
}
