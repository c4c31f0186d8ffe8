import Foundation
import Testing

@testable import Archivist

// Probes of the unretained reader behind a cached keyed container (`CachedKeyedReader`):
// containers kept from one decode and used while the same decoder (the thread's spare) runs
// the next one, or while another archive is decoded inside a model, or after many decoders on
// many threads recycled their epoch words. Each use must throw a typed error or read the live
// decode's state, never freed memory (run under ASan too).

/// Holds containers kept by earlier decodes; a model of a later decode uses them.
private let keptFromEarlier = Locked<[KeyedDecodingContainer<KeepingParent.CodingKeys>]>([])
/// The errors those uses threw (nil for a use that returned).
private let earlierUses = Locked<[ArchiveError.Code?]>([])

/// A model that, while it is decoded, uses every container kept from earlier decodes.
private final class EarlierContainerUser: Codable, Archivable {
    var id: Int
    enum CodingKeys: String, CodingKey { case id }
    init(id: Int) { self.id = id }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        for kept in keptFromEarlier.withLock({ $0 }) {
            do {
                _ = try kept.decode(Int.self, forKey: .id)
                earlierUses.withLock { $0.append(nil) }
            } catch let error as ArchiveError {
                earlierUses.withLock { $0.append(error.code) }
            }
        }
    }
}

/// Keeps its container and, inside its `init(from:)`, decodes another archive whose models
/// use the kept container of the model before it (same outer decode, still running).
private final class NestingUser: Codable, Archivable {
    static let previous = Locked<KeyedDecodingContainer<CodingKeys>?>(nil)
    var id: Int
    var inner: [Int]
    enum CodingKeys: String, CodingKey { case id, bytes }
    init(id: Int) { (self.id, self.inner) = (id, []) }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        if let previous = Self.previous.withLock({ $0 }) {
            // The outer decode still runs: a read of its current record, or a typed error.
            _ = previous.contains(.id)
            _ = try? previous.decode(Int.self, forKey: .id)
        }
        Self.previous.withLock { $0 = c }
        inner = try Archive.decode([Int].self, from: c.decode(Data.self, forKey: .bytes))
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(Archive.encode([id, id + 1]), forKey: .bytes)
    }
}

@Suite(.serialized) struct KeptContainerTests {
    /// Containers kept from an earlier decode, used during the next decode on the same
    /// (spare) decoder: they throw, and the running decode reads its own archive.
    @Test func containersFromAnEarlierDecodeThrowDuringTheNext() throws {
        let first = try Archive.decode([KeepingParent].self, from: Archive.encode(KeepingParent.forest(100)))
        defer { for k in first + first.flatMap(\.kids) { k.kept = nil } }
        keptFromEarlier.withLock { $0 = (first + first.flatMap(\.kids)).compactMap(\.kept) }
        defer { keptFromEarlier.withLock { $0 = [] } }
        earlierUses.withLock { $0 = [] }
        let users = try Archive.decode(
            [EarlierContainerUser].self,
            from: Archive.encode((0..<4).map { EarlierContainerUser(id: $0) })
        )
        #expect(users.map(\.id) == [0, 1, 2, 3])
        let uses = earlierUses.withLock { $0 }
        #expect(uses.count == 4 * 20)
        #expect(uses.allSatisfy { $0 == .invalidValue }, "\(uses)")
    }

    /// A container kept earlier in the same outer decode, used while a model decodes an
    /// archive of its own (another decoder): no crash, and both decodes give their values.
    @Test func aContainerOfTheOuterDecodeUsedDuringANestedOne() throws {
        NestingUser.previous.withLock { $0 = nil }
        defer { NestingUser.previous.withLock { $0 = nil } }
        let data = try Archive.encode((0..<6).map { NestingUser(id: 10 * $0) })
        do {
            let decoded = try Archive.decode([NestingUser].self, from: data)
            #expect(decoded.map(\.inner) == (0..<6).map { [10 * $0, 10 * $0 + 1] })
        } catch is ArchiveError {
            // Reading the outer record out of turn may derail the outer decode: a typed error.
        }
        // After it: the kept container throws.
        let last = try #require(NestingUser.previous.withLock { $0 })
        #expect(throws: ArchiveError.self) { try last.decode(Int.self, forKey: .id) }
    }

    /// Containers kept from decoders on many threads (nested decodes make decoders of their
    /// own, whose words go back to the pool and are taken again): every one throws afterwards,
    /// on any thread, while other decodes reuse the words.
    @Test func containersOfRecycledWordsThrowOnEveryThread() throws {
        let holders = (0..<3).map { InnerArchiveHolder(inner: KeepingParent.forest(1_000 * $0)) }
        let data = try Archive.encode(holders)
        let kept = Locked<[KeyedDecodingContainer<KeepingParent.CodingKeys>]>([])
        let cleared = Locked<[KeepingParent]>([])
        // `concurrentPerform`, not Foundation threads: a `Thread` may drop its closure (and the
        // archive it holds) after the process's leak check.
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<10 {
                guard let decoded = try? Archive.decode([InnerArchiveHolder].self, from: data) else { continue }
                let all = decoded.flatMap { $0.inner + $0.inner.flatMap(\.kids) }
                kept.withLock { $0 += all.compactMap(\.kept) }
                cleared.withLock { $0 += all }
            }
        }
        let containers = kept.withLock { $0 }
        #expect(containers.count == 4 * 10 * 3 * 20)
        let thrown = Locked(0)
        nonisolated(unsafe) let shared = containers
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            // One thread decodes again meanwhile, taking recycled words.
            if t == 0 { for _ in 0..<20 { _ = try? Archive.decode([InnerArchiveHolder].self, from: data) } }
            for (i, container) in shared.enumerated() where i % 4 == t {
                if (try? container.decode(Int.self, forKey: .id)) == nil { thrown.withLock { $0 += 1 } }
            }
        }
        #expect(thrown.withLock { $0 } == containers.count)
        for k in cleared.withLock({ $0 }) { k.kept = nil }
    }
}

/// A model that keeps its keyed container past `init(from:)`, and reads a field after
/// decoding nested models of its own type (which share the decoder's cached container).
final class ContainerKeeper: Codable, Archivable {
    var a: Int
    var kids: [ContainerKeeper]
    var b: String
    var kept: KeyedDecodingContainer<CodingKeys>?
    init(a: Int, kids: [ContainerKeeper], b: String) { (self.a, self.kids, self.b) = (a, kids, b) }
    enum CodingKeys: String, CodingKey { case a, kids, b }
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        a = try c.decode(Int.self, forKey: .a)
        kids = try c.decode([ContainerKeeper].self, forKey: .kids)
        b = try c.decode(String.self, forKey: .b)
        kept = c
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(a, forKey: .a)
        try c.encode(kids, forKey: .kids)
        try c.encode(b, forKey: .b)
    }
}

/// A container kept past its model's `init(from:)` stays safe once the decode is over.
@Suite struct KeptContainerAfterDecodeTests {
    static func keepers(_ base: Int) -> [ContainerKeeper] {
        (0..<4).map { i in
            ContainerKeeper(
                a: base + i,
                kids: (0..<3).map { ContainerKeeper(a: base + 10 * i + $0, kids: [], b: "k\(base).\(i).\($0)") },
                b: "b\(base).\(i)"
            )
        }
    }

    @Test func aKeptContainerNeitherCrashesNorReadsTheNextArchive() throws {
        let first = try Archive.decode([ContainerKeeper].self, from: Archive.encode(Self.keepers(100)))
        for (i, k) in first.enumerated() {
            #expect(k.a == 100 + i && k.b == "b100.\(i)")
            for (j, kid) in k.kids.enumerated() { #expect(kid.a == 100 + 10 * i + j && kid.b == "k100.\(i).\(j)") }
        }
        let second = try Archive.decode([ContainerKeeper].self, from: Archive.encode(Self.keepers(500)))
        // A kept container holds the decoder, which holds the decoded objects: a cycle the
        // test breaks itself, or LeakSanitizer reports the decoders at exit.
        defer { for k in first + first.flatMap(\.kids) + second + second.flatMap(\.kids) { k.kept = nil } }
        #expect(second[3].kids[2].a == 530 + 2)
        for k in first + first.flatMap(\.kids) {
            let kept = try #require(k.kept)
            // The decode is over: a typed error or the value it was (never the next archive's).
            if let a = try? kept.decode(Int.self, forKey: .a) { #expect(a == k.a) }
            if let b = try? kept.decode(String.self, forKey: .b) { #expect(b == k.b) }
        }
    }
}
