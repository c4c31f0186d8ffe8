import Foundation
import Testing

@testable import Archivist

// The container the decoder hands to the second and later models with the same coding keys
// (`CachedKeyedReader`): every kind of field through it, kept containers after the decode (its
// reader is gone, so they must throw, not read freed memory or the next archive), and the
// decoded objects freed although models kept containers that hold the decoder.

/// A model that reads every kind of field: primitives, optionals (present, absent, null), a
/// nested keyed container, a nested unkeyed container, a super decoder, an array of models
/// and a back-reference to its parent.
final class EveryFieldNode: Codable, Archivable {
    var number: Int
    var name: String
    var flag: Bool
    var ratio: Double
    var small: UInt8
    var maybe: Int?
    var maybeName: String?
    var absent: String?
    var point: (x: Int, y: Int)
    var list: [Int]
    var base: String
    var children: [EveryFieldNode]
    @BackReference var parent: EveryFieldNode?

    enum CodingKeys: String, CodingKey {
        case number, name, flag, ratio, small, maybe, maybeName, absent, point, list, base, children, parent
    }

    enum PointKeys: String, CodingKey { case x, y }
    enum BaseKeys: String, CodingKey { case base }

    init(_ i: Int, children: [EveryFieldNode] = []) {
        number = i
        name = "node \(i)"
        flag = i % 2 == 0
        ratio = Double(i) / 4
        small = UInt8(truncatingIfNeeded: i)
        maybe = i % 3 == 0 ? nil : i * 10
        maybeName = i % 2 == 0 ? "even \(i) with a name longer than fifteen bytes" : nil
        absent = nil
        point = (i, -i)
        list = Array(0..<(i % 4))
        base = "super \(i)"
        self.children = children
        for child in children { child.parent = self }
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        number = try c.decode(Int.self, forKey: .number)
        name = try c.decode(String.self, forKey: .name)
        flag = try c.decode(Bool.self, forKey: .flag)
        ratio = try c.decode(Double.self, forKey: .ratio)
        small = try c.decode(UInt8.self, forKey: .small)
        maybe = try c.decodeIfPresent(Int.self, forKey: .maybe)
        maybeName = try c.decodeIfPresent(String.self, forKey: .maybeName)
        absent = try c.decodeIfPresent(String.self, forKey: .absent)
        let p = try c.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
        point = (try p.decode(Int.self, forKey: .x), try p.decode(Int.self, forKey: .y))
        var l = try c.nestedUnkeyedContainer(forKey: .list)
        var list: [Int] = []
        while !l.isAtEnd { list.append(try l.decode(Int.self)) }
        self.list = list
        base = try c.superDecoder().container(keyedBy: BaseKeys.self).decode(String.self, forKey: .base)
        children = try c.decode([EveryFieldNode].self, forKey: .children)
        _parent = try c.decode(BackReference<EveryFieldNode>.self, forKey: .parent)
        #expect(c.contains(.number) && !c.contains(.absent))
        #expect(Set(c.allKeys.map(\.stringValue)).isSuperset(of: ["number", "name", "children"]))
        #expect(try c.decodeNil(forKey: .maybe) == (maybe == nil))
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(number, forKey: .number)
        try c.encode(name, forKey: .name)
        try c.encode(flag, forKey: .flag)
        try c.encode(ratio, forKey: .ratio)
        try c.encode(small, forKey: .small)
        // `maybe` as null when nil, `maybeName` left out when nil.
        try c.encode(maybe, forKey: .maybe)
        try c.encodeIfPresent(maybeName, forKey: .maybeName)
        var p = c.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
        try p.encode(point.x, forKey: .x)
        try p.encode(point.y, forKey: .y)
        var l = c.nestedUnkeyedContainer(forKey: .list)
        for value in list { try l.encode(value) }
        var b = c.superEncoder().container(keyedBy: BaseKeys.self)
        try b.encode(base, forKey: .base)
        try c.encode(children, forKey: .children)
        try c.encode(_parent, forKey: .parent)
    }

    func expectMatches(_ i: Int) {
        #expect(number == i && name == "node \(i)" && flag == (i % 2 == 0) && ratio == Double(i) / 4)
        #expect(small == UInt8(truncatingIfNeeded: i))
        #expect(maybe == (i % 3 == 0 ? nil : i * 10))
        #expect(maybeName == (i % 2 == 0 ? "even \(i) with a name longer than fifteen bytes" : nil))
        #expect(absent == nil && point == (i, -i) && list == Array(0..<(i % 4)) && base == "super \(i)")
    }
}

/// Keeps its container, like `ContainerKeeper`, and holds its decoded children.
final class KeepingParent: Codable, Archivable {
    var id: Int
    var kids: [KeepingParent]
    var kept: KeyedDecodingContainer<CodingKeys>?
    enum CodingKeys: String, CodingKey { case id, kids }

    init(id: Int, kids: [KeepingParent]) { (self.id, self.kids) = (id, kids) }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        kids = try c.decode([KeepingParent].self, forKey: .kids)
        kept = c
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(kids, forKey: .kids)
    }

    static func forest(_ base: Int) -> [KeepingParent] {
        (0..<5).map { i in
            KeepingParent(id: base + i, kids: (0..<3).map { KeepingParent(id: base + 10 * i + $0, kids: []) })
        }
    }
}

/// Decodes an archive of its own inside `init(from:)`: the thread's spare decoder is busy, so
/// the inner archive gets a decoder of its own, freed when the inner decode returns.
struct InnerArchiveHolder: Codable, Archivable {
    var inner: [KeepingParent]
    init(inner: [KeepingParent]) { self.inner = inner }
    enum CodingKeys: String, CodingKey { case bytes }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        inner = try Archive.decode([KeepingParent].self, from: c.decode(Data.self, forKey: .bytes))
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(Archive.encode(inner), forKey: .bytes)
    }
}

@Suite struct CachedKeyedReaderTests {
    /// Every container method, through the first model's container and the cached one of the
    /// models after it, in a graph whose children point back at their parents.
    @Test func everyKindOfFieldReadsBackThroughTheCachedContainer() throws {
        let roots = (0..<6).map { r in EveryFieldNode(100 * r, children: (1...4).map { EveryFieldNode(100 * r + $0) }) }
        let decoded = try Archive.decode([EveryFieldNode].self, from: Archive.encode(roots))
        #expect(decoded.count == roots.count)
        for (r, root) in decoded.enumerated() {
            root.expectMatches(100 * r)
            #expect(root.parent == nil && root.children.count == 4)
            for (c, child) in root.children.enumerated() {
                child.expectMatches(100 * r + c + 1)
                #expect(child.parent === root)
            }
        }
    }

    /// Arrays of back-referenced objects and optional back-references, many models per key type.
    @Test func arraysOfBackReferencedObjectsAndOptionals() throws {
        let users = (0..<30).map { CachedUser($0) }
        let decoded = try Archive.decode([CachedUser].self, from: Archive.encode(users))
        for (u, user) in decoded.enumerated() {
            #expect(user.account == "user\(u)" && user.letters.count == u % 5)
            for (l, letter) in user.letters.enumerated() {
                #expect(letter.user === user && letter.body == "letter \(u).\(l)")
                #expect(letter.note == (l % 2 == 0 ? nil : "note \(l)"))
            }
        }
    }

    /// A container a model kept (the first model's and the cached one) answers with a typed
    /// error once its decode ended: never the next archive's values, never a crash.
    @Test func keptContainersThrowAfterTheirDecode() throws {
        let first = try Archive.decode([KeepingParent].self, from: Archive.encode(KeepingParent.forest(100)))
        let second = try Archive.decode([KeepingParent].self, from: Archive.encode(KeepingParent.forest(500)))
        defer { for k in first + first.flatMap(\.kids) + second + second.flatMap(\.kids) { k.kept = nil } }
        #expect(second[4].kids[2].id == 542)
        for (n, k) in (first + first.flatMap(\.kids)).enumerated() {
            let kept = try #require(k.kept)
            let error = #expect(throws: ArchiveError.self) { try kept.decode(Int.self, forKey: .id) }
            // The first model has an ordinary container (it reads an emptied decoder); the
            // others the cached one, which knows its decode ended. Both say so.
            #expect(error?.code == .invalidValue, "model \(n)")
            #expect(throws: ArchiveError.self) { try kept.decode(String.self, forKey: .id) }
            #expect(throws: ArchiveError.self) { try kept.decodeIfPresent([KeepingParent].self, forKey: .kids) }
            #expect(throws: ArchiveError.self) { try kept.nestedUnkeyedContainer(forKey: .kids) }
            #expect(!kept.contains(.id))
        }
    }

    /// Models that keep their containers are freed with the decoded graph: the decoder the
    /// containers hold no longer holds the decoded objects.
    @Test func keptContainersDoNotKeepTheDecodedGraphAlive() throws {
        weak var root: KeepingParent?
        weak var kid: KeepingParent?
        do {
            let decoded = try Archive.decode([KeepingParent].self, from: Archive.encode(KeepingParent.forest(7)))
            root = decoded[3]
            kid = decoded[3].kids[1]
            // Kept alive to here: an optimized build may free `decoded` after its last use.
            withExtendedLifetime(decoded) { #expect(root?.kept != nil && kid?.kept != nil) }
        }
        #expect(root == nil)
        #expect(kid == nil)
    }

    /// Containers kept from an archive decoded by a decoder of its own, which is freed when
    /// that decode returns: they still throw afterwards.
    @Test func keptContainersOfAFreedDecoderThrow() throws {
        let holders = (0..<3).map { InnerArchiveHolder(inner: KeepingParent.forest(1_000 * $0)) }
        let decoded = try Archive.decode([InnerArchiveHolder].self, from: Archive.encode(holders))
        let all = decoded.flatMap { $0.inner + $0.inner.flatMap(\.kids) }
        defer { for k in all { k.kept = nil } }
        #expect(decoded[2].inner[4].kids[2].id == 2_042)
        // Reuse the words those decoders gave back.
        _ = try Archive.decode([KeepingParent].self, from: Archive.encode(KeepingParent.forest(9)))
        for k in all {
            #expect(throws: ArchiveError.self) { try #require(k.kept).decode(Int.self, forKey: .id) }
        }
    }

    /// A kept container used on another thread after its decode, while this thread decodes
    /// again and reuses the container's word: a typed error there, the right values here.
    @Test func aKeptContainerOnAnotherThreadThrows() async throws {
        let decoded = try Archive.decode([KeepingParent].self, from: Archive.encode(KeepingParent.forest(3)))
        nonisolated(unsafe) let kept = try #require(decoded[2].kept)
        defer { for k in decoded + decoded.flatMap(\.kids) { k.kept = nil } }
        let data = try Archive.encode(KeepingParent.forest(60))
        async let other: Int = Task.detached {
            var thrown = 0
            for _ in 0..<200 where (try? kept.decode(Int.self, forKey: .id)) == nil { thrown += 1 }
            return thrown
        }.value
        for _ in 0..<50 { #expect(try Archive.decode([KeepingParent].self, from: data)[4].kids[2].id == 102) }
        #expect(await other == 200)
    }

    /// Truncated or corrupted archives of many models give typed errors, and the thread's
    /// decoder decodes the next archive correctly.
    @Test func corruptInputThrowsAndLeavesTheDecoderUsable() throws {
        let data = try Archive.encode(KeepingParent.forest(20))
        var options = ArchiveOptions()
        options.verifiesChecksum = false
        for cut in stride(from: 1, to: data.count, by: 3) {
            #expect(throws: ArchiveError.self) {
                try Archive.decode([KeepingParent].self, from: data.prefix(cut), options: options)
            }
        }
        for index in stride(from: 30, to: data.count, by: 7) {
            var corrupt = data
            corrupt[index] ^= 0x5A
            do {
                let forest = try Archive.decode([KeepingParent].self, from: corrupt, options: options)
                for k in forest + forest.flatMap(\.kids) { k.kept = nil }
            } catch is ArchiveError {}
        }
        let forest = try Archive.decode([KeepingParent].self, from: data)
        defer { for k in forest + forest.flatMap(\.kids) { k.kept = nil } }
        #expect(forest.map(\.id) == Array(20..<25) && forest[4].kids.map(\.id) == [60, 61, 62])
    }
}

/// A user with letters pointing back at it, some letters with an optional note.
final class CachedUser: Codable, Archivable {
    var account: String
    var letters: [CachedLetter]
    init(_ u: Int) {
        account = "user\(u)"
        letters = (0..<(u % 5)).map { CachedLetter(body: "letter \(u).\($0)", note: $0 % 2 == 0 ? nil : "note \($0)") }
        for letter in letters { letter.user = self }
    }
}

final class CachedLetter: Codable, Archivable {
    var body: String
    var note: String?
    @BackReference var user: CachedUser?
    init(body: String, note: String?) { (self.body, self.note) = (body, note) }
}

/// An element whose decode throws for id 3, counting its live instances.
final class ThrowingElement: Archivable {
    static let alive = Locked(0)
    let id: Int
    init(id: Int) {
        self.id = id
        Self.alive.withLock { $0 += 1 }
    }
    deinit { Self.alive.withLock { $0 -= 1 } }
    func encode(to archive: ArchiveEncoder) throws { try archive.encode(id, forKey: "id") }
    init(from archive: ArchiveDecoder) throws {
        id = try archive.decode(Int.self, forKey: "id")
        // Counted before the throw: a fully initialized instance is deinitialized when its
        // initializer throws.
        Self.alive.withLock { $0 += 1 }
        if id == 3 { throw ArchiveError(.invalidValue, "three") }
    }
}

extension CachedKeyedReaderTests {
    /// An array whose fourth element throws: the error names the element, and the three
    /// elements read before it are freed (the array is written in place).
    @Test func anArrayThatThrowsMidwayFreesWhatItRead() throws {
        let data = try Archive.encode((0..<6).map { ThrowingElement(id: $0) })
        #expect(ThrowingElement.alive.withLock { $0 } == 0)
        let error = #expect(throws: ArchiveError.self) { try Archive.decode([ThrowingElement].self, from: data) }
        #expect(error?.code == .invalidValue)
        #expect(error?.codingPath.first == "[3]")
        #expect(ThrowingElement.alive.withLock { $0 } == 0)
        let strings = try Archive.decode(
            [String].self,
            from: Archive.encode(["a", "bc", String(repeating: "d", count: 40)])
        )
        #expect(strings == ["a", "bc", String(repeating: "d", count: 40)])
        #expect(try Archive.decode([Int].self, from: Archive.encode([Int]())) == [])
    }
}
