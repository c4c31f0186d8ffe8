import Foundation
import Testing

@testable import Archivist

/// The decoder's short-string paths against the standard library's own strings.
@Suite struct SmallASCIIStringTests {
    /// Every length 0 ... 15, with bytes after the string of every kind (ASCII, high bit set):
    /// the 16-byte load builds exactly `String(decoding:as:)`'s string, and a non-ASCII byte
    /// inside the string gives `nil`.
    @Test(.enabled(if: SmallASCIIString.isAvailable, "the 16-byte small-string load is not used on this platform"))
    func loading16BuildsTheStandardLibrarysString() throws {
        for count in 0...SmallASCIIString.capacity {
            for trailing: UInt8 in [0x00, 0x41, 0x80, 0xFF] {
                var bytes = (0..<count).map { UInt8(truncatingIfNeeded: 0x20 &+ ($0 &* 11) % 0x5F) }
                bytes += [UInt8](repeating: trailing, count: 16 - count)
                let expected = String(decoding: bytes.prefix(count), as: UTF8.self)
                let made = bytes.withUnsafeBytes { SmallASCIIString.make(loading16: $0.baseAddress!, count: count) }
                #expect(made == expected, "count \(count) trailing \(trailing)")
                if let made {
                    #expect(
                        unsafeBitCast(made, to: (UInt64, UInt64).self)
                            == unsafeBitCast(expected, to: (UInt64, UInt64).self)
                    )
                }
                if count > 0 {
                    bytes[count - 1] = 0xC3
                    #expect(
                        bytes.withUnsafeBytes { SmallASCIIString.make(loading16: $0.baseAddress!, count: count) } == nil
                    )
                }
            }
        }
    }

    /// Short strings at every distance from the end of their container (the last ones take the
    /// copying path) and non-ASCII short strings decode to themselves.
    @Test func shortStringsNearTheEndOfAnArchive() throws {
        for count in 0...SmallASCIIString.capacity {
            let ascii = String(repeating: "a", count: count)
            let accented = String(repeating: "é", count: count / 2)
            for value in [[ascii], [ascii, "b"], [accented, ascii], [ascii, accented]] {
                #expect(try Archive.decode([String].self, from: Archive.encode(value)) == value)
            }
            #expect(try Archive.decode(String.self, from: Archive.encode(ascii)) == ascii)
        }
    }
}
