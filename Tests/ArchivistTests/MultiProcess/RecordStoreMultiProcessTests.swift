import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Several processes writing one `RecordStore` folder at once lose nothing: each appends to
/// the one shared log under its lock and catches up with the others' entries first, and a
/// compaction folds in every process's records, not only its own.
@Suite struct RecordStoreMultiProcessTests {
    private static let configuration = RecordStore<WorkerRecord>.Configuration(
        durability: .none,
        compactionThreshold: 8 << 10
    )

    private func open(_ url: URL) throws -> RecordStore<WorkerRecord> {
        try RecordStore<WorkerRecord>(directory: url, configuration: Self.configuration)
    }

    private func record(_ id: String, _ count: Int = 0) -> WorkerRecord {
        WorkerRecord(id: id, count: count, payload: String(repeating: "y", count: 64))
    }

    /// Two stores of one folder in this process behave as two processes do (each has its own
    /// descriptors and lock file description): deterministic, and cheap.
    @Test func twoOpenersSeeEachOthersWritesAndCompactionsKeepBoth() throws {
        try withTemporaryDirectory { url in
            let first = try open(url)
            let second = try open(url)
            for index in 0..<300 {
                try first.upsert(record("a-\(index)"))
                try second.upsert(record("b-\(index)"))
            }
            try first.compact()
            try second.upsert(record("b-last"))
            try first.refresh()
            #expect(first.count == 601 && first.contains(id: "b-last"))
            // insert's duplicate check and update's read see the other opener's writes.
            #expect(throws: StoreError.self) { try second.insert(record("a-0")) }
            try first.update(id: "b-0") { $0.count = 7 }
            try second.update(id: "b-0") { $0.count += 1 }
            try first.refresh()
            #expect(first.record(id: "b-0")?.count == 8)
            #expect(try second.delete(id: "a-1"))
            #expect(try !first.delete(id: "a-1"))
            let fresh = try open(url)
            #expect(fresh.count == 600 && fresh.recoveredDamage == nil)
            #expect(fresh.record(id: "b-0")?.count == 8)
            print(
                "RecordStore cross-process lock, longest hold: \(first.crossProcessLock.longestHold) (compacting 600 records)"
            )
        }
    }

    /// `update(id:)` runs its closure on this process's copy first; when another opener
    /// changed the record, the closure's outcome is decided on the new value.
    @Test func updateDecidesOnTheLatestValueOfAnyOpener() throws {
        struct Stale: Error {}
        try withTemporaryDirectory { url in
            let first = try open(url)
            let second = try open(url)
            try first.insert(record("shared", 0))
            try second.update(id: "shared") { $0.count = 5 }
            var runs = 0
            let saved = try first.update(id: "shared") { value in
                runs += 1
                guard value.count == 5 else { throw Stale() }
                value.count += 1
            }
            #expect(saved.count == 6 && runs == 2)
            try second.insert(record("only-second", 1))
            #expect(try first.update(id: "only-second") { $0.count = 2 }.count == 2)
            try second.refresh()
            #expect(second.record(id: "shared")?.count == 6 && second.record(id: "only-second")?.count == 2)
        }
    }

    // Starts worker processes: macOS and Linux only.
    #if os(macOS) || os(Linux)
    @Test func threeWorkersUpsertingDistinctIdsLoseNothing() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        try withTemporaryDirectory { url in
            let children = try (0..<3).map { index in
                try ChildProcess(worker, ["records-upsert", url.path, "w\(index)", "1000", index == 0 ? "250" : "0"])
            }
            ChildProcess.waitForAll(children)
            let store = try open(url)
            #expect(store.recoveredDamage == nil)
            #expect(store.count == 3_000)
            for index in 0..<3 {
                let missing = (0..<1_000).filter { !store.contains(id: "w\(index)-\($0)") }
                #expect(missing.isEmpty, "worker \(index) lost \(missing.count) ids")
            }
            #expect(temporaries(under: url).isEmpty)
        }
    }

    @Test func mixedWorkersKeepEveryCommittedChangeAndEveryIncrement() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        try withTemporaryDirectory { url in
            let folder = url.appendingPathComponent("store")
            let reports = (0..<4).map { url.appendingPathComponent("report-\($0)").path }
            let children = try (0..<4).map { index in
                try ChildProcess(
                    worker,
                    ["records-mixed", folder.path, "m\(index)", "400", "\(index + 1)", "3", reports[index]]
                )
            }
            ChildProcess.waitForAll(children)
            let store = try open(folder)
            #expect(store.recoveredDamage == nil)
            var increments = 0
            var ownRecords = 0
            for (index, report) in reports.enumerated() {
                let lines = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n")
                for line in lines {
                    let fields = line.split(separator: " ")
                    if fields[0] == "increments" {
                        increments += Int(fields[1]) ?? 0
                    } else {
                        ownRecords += 1
                        #expect(
                            store.record(id: String(fields[0]))?.count == Int(fields[1]),
                            "worker \(index): \(line)"
                        )
                    }
                }
            }
            let counted = (0..<3).compactMap { store.record(id: "counter-\($0)")?.count }.reduce(0, +)
            #expect(counted == increments, "update(id:) lost increments across processes")
            #expect(store.count == ownRecords + 3)
        }
    }

    /// A writer killed with SIGKILL again and again, at any moment (inside an append, a
    /// compaction, the open), while another keeps writing: everything the survivor committed
    /// is there, each killed writer's ids are a prefix of what it tried, and the store opens.
    @Test func writersKilledMidRunLoseNothingOfTheSurvivors() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        try withTemporaryDirectory { url in
            let survivor = try ChildProcess(worker, ["records-upsert", url.path, "survivor", "1500", "300"])
            var random = SplitMix64(seed: 0x5EED)
            var kills = 0
            for round in 0..<60 {
                let victim = try ChildProcess(worker, ["records-upsert", url.path, "victim\(round)", "100000", "200"])
                usleep(UInt32.random(in: 20_000...60_000, using: &random))
                _ = victim.kill()
                kills += 1
            }
            ChildProcess.waitForAll([survivor])
            let store = try open(url)
            let missing = (0..<1_500).filter { !store.contains(id: "survivor-\($0)") }
            #expect(missing.isEmpty, "the survivor lost \(missing.count) committed ids")
            for round in 0..<kills {
                let written = store.all().filter { $0.id.hasPrefix("victim\(round)-") }.count
                let prefix = (0..<written).allSatisfy { store.contains(id: "victim\(round)-\($0)") }
                #expect(prefix, "killed writer \(round) left a gap")
            }
            // Any damage is a killed writer's torn tail: smaller than one of its entries.
            if let damage = store.recoveredDamage { #expect(damage.quarantinedBytes < 512) }
            let reopened = try open(url)
            #expect(reopened.count == store.count && reopened.recoveredDamage == nil)
            #expect(temporaries(under: url).isEmpty)
        }
    }
    #endif
}
