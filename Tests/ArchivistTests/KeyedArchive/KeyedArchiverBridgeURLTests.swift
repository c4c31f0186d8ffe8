import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// `NSURL` inside keyed archives: corelibs' `NSURL.init(coder:)` bridges its `NS.base` to
/// `URL`, which traps on strings Swift's URL parser rejects. The validator resolves every URL
/// against its base chain first.
@Suite struct KeyedArchiverBridgeURLTests {
    /// The fuzz find (seed 10, round 27,364 of `KeyedArchiveFuzz`): one byte of the corelibs
    /// ComplexTest fixture turns its base URL `https://www.swift.org` into `https://ww:.swift.org`,
    /// which CoreFoundation accepts and Swift's `URL(string:)` does not; decoding the NSURL
    /// relative to it trapped inside `NSURL.init(coder:)`.
    static func mutatedComplexTest() throws -> Data {
        var bytes = [UInt8](
            try KeyedArchiveFixtures.data("swift-corelibs-foundation/NSKeyedUnarchiver-ComplexTest.plist")
        )
        try #require(bytes.count > 369 && bytes[369] == UInt8(ascii: "w"))
        bytes[369] = UInt8(ascii: ":")
        return Data(bytes)
    }

    @Test(.needsKeyedArchiveFixtures) func fuzzFoundBaseURLIsRefused() throws {
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.validate(try Self.mutatedComplexTest())
        }
        #expect(error.code == .corrupt)
        #expect(error.codingPath == ["$objects", "[16]", "NS.relative"], "\(error)")
        #expect(error.typeName == "NSURL")
    }

    @Test(arguments: KeyedArchiveURLs.refused.map(\.name))
    func urlFoundationCannotDecodeSafelyIsCorrupt(_ name: String) throws {
        let data = try #require(KeyedArchiveURLs.refused.first { $0.name == name }?.data)
        let error = try #require(throws: ArchiveError.self) { try KeyedArchiverBridge.validate(data) }
        #expect(error.code == .corrupt, "\(error)")
    }

    @Test func baseChainThatLoopsIsRefused() throws {
        // Root URL 3 has base 5, whose base is 3 again.
        let data = KeyedArchiveURLs.archive([
            KeyedArchiveURLs.url(base: 5, relative: 4), KeyedArchiveURLs.string("a"),
            KeyedArchiveURLs.url(base: 3, relative: 4),
        ])
        let error = try #require(throws: ArchiveError.self) { try KeyedArchiverBridge.validate(data) }
        #expect(error.code == .unresolvedReference)
    }

    @Test func relativeURLResolvesAgainstItsBaseChain() throws {
        // Root "c" relative to "b/" relative to "https://example.com/a/".
        let data = KeyedArchiveURLs.archive([
            KeyedArchiveURLs.url(base: 5, relative: 4), KeyedArchiveURLs.string("c"),
            KeyedArchiveURLs.url(base: 7, relative: 6), KeyedArchiveURLs.string("b/"),
            KeyedArchiveURLs.url(base: 0, relative: 8), KeyedArchiveURLs.string("https://example.com/a/"),
        ])
        let url = try KeyedArchiverBridge.unarchive(NSURL.self, from: data)
        #expect(url.absoluteString == "https://example.com/a/b/c")
        #expect((url as URL).absoluteString == "https://example.com/a/b/c")
    }

    // An exit test (a child process): macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// The same inputs through the whole bridge, Foundation included, in a child process: were
    /// one to slip past the validator it would crash the child, not the test runner.
    @Test(.needsKeyedArchiveFixtures) func refusedURLsNeverReachFoundation() async throws {
        _ = try #require(KeyedArchiveFixtures.directory(), Comment(rawValue: KeyedArchiveFixtures.missingMessage))
        await #expect(processExitsWith: .success) {
            let inputs = KeyedArchiveURLs.refused.map(\.data) + [try KeyedArchiverBridgeURLTests.mutatedComplexTest()]
            for data in inputs {
                do {
                    _ = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)
                    exit(EXIT_FAILURE)  // every one of them must be refused
                } catch let error as ArchiveError where error.code == .corrupt {
                    continue
                } catch {
                    exit(EXIT_FAILURE)
                }
            }
        }
    }
    #endif
}
