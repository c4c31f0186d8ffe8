import Foundation
import Testing

@testable import Archivist

/// A record type as an app shipped it first.
private struct ShippedTask: Codable, Archivable, Identifiable, Sendable, Equatable {
    var id: Int
    var name: String
}

/// The same record type after a rename, naming its old name as the Guide says.
private struct RenamedTask: Codable, Archivable, Identifiable, Sendable, Equatable {
    static var formerArchiveTypeNames: [String] { ["ShippedTask"] }
    var id: Int
    var name: String
}

/// The same record type after a rename, with the old name mapped by `ArchiveOptions`.
private struct MappedTask: Codable, Archivable, Identifiable, Sendable, Equatable {
    var id: Int
    var name: String
}

/// A change-log entry as logs before format version 2 archived it: named after the record type.
private struct LegacyShippedBatch: Archivable {
    static var archiveTypeName: String { "RecordBatch<ShippedTask>" }
    var upserts: [ShippedTask]
    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(upserts, forKey: "upserts")
        try archive.encode([Int](), forKey: "deletes")
    }
    init(upserts: [ShippedTask]) { self.upserts = upserts }
    init(from archive: ArchiveDecoder) throws { upserts = try archive.decode([ShippedTask].self, forKey: "upserts") }
}

/// Renaming a record type keeps the snapshot's records and the change log's entries alike,
/// whose batches were archived as `RecordBatch<ShippedTask>`.
@Suite struct RecordStoreRenameTests {
    /// Ten records folded into the snapshot, twenty more only in the change log.
    private func writeShippedStore(at url: URL) throws {
        let store = try RecordStore<ShippedTask>(directory: url, configuration: .init(durability: .none))
        try store.upsert(contentsOf: (0..<10).map { ShippedTask(id: $0, name: "snapshot \($0)") })
        try store.compact()
        for id in 10..<30 { try store.upsert(ShippedTask(id: id, name: "log \(id)")) }
        try store.delete(id: 3)
    }

    @Test func formerArchiveTypeNamesKeepSnapshotAndLog() throws {
        try withTemporaryDirectory { url in
            try writeShippedStore(at: url)
            let store = try RecordStore<RenamedTask>(directory: url, configuration: .init(durability: .none))
            #expect(store.recoveredDamage == nil)
            #expect(store.count == 29)
            #expect(store.record(id: 29)?.name == "log 29")
            #expect(store.record(id: 3) == nil)
            // New entries and a compaction under the new name read back too.
            try store.upsert(RenamedTask(id: 30, name: "after"))
            let reopened = try RecordStore<RenamedTask>(directory: url, configuration: .init(durability: .none))
            #expect(reopened.count == 30 && reopened.recoveredDamage == nil)
            try reopened.compact()
            #expect(try RecordStore<RenamedTask>(directory: url).count == 30)
        }
    }

    @Test func renamedTypesOptionKeepsSnapshotAndLog() throws {
        try withTemporaryDirectory { url in
            try writeShippedStore(at: url)
            let options = ArchiveOptions(renamedTypes: ["ShippedTask": "MappedTask"])
            let store = try RecordStore<MappedTask>(
                directory: url,
                configuration: .init(durability: .none, archiveOptions: options)
            )
            #expect(store.recoveredDamage == nil)
            #expect(store.count == 29)
            #expect(store.record(id: 20)?.name == "log 20")
        }
    }

    @Test func batchNameNoLongerEmbedsTheRecordType() {
        #expect(RecordBatch<ShippedTask>.archiveTypeName == RecordBatch<RenamedTask>.archiveTypeName)
        #expect(RecordBatch<RenamedTask>.formerArchiveTypeNames.contains("RecordBatch<ShippedTask>"))
    }

    @Test func entriesOfOldLogsStillDecodeUnderEitherName() throws {
        let legacy = try Archive.encode(LegacyShippedBatch(upserts: [ShippedTask(id: 1, name: "old")]))
        #expect(try Archive.decode(RecordBatch<ShippedTask>.self, from: legacy).upserts.map(\.id) == [1])
        #expect(try Archive.decode(RecordBatch<RenamedTask>.self, from: legacy).upserts.map(\.name) == ["old"])
        let mapped = RecordBatch<MappedTask>.decodingOptions(
            ArchiveOptions(renamedTypes: ["ShippedTask": "MappedTask"])
        )
        #expect(try Archive.decode(RecordBatch<MappedTask>.self, from: legacy, options: mapped).upserts.count == 1)
    }
}
