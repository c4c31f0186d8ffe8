import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// A change-log entry whose bytes are intact but that a store cannot decode — here a record
/// holding a `PetDog`, which a store opened without `PetDog` in its `allowedTypes` refuses —
/// is not damage. Before, such a store set the entry and every committed entry after it aside
/// in a quarantine file and cut the log there, so other processes' later records were lost
/// to everyone. Now opening, `refresh()` and every write throw `StoreError.corrupt` with the
/// decoder's `ArchiveError` (`.disallowedType`) as the underlying error, and the log stays as
/// it is until a store that allows the type reads it.
@Suite struct RecordStoreRefusedEntryTests {
    private func logBytes(_ folder: URL) throws -> Data {
        try Data(contentsOf: folder.appendingPathComponent("records.log"))
    }

    private func quarantineFiles(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("quarantine") }
    }

    /// The refusal every opener that does not allow dogs gets.
    private func expectRefusal(_ error: StoreError?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.code == .corrupt, sourceLocation: sourceLocation)
        #expect(
            (error?.underlyingError as? ArchiveError)?.code == .disallowedType,
            "\(String(describing: error))",
            sourceLocation: sourceLocation
        )
    }

    /// Records 0–3 (1 and 3 dogs), then record 0 renamed: every record after the first dog
    /// is in the log after the entry a refusing store cannot read.
    private func writeMixedRecords(_ folder: URL) throws {
        let writer = try RecordStore<PetRecord>(directory: folder, configuration: PetRecord.allowingDogs)
        for index in 0..<4 { try writer.insert(PetRecord.numbered(index)) }
        try writer.update(id: "pet-0") { $0 = PetRecord.numbered(0, name: "renamed") }
    }

    private func expectAllRecords(_ folder: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let store = try RecordStore<PetRecord>(directory: folder, configuration: PetRecord.allowingDogs)
        #expect(store.recoveredDamage == nil, sourceLocation: sourceLocation)
        #expect(store.all().map(\.id).sorted() == ["pet-0", "pet-1", "pet-2", "pet-3"], sourceLocation: sourceLocation)
        #expect(store.record(id: "pet-0")?.pet.name == "renamed", sourceLocation: sourceLocation)
        #expect(store.record(id: "pet-3")?.pet is PetDog, sourceLocation: sourceLocation)
    }

    @Test func openingThrowsAndTheLogStaysForAStoreThatAllowsTheType() throws {
        let folder = try ScratchFolder()
        try writeMixedRecords(folder.url)
        let before = try logBytes(folder.url)
        for _ in 0..<2 {
            let error = #expect(throws: StoreError.self) {
                try RecordStore<PetRecord>(directory: folder.url, configuration: PetRecord.refusingDogs)
            }
            expectRefusal(error)
        }
        #expect(try logBytes(folder.url) == before, "the refusing opener changed the log")
        #expect(try quarantineFiles(folder.url).isEmpty)
        try expectAllRecords(folder.url)
        // After a compaction the dogs are in the snapshot, which a refusing opener also cannot read.
        try RecordStore<PetRecord>(directory: folder.url, configuration: PetRecord.allowingDogs).compact()
        expectRefusal(
            #expect(throws: StoreError.self) {
                try RecordStore<PetRecord>(directory: folder.url, configuration: PetRecord.refusingDogs)
            }
        )
        try expectAllRecords(folder.url)
    }

    /// An opener that read the log before the dogs were written (another process, or another
    /// store instance here) meets them when catching up: its `refresh()` and writes throw and
    /// append nothing; the writer goes on, and nothing it committed is lost.
    @Test func anOpenerThatRefusesAnEntryWhileCatchingUpLeavesTheLogToTheOthers() throws {
        let folder = try ScratchFolder()
        let refusing = try RecordStore<PetRecord>(directory: folder.url, configuration: PetRecord.refusingDogs)
        try refusing.insert(PetRecord.numbered(10))
        try writeMixedRecords(folder.url)
        let before = try logBytes(folder.url)
        expectRefusal(#expect(throws: StoreError.self) { try refusing.refresh() })
        expectRefusal(#expect(throws: StoreError.self) { try refusing.upsert(PetRecord.numbered(12)) })
        expectRefusal(#expect(throws: StoreError.self) { try refusing.compact() })
        #expect(refusing.record(id: "pet-0") != nil, "the entries before the refused one were applied")
        #expect(!refusing.contains(id: "pet-12"))
        #expect(try logBytes(folder.url) == before, "the refusing opener changed the log")
        #expect(try quarantineFiles(folder.url).isEmpty)
        #expect(refusing.recoveredDamage == nil)
        let fresh = try RecordStore<PetRecord>(directory: folder.url, configuration: PetRecord.allowingDogs)
        #expect(fresh.count == 5 && fresh.contains(id: "pet-10"))
        try expectAllRecordsBut(fresh, "pet-10")
    }

    private func expectAllRecordsBut(_ store: RecordStore<PetRecord>, _ extra: String) throws {
        #expect(store.all().map(\.id).filter { $0 != extra }.sorted() == ["pet-0", "pet-1", "pet-2", "pet-3"])
        #expect(store.record(id: "pet-0")?.pet.name == "renamed")
    }

    // Starts worker processes: macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// The same with the writer in another process (`records-pets`).
    @Test func aWorkerProcessesDogsStayWhenThisProcessRefusesThem() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let refusing = try RecordStore<PetRecord>(directory: folder.url, configuration: PetRecord.refusingDogs)
        try refusing.insert(PetRecord.numbered(0))
        ChildProcess.waitForAll([try ChildProcess(worker, ["records-pets", folder.url.path, "1", "6"])])
        let before = try logBytes(folder.url)
        expectRefusal(#expect(throws: StoreError.self) { try refusing.refresh() })
        expectRefusal(#expect(throws: StoreError.self) { try refusing.delete(id: "pet-0") })
        #expect(try logBytes(folder.url) == before)
        #expect(try quarantineFiles(folder.url).isEmpty)
        let fresh = try RecordStore<PetRecord>(directory: folder.url, configuration: PetRecord.allowingDogs)
        #expect(fresh.recoveredDamage == nil)
        #expect(fresh.all().map(\.id).sorted() == (0..<7).map { "pet-\($0)" }.sorted())
        ChildProcess.waitForAll([try ChildProcess(worker, ["records-pets", folder.url.path, "7", "2"])])
        try fresh.refresh()
        #expect(fresh.count == 9)
    }
    #endif

    /// Damage is still damage: a flipped byte inside the entry after the dogs fails its
    /// checksum, and that entry and the rest are quarantined, by any opener.
    @Test func aDamagedEntryAfterARefusedOneIsStillQuarantinedByAnOpenerThatReadsIt() throws {
        let folder = try ScratchFolder()
        try writeMixedRecords(folder.url)
        var bytes = [UInt8](try logBytes(folder.url))
        bytes[bytes.count - 3] ^= 0x40  // inside the last entry (the rename)
        try Data(bytes).write(to: folder.url.appendingPathComponent("records.log"))
        expectRefusal(
            #expect(throws: StoreError.self) {
                try RecordStore<PetRecord>(directory: folder.url, configuration: PetRecord.refusingDogs)
            }
        )
        let store = try RecordStore<PetRecord>(directory: folder.url, configuration: PetRecord.allowingDogs)
        #expect(store.count == 4 && store.record(id: "pet-0")?.pet.name == "pet 0")
        #expect(try #require(store.recoveredDamage).quarantinedBytes > 0)
    }
}
