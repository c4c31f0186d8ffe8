import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A chain link with several fields, written by hand (the stack-depth tests' model).
final class HandLink: Archivable, @unchecked Sendable {
    var name: String
    var count: Int
    var score: Double
    var tags: [String]
    var next: HandLink?

    init(_ index: Int, next: HandLink?) {
        name = "link \(index)"
        count = index
        score = Double(index) / 3
        tags = ["a", "b"]
        self.next = next
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(name, forKey: "name")
        try archive.encode(count, forKey: "count")
        try archive.encode(score, forKey: "score")
        try archive.encode(tags, forKey: "tags")
        try archive.encode(next, forKey: "next")
    }

    init(from archive: ArchiveDecoder) throws {
        name = try archive.decode(String.self, forKey: "name")
        count = try archive.decode(Int.self, forKey: "count")
        score = try archive.decode(Double.self, forKey: "score")
        tags = try archive.decode([String].self, forKey: "tags")
        next = try archive.decodeIfPresent(HandLink.self, forKey: "next")
    }
}

/// The same link through `Codable`, with compiler-synthesized conformance.
final class CodableLink: Codable, Archivable, @unchecked Sendable {
    var name: String
    var count: Int
    var score: Double
    var tags: [String]
    var next: CodableLink?

    init(_ index: Int, next: CodableLink?) {
        name = "link \(index)"
        count = index
        score = Double(index) / 3
        tags = ["a", "b"]
        self.next = next
    }

    private enum CodingKeys: String, CodingKey { case name, count, score, tags, next }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(count, forKey: .count)
        try container.encode(score, forKey: .score)
        try container.encode(tags, forKey: .tags)
        try container.encodeIfPresent(next, forKey: .next)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        count = try container.decode(Int.self, forKey: .count)
        score = try container.decode(Double.self, forKey: .score)
        tags = try container.decode([String].self, forKey: .tags)
        next = try container.decodeIfPresent(CodableLink.self, forKey: .next)
    }
}

/// `ArchiveLimits`' promise: the deepest chain the default `maxDepth` accepts encodes and
/// decodes on a 512 KiB thread (a secondary thread's stack on Apple platforms), hand-written
/// and `Codable`, in every build CI runs (debug, ASan, TSan); one level more throws
/// `limitExceeded(.depth)` there instead of overflowing the stack.
@Suite struct ArchiveStackDepthTests {
    static let smallStack = 512 * 1024

    @Test(arguments: [false, true])
    func deepestAcceptedChainRoundTripsOnA512KiBThread(codable: Bool) throws {
        let deepest = try onThread(stackSize: 8 << 20) { try Self.deepestAccepted(codable: codable) }
        #expect(deepest >= (codable ? 45 : 90), "the default admits \(deepest) links")
        let model = codable ? "Codable" : "hand-written"
        // Within the limit: encode and decode on the small stack.
        let decodedLength = try onThread(stackSize: Self.smallStack) {
            let data = try Self.encodeChain(deepest, codable: codable)
            return try Self.decodedLength(data, codable: codable)
        }
        #expect(decodedLength == deepest, "\(model) chain of \(deepest)")
        // One deeper: a typed error, on the small stack, both ways.
        let tooDeep = try onThread(stackSize: 8 << 20) {
            try Self.encodeChain(deepest + 1, codable: codable, limits: ArchiveLimits(maxDepth: 10_000))
        }
        let errors = try onThread(stackSize: Self.smallStack) { () -> [ArchiveError.Code?] in
            let encoding = #expect(throws: ArchiveError.self) { try Self.encodeChain(deepest + 1, codable: codable) }
            let decoding = #expect(throws: ArchiveError.self) { try Self.decodedLength(tooDeep, codable: codable) }
            return [encoding?.code, decoding?.code]
        }
        #expect(errors == [.limitExceeded(.depth), .limitExceeded(.depth)], "\(model) chain of \(deepest + 1)")
    }

    @Test func aCodableLevelCountsTwiceAHandWrittenOne() throws {
        let (hand, codable) = try onThread(stackSize: 8 << 20) {
            (try Self.deepestAccepted(codable: false), try Self.deepestAccepted(codable: true))
        }
        #expect(hand == 97)
        #expect(codable == 48)
    }

    /// The boundary under small limits, on a big stack so that a loosened limit fails here
    /// by name rather than by overflowing the small-stack test's thread: the deepest chain
    /// `maxDepth` admits is its share of levels less the root's (a hand-written level weighs
    /// ``ArchiveLimits/levelWeight``, a `Codable` one ``ArchiveLimits/codableLevelWeight``),
    /// it decodes under the same limits, and one link more is refused both ways.
    @Test(arguments: [false, true], [12, 20, 40])
    func theDepthLimitIsExactBothWays(codable: Bool, maxDepth: Int) throws {
        let limits = ArchiveLimits(maxDepth: maxDepth)
        let weight = codable ? ArchiveLimits.codableLevelWeight : ArchiveLimits.levelWeight
        let expected = maxDepth / weight - (codable ? 2 : 3)
        try onThread(stackSize: 8 << 20) {
            #expect(try Self.deepestAccepted(codable: codable, limits: limits) == expected)
            let data = try Self.encodeChain(expected, codable: codable, limits: limits)
            #expect(try Self.decodedLength(data, codable: codable, limits: limits) == expected)
            let tooDeep = try Self.encodeChain(expected + 1, codable: codable, limits: ArchiveLimits(maxDepth: 10_000))
            let error = #expect(throws: ArchiveError.self) {
                try Self.decodedLength(tooDeep, codable: codable, limits: limits)
            }
            #expect(error?.code == .limitExceeded(.depth))
        }
    }

    // MARK: Helpers

    /// The longest chain that encodes under `limits` (found by bisection).
    static func deepestAccepted(codable: Bool, limits: ArchiveLimits = ArchiveLimits()) throws -> Int {
        var accepted = 1
        var refused = 1_000
        while refused - accepted > 1 {
            let middle = (accepted + refused) / 2
            do {
                _ = try encodeChain(middle, codable: codable, limits: limits)
                accepted = middle
            } catch let error as ArchiveError where error.code == .limitExceeded(.depth) {
                refused = middle
            }
        }
        return accepted
    }

    static func encodeChain(_ length: Int, codable: Bool, limits: ArchiveLimits = ArchiveLimits()) throws -> Data {
        let options = ArchiveOptions(limits: limits)
        if codable {
            var chain: CodableLink? = nil
            for index in 0..<length { chain = CodableLink(index, next: chain) }
            return try Archive.encode(chain, options: options)
        }
        var chain: HandLink? = nil
        for index in 0..<length { chain = HandLink(index, next: chain) }
        return try Archive.encode(chain, options: options)
    }

    /// Decodes a chain and returns its length, checking every link's fields.
    static func decodedLength(_ data: Data, codable: Bool, limits: ArchiveLimits = ArchiveLimits()) throws -> Int {
        let options = ArchiveOptions(limits: limits)
        var fields: [(String, Int, Double, [String])] = []
        if codable {
            var link = try Archive.decode(CodableLink?.self, from: data, options: options)
            while let current = link {
                fields.append((current.name, current.count, current.score, current.tags))
                link = current.next
            }
        } else {
            var link = try Archive.decode(HandLink?.self, from: data, options: options)
            while let current = link {
                fields.append((current.name, current.count, current.score, current.tags))
                link = current.next
            }
        }
        let length = fields.count
        for (position, field) in fields.enumerated() {
            let index = length - 1 - position
            guard field.0 == "link \(index)", field.1 == index, field.2 == Double(index) / 3, field.3 == ["a", "b"]
            else {
                throw ArchiveError(.invalidValue, "link \(index) decoded wrong")
            }
        }
        return length
    }
}

/// Runs `body` on a new thread with a stack of `stackSize` bytes and returns its result,
/// after that thread has ended.
///
/// The thread is joined, so nothing `body` captured or returned is released on its small stack
/// after the caller moves on: with a Foundation `Thread`, the thread's last references (its
/// closure, the result box) were dropped when it exited, which under load could come after the
/// caller had dropped its own; the thread then destroyed a 5,000-deep value recursively in 512
/// KiB and crashed the test process with SIGSEGV (a core of a full run showed 14,437 frames of
/// `PlistValue` destruction under `__nptl_deallocate_tsd`).
func onThread<R>(stackSize: Int, _ body: @escaping () throws -> R) throws -> R {
    var result: Result<R, any Error>?
    let work = ThreadWork { result = Result { try body() } }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, stackSize)
    #if canImport(Glibc)
    var thread = pthread_t()
    let start: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { context in
        Unmanaged<ThreadWork>.fromOpaque(context!).takeUnretainedValue().run()
        return nil
    }
    #else
    var thread: pthread_t?
    let start: @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? = { context in
        Unmanaged<ThreadWork>.fromOpaque(context).takeUnretainedValue().run()
        return nil
    }
    #endif
    // The caller keeps `work` (and so everything it holds) alive until the join.
    let created = withExtendedLifetime(work) {
        pthread_create(&thread, &attributes, start, Unmanaged.passUnretained(work).toOpaque())
    }
    guard created == 0 else { throw StorageError.posix("pthread_create", path: "", errno: created) }
    #if canImport(Glibc)
    pthread_join(thread, nil)
    #else
    pthread_join(thread!, nil)
    #endif
    return try withExtendedLifetime(work) { try result!.get() }
}

/// The closure a thread of ``onThread(stackSize:_:)`` runs; the caller owns it.
final class ThreadWork {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}
