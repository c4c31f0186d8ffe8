import Foundation
import Testing

@testable import Archivist

/// `ArchiveLimits.maxTotalBytes` bounds what an encode builds, not only what it returns: the
/// encoder stops at the first value that takes the archive past the limit, so a huge graph
/// never fills memory before it is refused.
@Suite struct ArchiveSizeLimitTests {
    /// Counts the models encoded, to see where an encode stopped.
    final class EncodeCount: @unchecked Sendable {
        var value = 0
    }

    final class Counted: Archivable {
        let count: EncodeCount
        let payload: String
        init(_ count: EncodeCount, _ payload: String) { (self.count, self.payload) = (count, payload) }
        func encode(to archive: ArchiveEncoder) throws {
            count.value += 1
            try archive.encode(payload, forKey: "payload")
        }
        init(from archive: ArchiveDecoder) throws {
            count = EncodeCount()
            payload = try archive.decode(String.self, forKey: "payload")
        }
    }

    @Test func anEncodeStopsAtTheValueThatPassesTheLimit() throws {
        let count = EncodeCount()
        let models = (0..<1_000).map { Counted(count, String(repeating: "x", count: 100 + $0 % 7)) }
        var options = ArchiveOptions()
        options.limits.maxTotalBytes = 2_000
        let error = try #require(throws: ArchiveError.self) { try Archive.encode(models, options: options) }
        #expect(error.code == .limitExceeded(.totalBytes))
        // About 2,000 / 100 models fit; the encode stops right after the first that does not.
        #expect(count.value < 40, "\(count.value) of 1,000 models encoded before the refusal")
        options.limits.maxTotalBytes = 1_000_000
        #expect(try Archive.decode([Counted].self, from: Archive.encode(models, options: options)).count == 1_000)
    }
}
