import Archivist
import Foundation
import Testing

@testable import ArchivistKeyedArchive

/// The NSCoder-shaped unarchiver stops at `ArchiveLimits.maxDepth` exactly: a chain of that
/// many objects decodes, one more throws `.limitExceeded(.depth)` — with small limits, so a
/// loosened bound fails here rather than overflowing the stack somewhere else.
@Suite struct KeyedArchiveUnarchiverDepthTests {
    final class Link: KeyedArchiveEncodable, KeyedArchiveDecodable {
        let next: Link?
        init(next: Link?) { self.next = next }
        init(from unarchiver: KeyedArchiveUnarchiver) throws {
            next = try unarchiver.decodeObject(of: Link.self, forKey: "next")
        }
        var keyedArchiveClassChain: [String] { ["Link", "NSObject"] }
        func encode(with archiver: KeyedArchiveArchiver) throws {
            try archiver.encodeObject(next, forKey: "next")
        }
    }

    static func chain(_ count: Int) throws -> Data {
        let head = (1..<count).reduce(Link(next: nil)) { inner, _ in Link(next: inner) }
        var limits = ArchiveLimits()
        limits.maxDepth = 10_000
        return try KeyedArchiveWriter.archive(head, limits: limits)
    }

    static func length(of link: Link) -> Int {
        var count = 1
        var cursor = link
        while let next = cursor.next {
            count += 1
            cursor = next
        }
        return count
    }

    @Test(arguments: [1, 2, 16, 64])
    func aChainOfMaxDepthObjectsDecodesAndOneMoreThrows(maxDepth: Int) throws {
        var limits = ArchiveLimits()
        limits.maxDepth = maxDepth
        let atLimit = try KeyedArchive(data: Self.chain(maxDepth), limits: limits)
        #expect(Self.length(of: try atLimit.unarchive(Link.self)) == maxDepth)
        let deeper = try KeyedArchive(data: Self.chain(maxDepth + 1), limits: limits)
        let error = try #require(throws: ArchiveError.self) { try deeper.unarchive(Link.self) }
        #expect(error.code == .limitExceeded(.depth))
    }
}
