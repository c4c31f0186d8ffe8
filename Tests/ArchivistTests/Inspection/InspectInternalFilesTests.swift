import ArchivistInspection
import Foundation
import Testing

@testable import Archivist

/// `archivist inspect` on a cache root's own `.archivist` files: the size index snapshot, the
/// journal, the shared counters, the marker and the locks, each said for what it is with what
/// it records; and the summaries the library gives of their bytes.
@Suite struct InspectInternalFilesTests {
    // Runs the archivist tool as a process: macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// The `.archivist` file `name` of the fixture's root, inspected as JSON.
    static func inspect(
        _ fixture: ToolRootFixture,
        _ name: String
    ) throws -> (run: ToolRun, report: [String: Any], fields: [String: Any]) {
        let run = try ToolRun(["inspect", fixture.root.appendingPathComponent(".archivist/" + name).path, "--json"])
        let report = try run.object()
        var fields: [String: Any] = [:]
        for node in try report.member("nodes", as: [[String: Any]].self) {
            if let key = node["key"] as? String { fields[key] = node["value"] }
        }
        return (run, report, fields)
    }

    @Test func theIndexSnapshotShowsItsEpochFoldersAndEntries() throws {
        let fixture = try ToolRootFixture()
        try fixture.cache.flush()
        let (run, report, fields) = try Self.inspect(fixture, "index")
        #expect(run.status == 0, "\(run.output) \(run.errors)")
        #expect(report["kind"] as? String == "size index snapshot")
        let bytes = try [UInt8](Data(contentsOf: fixture.root.appendingPathComponent(".archivist/index")))
        guard case .indexSnapshot(let summary?) = PersistentIndex.internalFileSummary(of: .indexSnapshot, bytes: bytes)
        else {
            Issue.record("the snapshot does not read")
            return
        }
        #expect((fields["epoch"] as? NSNumber)?.uint64Value == summary.epoch)
        #expect((fields["entries"] as? NSNumber)?.intValue == summary.entries)
        #expect((fields["folders"] as? NSNumber)?.intValue == summary.folders)

        let text = try ToolRun(["inspect", fixture.root.appendingPathComponent(".archivist/index").path])
        #expect(text.output.contains(": size index snapshot, "), "\(text.output)")
        #expect(!text.output.contains("not a file archivist knows"))
    }
    #endif

    @Test func theSnapshotSummaryCountsWhatTheIndexHeldWhenSaved() throws {
        let fixture = try ToolRootFixture()
        let store = try DiskStore.open(at: fixture.root)
        try store.rebuildIndex()  // a rescan saves a snapshot of every entry
        let bytes = try [UInt8](Data(contentsOf: fixture.root.appendingPathComponent(".archivist/index")))
        guard case .indexSnapshot(let summary?) = PersistentIndex.internalFileSummary(of: .indexSnapshot, bytes: bytes)
        else {
            Issue.record("the snapshot does not read")
            return
        }
        #expect(summary.entries == 6)
        #expect(summary.logicalBytes == fixture.cache.totalSize)
        #expect(summary.folders == 5)  // one per type folder

        var damaged = bytes
        damaged[30] ^= 0xFF  // in the directory, which its checksum covers
        #expect(PersistentIndex.internalFileSummary(of: .indexSnapshot, bytes: damaged) == .indexSnapshot(nil))
    }

    // Runs the archivist tool as a process: macOS and Linux only.
    #if os(macOS) || os(Linux)
    @Test func theJournalCountsItsRecordsAndATornTailIsDamage() throws {
        let fixture = try ToolRootFixture()
        try fixture.cache.removeValue(for: .apiStrategy, parameter: "/v1/orders")
        let journal = fixture.root.appendingPathComponent(".archivist/journal")
        let bytes = try [UInt8](Data(contentsOf: journal))
        guard case .journal(let summary) = PersistentIndex.internalFileSummary(of: .journal, bytes: bytes) else {
            Issue.record("not a journal summary")
            return
        }
        #expect(summary.removals >= 1)
        #expect(summary.wholeBytes == bytes.count)
        #expect(!summary.isDamaged)

        let (run, report, fields) = try Self.inspect(fixture, "journal")
        #expect(run.status == 0)
        #expect(report["kind"] as? String == "size index journal")
        #expect((fields["records"] as? NSNumber)?.intValue == summary.records)

        try Data(bytes + [0x40, 0x00]).write(to: journal)  // a writer that died two bytes into a record
        guard case .journal(let torn) = PersistentIndex.internalFileSummary(of: .journal, bytes: bytes + [0x40, 0x00])
        else {
            return
        }
        #expect(torn.isDamaged && torn.wholeBytes == bytes.count && torn.records == summary.records)
        let damaged = try ToolRun(["inspect", journal.path])
        #expect(damaged.status == 1)
        #expect(
            damaged.output.contains("DAMAGE: after byte \(bytes.count) the journal is not a whole, checked record"),
            "\(damaged.output)"
        )
    }

    @Test func theSharedCountersShowTheEpochAndTheProcessesWithTheRootOpen() throws {
        let fixture = try ToolRootFixture()
        try fixture.cache.flush()
        let (run, report, fields) = try Self.inspect(fixture, "shared")
        #expect(run.status == 0, "\(run.output)")
        #expect(report["kind"] as? String == "shared counters")
        #expect((fields["processes"] as? NSNumber)?.intValue == 1)  // this process
        #expect(fields["intent"] as? Bool == false)
        #expect((fields["statistics"] as? NSNumber)?.intValue == 5)  // the five types the fixture stored
        let index = try Self.inspect(fixture, "index")
        #expect((fields["epoch"] as? NSNumber)?.uint64Value == (index.fields["epoch"] as? NSNumber)?.uint64Value)
    }

    @Test func theMarkerAndLocksSayWhatTheyAre() throws {
        let fixture = try ToolRootFixture()
        try fixture.cache.flush()
        let marker = try Self.inspect(fixture, "dirty")
        #expect(marker.report["kind"] as? String == "index marker")
        #expect((marker.fields["state"] as? String)?.hasPrefix("C") == true, "\(marker.fields)")
        let lock = try Self.inspect(fixture, "lock")
        #expect(lock.report["kind"] as? String == "root lock file")
        #expect(lock.run.status == 0)
        #expect(PersistentIndex.internalFileSummary(of: .marker, bytes: Array("D".utf8)) == .marker(dirty: true))
    }

    @Test func theInternalFolderSummarisesEachFile() throws {
        let fixture = try ToolRootFixture()
        try fixture.cache.flush()
        let run = try ToolRun(["inspect", fixture.root.appendingPathComponent(".archivist").path])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains(": cache root's internal folder, "), "\(run.output)")
        for heading in [
            "index: size index snapshot", "journal: size index journal", "shared: shared counters",
            "dirty: index marker", "lock: root lock file", "trash: 0 items",
        ] {
            #expect(run.output.contains(heading), "\(heading) in \(run.output)")
        }
    }
    #endif
}
