import Foundation
import Testing

@testable import Archivist

/// A link whose next link sits in an array (of one element, none at the end), hand-written:
/// every level goes through `decodeElements`, which builds the array in place inside a closure.
final class HandArrayLink: Archivable, @unchecked Sendable {
    var name: String
    var next: [HandArrayLink]
    init(_ index: Int, next: HandArrayLink?) { (name, self.next) = ("link \(index)", next.map { [$0] } ?? []) }
    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(name, forKey: "name")
        try archive.encode(next, forKey: "next")
    }
    init(from archive: ArchiveDecoder) throws {
        name = try archive.decode(String.self, forKey: "name")
        next = try archive.decode([HandArrayLink].self, forKey: "next")
    }
}

/// The same through `Codable`.
final class CodableArrayLink: Codable, Archivable, @unchecked Sendable {
    var name: String
    var next: [CodableArrayLink]
    init(_ index: Int, next: CodableArrayLink?) { (name, self.next) = ("link \(index)", next.map { [$0] } ?? []) }
}

/// Probes `ArchiveLimits`' promise for graphs whose levels are arrays: the deepest one the
/// default `maxDepth` accepts decodes on a 512 KiB thread, one level more throws
/// `limitExceeded(.depth)` there.
@Suite struct ArrayLinkStackDepthTests {
    static func encode(_ length: Int, codable: Bool, limits: ArchiveLimits = ArchiveLimits()) throws -> Data {
        let options = ArchiveOptions(limits: limits)
        if codable {
            var chain: CodableArrayLink? = nil
            for index in 0..<length { chain = CodableArrayLink(index, next: chain) }
            return try Archive.encode(chain!, options: options)
        }
        var chain: HandArrayLink? = nil
        for index in 0..<length { chain = HandArrayLink(index, next: chain) }
        return try Archive.encode(chain!, options: options)
    }

    static func decodedLength(_ data: Data, codable: Bool) throws -> Int {
        var length = 0
        if codable {
            var link: CodableArrayLink? = try Archive.decode(CodableArrayLink.self, from: data)
            while let current = link {
                length += 1
                link = current.next.first
            }
        } else {
            var link: HandArrayLink? = try Archive.decode(HandArrayLink.self, from: data)
            while let current = link {
                length += 1
                link = current.next.first
            }
        }
        return length
    }

    /// The longest that decodes under the default limits (bisection, on a large stack).
    static func deepestDecoded(codable: Bool) throws -> Int {
        var accepted = 1
        var refused = 1_000
        while refused - accepted > 1 {
            let middle = (accepted + refused) / 2
            let data = try encode(middle, codable: codable, limits: ArchiveLimits(maxDepth: 100_000))
            do {
                _ = try decodedLength(data, codable: codable)
                accepted = middle
            } catch let error as ArchiveError where error.code == .limitExceeded(.depth) {
                refused = middle
            }
        }
        return accepted
    }

    @Test(arguments: [false, true])
    func deepestAcceptedArrayChainDecodesOnA512KiBThread(codable: Bool) throws {
        let (deepest, within, beyond) = try onThread(stackSize: 8 << 20) { () throws -> (Int, Data, Data) in
            let deepest = try Self.deepestDecoded(codable: codable)
            let big = ArchiveLimits(maxDepth: 100_000)
            return (
                deepest, try Self.encode(deepest, codable: codable, limits: big),
                try Self.encode(deepest + 1, codable: codable, limits: big)
            )
        }
        #expect(deepest >= 10, "the default admits \(deepest) levels")
        let (length, code) = try onThread(stackSize: 512 * 1024) { () throws -> (Int, ArchiveError.Code?) in
            let length = try Self.decodedLength(within, codable: codable)
            let error = #expect(throws: ArchiveError.self) { try Self.decodedLength(beyond, codable: codable) }
            return (length, error?.code)
        }
        #expect(length == deepest)
        #expect(code == .limitExceeded(.depth))
    }
}
