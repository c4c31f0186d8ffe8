import Foundation
import Testing

@testable import Archivist

/// The change log's header, generation included, is checksummed: a generation that differs
/// from the snapshot's makes the store reset the log as "already folded in", so one flipped
/// bit there must be reported as damage, never drop every batch since the last snapshot.
@Suite struct ChangeLogHeaderTests {
    private let configuration = RecordStore<Diligence>.Configuration(durability: .none)

    /// Ten records in a snapshot of generation 1, twenty batches in its log.
    private func writeStore(at url: URL) throws {
        let store = try RecordStore<Diligence>(directory: url, configuration: configuration)
        try store.upsert(contentsOf: (0..<10).map { Diligence(id: $0) })
        try store.compact()
        for id in 10..<30 { try store.upsert(Diligence(id: id)) }
    }

    private func logURL(_ url: URL) -> URL { url.appendingPathComponent("records.log") }

    private func quarantined(_ url: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).filter { $0.hasPrefix("records.log.quarantine") }
    }

    @Test(arguments: [8, 9, 12, 15])
    func flippedGenerationBitIsReportedNeverSilent(byte: Int) throws {
        try withTemporaryDirectory { url in
            try writeStore(at: url)
            var log = try Data(contentsOf: logURL(url))
            log[byte] ^= 0x04
            try log.write(to: logURL(url))
            let store = try RecordStore<Diligence>(directory: url, configuration: configuration)
            let damage = try #require(store.recoveredDamage, "20 committed batches were dropped silently")
            #expect(damage.quarantinedBytes == log.count)
            #expect(try Data(contentsOf: damage.quarantineURL) == log, "the whole log is kept aside")
            #expect(store.count == 10)
            // The store goes on: a new batch lands and survives a reopen, without new damage.
            try store.upsert(Diligence(id: 99))
            let reopened = try RecordStore<Diligence>(directory: url, configuration: configuration)
            #expect(reopened.count == 11 && reopened.recoveredDamage == nil)
        }
    }

    @Test func generationNewerThanTheSnapshotIsDamage() throws {
        try withTemporaryDirectory { url in
            try writeStore(at: url)
            var log = try Data(contentsOf: logURL(url))
            log.replaceSubrange(0..<ChangeLog.headerSize, with: ChangeLog.makeHeader(generation: 7))
            try log.write(to: logURL(url))
            let store = try RecordStore<Diligence>(directory: url, configuration: configuration)
            #expect(store.recoveredDamage?.quarantinedBytes == log.count)
            #expect(try quarantined(url).count == 1)
        }
    }

    @Test func olderCheckedGenerationIsFoldedInWithoutDamage() throws {
        try withTemporaryDirectory { url in
            try writeStore(at: url)
            let oldLog = try Data(contentsOf: logURL(url))
            let store = try RecordStore<Diligence>(directory: url, configuration: configuration)
            try store.compact()
            try oldLog.write(to: logURL(url))  // a crash between the snapshot's rename and the log's reset
            let reopened = try RecordStore<Diligence>(directory: url, configuration: configuration)
            #expect(reopened.count == 30 && reopened.recoveredDamage == nil)
        }
    }

    /// A version 1 log: the same entries behind the 16-byte header without a checksum.
    private func legacyLog(from log: Data, generation: UInt64) -> Data {
        var header = Data(ChangeLog.magic + [1, 0, 0, 0])
        withUnsafeBytes(of: generation.littleEndian) { header.append(contentsOf: $0) }
        return header + log.dropFirst(ChangeLog.headerSize)
    }

    @Test func versionOneLogsStillReplayAndAppend() throws {
        try withTemporaryDirectory { url in
            try writeStore(at: url)
            try legacyLog(from: Data(contentsOf: logURL(url)), generation: 1).write(to: logURL(url))
            do {
                let store = try RecordStore<Diligence>(directory: url, configuration: configuration)
                #expect(store.count == 30 && store.recoveredDamage == nil)
                try store.upsert(Diligence(id: 30))
            }
            let store = try RecordStore<Diligence>(directory: url, configuration: configuration)
            #expect(store.count == 31 && store.recoveredDamage == nil)
            try store.compact()
            #expect(
                try Data(contentsOf: logURL(url)).prefix(ChangeLog.headerSize)
                    == Data(ChangeLog.makeHeader(generation: 2))
            )
        }
    }

    @Test func versionOneLogWithEntriesAndAnotherGenerationIsDamage() throws {
        try withTemporaryDirectory { url in
            try writeStore(at: url)
            let legacy = legacyLog(from: try Data(contentsOf: logURL(url)), generation: 0)
            try legacy.write(to: logURL(url))
            let store = try RecordStore<Diligence>(directory: url, configuration: configuration)
            #expect(store.recoveredDamage?.quarantinedBytes == legacy.count - ChangeLog.legacyHeaderSize)
        }
    }
}
