import Foundation
import Testing

@testable import Archivist

/// A short ASCII string is read with two 16-byte loads when 16 bytes of its container remain
/// from its first byte (`ByteReader.string()`): probes that those loads stay inside the
/// archive's bytes, decoding from a buffer of exactly the archive's size (under ASan a load
/// past its end is reported), with short strings and short key and type names last.
@Suite struct ShortStringLoadBoundsTests {
    /// A model whose last key and type name are short, so the tables at the end of the
    /// archive hold short strings.
    struct Tail: Codable, Archivable, Equatable {
        var a: String
        var z: String
    }

    /// Decodes `data` from a `malloc`ed buffer of exactly its size.
    static func decodeExact<T: Archivable>(_ type: T.Type, _ data: Data) throws -> T {
        let memory = try #require(malloc(max(data.count, 1)))
        defer { free(memory) }
        data.copyBytes(to: memory.assumingMemoryBound(to: UInt8.self), count: data.count)
        return try Archive.decode(
            T.self,
            fromBytes: UnsafeRawBufferPointer(start: memory, count: data.count),
            options: ArchiveOptions()
        )
    }

    @Test func shortStringsLastInTheArchiveReadBack() throws {
        for length in 0...20 {
            let text = String(repeating: "q", count: length)
            #expect(try Self.decodeExact(String.self, Archive.encode(text)) == text, "length \(length)")
            #expect(
                try Self.decodeExact([String].self, Archive.encode(["x", text])) == ["x", text],
                "length \(length)"
            )
            let tail = Tail(a: text, z: String(text.prefix(3)))
            #expect(
                try Self.decodeExact([Tail].self, Archive.encode([tail, tail])) == [tail, tail],
                "length \(length)"
            )
        }
    }

    /// Non-ASCII and mixed strings of every short length take the checked path and still read back.
    @Test func nonASCIIShortStringsReadBack() throws {
        for length in 0...16 {
            for text in [
                String(repeating: "é", count: length / 2), String(repeating: "a", count: length) + "\u{7F}",
                "ä" + String(repeating: "b", count: length),
            ] {
                #expect(try Self.decodeExact([String].self, Archive.encode([text, "y"])) == [text, "y"])
                #expect(try Self.decodeExact(String.self, Archive.encode(text)) == text)
            }
        }
    }
}
