import Foundation
import Testing

@testable import Archivist

/// A model that keeps the nested containers it was given (keyed, unkeyed, and a super
/// decoder's) past its `init(from:)`.
final class NestedKeeper: Codable, Archivable {
    var id: Int
    var keyed: KeyedDecodingContainer<PointKeys>?
    var unkeyed: (any UnkeyedDecodingContainer)?
    var superKeyed: KeyedDecodingContainer<PointKeys>?
    enum CodingKeys: String, CodingKey { case id, point, list }
    enum PointKeys: String, CodingKey { case x, y }
    init(id: Int) { self.id = id }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        keyed = try c.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
        unkeyed = try c.nestedUnkeyedContainer(forKey: .list)
        superKeyed = try c.superDecoder().container(keyedBy: PointKeys.self)
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        var p = c.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
        try p.encode(id, forKey: .x)
        try p.encode(String(repeating: "y", count: 40), forKey: .y)
        var l = c.nestedUnkeyedContainer(forKey: .list)
        for i in 0..<5 { try l.encode(String(repeating: "l", count: 30 + i)) }
        var s = c.superEncoder().container(keyedBy: PointKeys.self)
        try s.encode(id, forKey: .x)
    }
}

/// Probes that nested containers a model kept answer with a typed error once their decode
/// ended, and never read the archive's bytes, which the caller may have freed by then (under
/// ASan a read of them is reported).
@Suite struct KeptNestedContainerTests {
    static func decodeThenFreeInput() throws -> [NestedKeeper] {
        // The archive's bytes live in a buffer freed before the kept containers are used.
        let data = try Archive.encode((0..<3).map { NestedKeeper(id: $0) })
        let memory = try #require(malloc(data.count))
        defer { free(memory) }
        data.copyBytes(to: memory.assumingMemoryBound(to: UInt8.self), count: data.count)
        return try Archive.decode(
            [NestedKeeper].self,
            fromBytes: UnsafeRawBufferPointer(start: memory, count: data.count),
            options: ArchiveOptions()
        )
    }

    @Test func aKeptNestedKeyedContainerThrowsAfterItsDecode() throws {
        let kept = try Self.decodeThenFreeInput()
        defer {
            for k in kept {
                k.keyed = nil
                k.unkeyed = nil
                k.superKeyed = nil
            }
        }
        for k in kept {
            let keyed = try #require(k.keyed)
            #expect(throws: ArchiveError.self) { try keyed.decode(Int.self, forKey: .x) }
            #expect(throws: ArchiveError.self) { try keyed.decode(String.self, forKey: .y) }
        }
    }

    @Test func aKeptNestedUnkeyedContainerThrowsAfterItsDecode() throws {
        let kept = try Self.decodeThenFreeInput()
        defer {
            for k in kept {
                k.keyed = nil
                k.unkeyed = nil
                k.superKeyed = nil
            }
        }
        for k in kept {
            var unkeyed = try #require(k.unkeyed)
            #expect(throws: ArchiveError.self) { try unkeyed.decode(String.self) }
        }
    }

    @Test func aKeptSuperDecodersContainerThrowsAfterItsDecode() throws {
        let kept = try Self.decodeThenFreeInput()
        defer {
            for k in kept {
                k.keyed = nil
                k.unkeyed = nil
                k.superKeyed = nil
            }
        }
        for k in kept {
            let keyed = try #require(k.superKeyed)
            #expect(throws: ArchiveError.self) { try keyed.decode(Int.self, forKey: .x) }
        }
    }
}
