import Foundation
import Testing

@testable import Archivist

/// A record whose keys are chosen at run time.
private struct Fields: Archivable, Equatable {
    var keys: [String]

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(keys, forKey: "order")
        for (i, key) in keys.enumerated() { try archive.encode(i, forKey: key) }
    }

    init(_ keys: [String]) { self.keys = keys }

    init(from archive: ArchiveDecoder) throws {
        keys = try archive.decode([String].self, forKey: "order")
        for (i, key) in keys.enumerated() { #expect(try archive.decode(Int.self, forKey: key) == i) }
    }
}

/// A value whose `encode(to:)` and `init(from:)` write and read an archive of their own,
/// while the thread's reused encoder or decoder is busy with the outer one.
private struct Nested: Archivable, Equatable {
    var inner: Fields

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(try Archive.encode(inner), forKey: "inner")
    }

    init(_ inner: Fields) { self.inner = inner }

    init(from archive: ArchiveDecoder) throws {
        inner = try Archive.decode(Fields.self, from: try archive.decode(Data.self, forKey: "inner"))
    }
}

/// The encoder and decoder a thread reuses from one archive to the next (and the key table's
/// guess at the next archive's keys) must give the same bytes and values as fresh ones.
@Suite struct ArchiveReuseTests {
    @Test func anArchiveHasTheSameBytesWhateverWasEncodedBefore() throws {
        let shapes: [[String]] = [
            ["a", "b", "c"], ["a", "b", "c"], ["c", "a", "d"], ["a"], ["b", "a", "c", "e"], [],
            ["order", "a"], (0..<40).map { "k\($0)" }, ["a", "b", "c"],
        ]
        let alone = try shapes.map { try Archive.encode(Fields($0)) }
        for first in shapes {
            _ = try Archive.encode(Fields(first))
            for (i, shape) in shapes.enumerated() {
                let data = try Archive.encode(Fields(shape))
                #expect(data == alone[i], "\(shape) after \(first)")
                #expect(try Archive.decode(Fields.self, from: data) == Fields(shape))
            }
        }
    }

    @Test func theKeyTableGuessesThePreviousKeysAndStillNumbersInFirstUseOrder() {
        var table = KeyTable()
        for key in ["a", "b", "c", "d"] { _ = table.intern(key) }
        table.removeAll()
        #expect(table.count == 0)
        #expect(table.intern("a") == 0)
        #expect(table.intern("c") == 1)
        #expect(table.intern("b") == 2)
        #expect(table.intern("a") == 0)
        #expect(table.intern("d") == 3)
        #expect(table.intern("e") == 4)
        #expect(table.keys == ["a", "c", "b", "d", "e"])
        table.removeAll()
        #expect(table.intern("e") == 0)
        #expect(table.intern("a") == 1)
        #expect(table.intern("c") == 2)
        #expect(table.keys == ["e", "a", "c"])
    }

    @Test func aReusedDecoderKeepsTablesOnlyForTheSameBytesAndNoRenames() throws {
        // Same tables twice (kept), other keys, the same key count, no keys, then back.
        let shapes: [[String]] = [["a", "b"], ["a", "b"], ["b", "a"], ["a", "c"], [], ["a", "b"]]
        for shape in shapes {
            #expect(try Archive.decode(Fields.self, from: try Archive.encode(Fields(shape))) == Fields(shape))
        }
        // Tables read under renames give the renamed names; the next plain read the stored ones.
        let data = try Archive.encode(Fields(["a"]))
        let renamed = ArchiveOptions(renamedTypes: ["Fields": "Renamed"])
        _ = try Archive.decode(Fields.self, from: data)
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(Fields.self, from: data, options: renamed) }
        #expect(error?.code == .typeMismatch)
        #expect(try Archive.decode(Fields.self, from: data) == Fields(["a"]))
    }

    @Test func anArchiveWrittenOrReadInsideAnotherUsesAnEncoderOfItsOwn() throws {
        let value = Nested(Fields(["x", "y"]))
        let data = try Archive.encode(value)
        #expect(try Archive.decode(Nested.self, from: data) == value)
        #expect(try Archive.encode(value) == data)
    }

    @Test func aFailedArchiveLeavesNothingBehindForTheNext() throws {
        let deep = (0..<10).map { _ in Fields(["a"]) }
        var options = ArchiveOptions()
        options.limits.maxTotalBytes = 40
        #expect(throws: ArchiveError.self) { try Archive.encode(deep, options: options) }
        let data = try Archive.encode(Fields(["a"]))
        #expect(data == (try Archive.encode(Fields(["a"]))))
        #expect(throws: ArchiveError.self) { try Archive.decode([Fields].self, from: data) }
        #expect(try Archive.decode(Fields.self, from: data) == Fields(["a"]))
    }

    /// A small archive is copied out of the encoder's buffer, which the next archive reuses:
    /// the `Data` holds about its own size in `malloc` (it held the 1 KiB first block), and
    /// later archives never write into it.
    @Test func aSmallArchiveHoldsItsOwnSizeAndLaterArchivesLeaveItAlone() throws {
        let small = Fields((0..<12).map { "key\($0)" })
        let data = try Archive.encode(small)
        let copy = Data(Array(data))
        #expect(data.count > 100 && data.count < ByteBuffer.initialCapacity)
        #if os(Linux)
        let held = data.withUnsafeBytes { mallocUsableSize(UnsafeMutableRawPointer(mutating: $0.baseAddress!)) }
        #expect(held >= data.count && held < data.count + 64, "\(data.count) bytes held in a block of \(held)")
        #endif
        let others = try (0..<3).map { try Archive.encode(Fields(["other\($0)", "z"])) }
        #expect(data == copy, "a later archive wrote into an earlier one's bytes")
        #expect(try Archive.decode(Fields.self, from: data) == small)
        #expect(
            try others.map { try Archive.decode(Fields.self, from: $0) } == (0..<3).map { Fields(["other\($0)", "z"]) }
        )
        // Around the limit, and far above it (handed over without a copy): the same bytes.
        for count in [40, 60, 3_000] {
            let fields = Fields((0..<count).map { "k\($0)" })
            let encoded = try Archive.encode(fields)
            #expect(try Archive.decode(Fields.self, from: encoded) == fields)
            #expect(try Archive.encode(fields) == encoded)
        }
    }
}

#if os(Linux)
/// glibc's `malloc_usable_size` (in `<malloc.h>`, which the Glibc module does not export).
@_silgen_name("malloc_usable_size")
private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer?) -> Int
#endif
