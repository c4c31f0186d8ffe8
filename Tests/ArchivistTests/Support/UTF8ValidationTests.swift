import Testing

@testable import Archivist

/// `String(validatingUTF8Bytes:)`, which the archive reader uses for every string and key that
/// is not ASCII: it accepts exactly the well-formed UTF-8 byte sequences of the Unicode standard
/// (table 3-7) and gives back the same bytes.
struct UTF8ValidationTests {
    static func string(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer { String(validatingUTF8Bytes: $0) }
    }

    @Test(
        arguments: [
            [0x61, 0xC3, 0xA9],  // "aé"
            [0xE2, 0x82, 0xAC],  // "€"
            [0xEF, 0xBF, 0xBD],  // U+FFFD itself, which decoding also writes for bad bytes
            [0xF0, 0x9F, 0x98, 0x80],  // U+1F600
            [0xF4, 0x8F, 0xBF, 0xBF],  // U+10FFFF, the last scalar
            [],
        ] as [[UInt8]]
    )
    func wellFormedBytesComeBackUnchanged(_ bytes: [UInt8]) throws {
        let string = try #require(Self.string(bytes))
        #expect(Array(string.utf8) == bytes)
    }

    @Test(
        arguments: [
            [0x80],  // a continuation byte with no lead
            [0xC3],  // a lead byte at the end
            [0xC3, 0x41],  // a lead byte before ASCII
            [0xC0, 0xAF],  // an overlong "/"
            [0xE0, 0x80, 0xAF],  // an overlong "/" in three bytes
            [0xED, 0xA0, 0x80],  // a UTF-16 surrogate (U+D800)
            [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
            [0xFF],
            [0x61, 0xEF, 0xBF],  // U+FFFD cut short
        ] as [[UInt8]]
    )
    func malformedBytesAreRejected(_ bytes: [UInt8]) {
        #expect(Self.string(bytes) == nil)
    }
}
