import Foundation
import Testing

@testable import Archivist

/// An entry's length is a u32: a batch that archives to more than 4 GiB must not trap in
/// `UInt32(entry.count)`; it is a `StoreError`, thrown before any byte is written. The
/// limit is lowered here rather than allocating 4 GiB.
@Suite struct ChangeLogEntryLimitTests {
    private func openLog(_ url: URL, limit: Int) throws -> ChangeLog {
        let log = try ChangeLog(directory: url, durability: .none, entryLimit: limit)
        _ = try log.load(snapshotGeneration: 0, as: Int.self, options: ArchiveOptions()) { _ in }
        return log
    }

    private func fileSize(_ log: ChangeLog) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: log.logPath)[.size] as? Int)
    }

    @Test func theDefaultLimitIsWhatAU32LengthCanSay() throws {
        try withTemporaryDirectory { url in
            let log = try ChangeLog(directory: url, durability: .none)
            #expect(log.entryLimit == Int(UInt32.max))
        }
    }

    @Test func anEntryOverTheLimitThrowsBeforeAnyByteIsWritten() throws {
        try withTemporaryDirectory { url in
            let log = try openLog(url, limit: 64)
            try log.append(Data(count: 64))  // exactly at the limit: fine
            let size = try fileSize(log)
            let error = try #require(throws: StoreError.self) { try log.append(Data(count: 65)) }
            #expect(error.code == .notRepresentable)
            #expect(error.fileURL?.path == log.logPath)
            let underlying = try #require(error.underlyingError as? ArchiveError)
            #expect(underlying.code == .limitExceeded(.totalBytes))
            #expect(try fileSize(log) == size, "nothing of the refused entry reached the file")
            #expect(log.size == 4 + 64)
            try log.append(Data(count: 1))  // the log goes on
            #expect(try fileSize(log) == size + 4 + 1)
        }
    }

    @Test func theGuardAloneAcceptsUpToTheLimit() throws {
        try withTemporaryDirectory { url in
            let log = try ChangeLog(directory: url, durability: .none)
            try log.checkEntrySize(Int(UInt32.max))
            #expect(throws: StoreError.self) { try log.checkEntrySize(Int(UInt32.max) + 1) }
        }
    }
}
