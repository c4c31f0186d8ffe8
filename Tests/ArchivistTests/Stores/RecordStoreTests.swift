import Foundation
import Testing

@testable import Archivist

/// Seed 000's diligence record, Codable.
struct Diligence: Codable, Archivable, Identifiable, Sendable, Equatable {
    var id: Int
    var taskID: String
    var startDate: Date
    var endDate: Date
    var breakTimes: Int
    var diligenceTime: Int

    init(id: Int, taskID: String = "t", breakTimes: Int = 0) {
        self.id = id
        self.taskID = taskID
        startDate = Date(timeIntervalSinceReferenceDate: Double(id) * 60)
        endDate = startDate.addingTimeInterval(1_500)
        self.breakTimes = breakTimes
        diligenceTime = 1_500
    }
}

@Suite struct RecordStoreTests {
    private func open(
        _ url: URL,
        _ configuration: RecordStore<Diligence>.Configuration = .init(durability: .none)
    ) throws
        -> RecordStore<Diligence>
    {
        try RecordStore<Diligence>(directory: url, configuration: configuration)
    }

    @Test func crudRoundTripsAndSurvivesReopening() throws {
        try withTemporaryDirectory { url in
            do {
                let store = try open(url)
                try store.insert(Diligence(id: 1))
                try store.insert(Diligence(id: 2))
                try store.upsert(Diligence(id: 3, breakTimes: 1))
                try store.update(id: 2) { $0.breakTimes = 9 }
                #expect(try store.delete(id: 1))
                #expect(try !store.delete(id: 42))
                let duplicate = #expect(throws: StoreError.self) { try store.insert(Diligence(id: 2)) }
                #expect(duplicate?.code == .alreadyExists)
                let missing = #expect(throws: StoreError.self) { try store.update(id: 7) { _ in } }
                #expect(missing?.code == .notFound)
            }
            let reopened = try open(url)
            #expect(reopened.count == 2)
            #expect(reopened.record(id: 2)?.breakTimes == 9)
            #expect(reopened.record(id: 1) == nil)
            #expect(reopened.all().map(\.id) == [3, 2])
            #expect(reopened.recoveredDamage == nil)
        }
    }

    @Test func queriesSortAndLatest() throws {
        try withTemporaryDirectory { url in
            let store = try open(url)
            try store.upsert(
                contentsOf: (0..<50).map {
                    Diligence(id: $0, taskID: $0 % 2 == 0 ? "even" : "odd", breakTimes: 50 - $0)
                }
            )
            try store.update(id: 10) { $0.breakTimes = 0 }
            #expect(store.records(where: { $0.taskID == "even" }).count == 25)
            #expect(store.records(sortedBy: { $0.breakTimes < $1.breakTimes }, limit: 3).map(\.id) == [10, 49, 48])
            #expect(store.latest(3).map(\.id) == [10, 49, 48])
            #expect(store.latest(100).count == 50)
        }
    }

    @Test func batchIsAllOrNothingAcrossAReopen() throws {
        try withTemporaryDirectory { url in
            do {
                let store = try open(url)
                try store.upsert(contentsOf: (0..<10).map { Diligence(id: $0) })
                var batch = RecordBatch<Diligence>()
                batch.upsert(Diligence(id: 100))
                batch.delete(id: 0)
                batch.delete(id: 1)
                try store.save(batch)
            }
            let store = try open(url)
            #expect(store.count == 9)
            #expect(store.contains(id: 100) && !store.contains(id: 0))
        }
    }

    @Test func tornTailIsQuarantinedAndTheRestSurvives() throws {
        try withTemporaryDirectory { url in
            do {
                let store = try open(url)
                for i in 0..<5 { try store.upsert(Diligence(id: i)) }
            }
            // Cut the last entry in half, as a crash mid-append would.
            let log = url.appendingPathComponent("records.log")
            let bytes = try Data(contentsOf: log)
            try bytes.prefix(bytes.count - 20).write(to: log)
            let store = try open(url)
            #expect(store.all().map(\.id) == [0, 1, 2, 3])
            let damage = try #require(store.recoveredDamage)
            #expect(damage.quarantinedBytes > 0)
            #expect(FileManager.default.fileExists(atPath: damage.quarantineURL.path))
            try store.upsert(Diligence(id: 9))
            #expect(try open(url).all().map(\.id) == [0, 1, 2, 3, 9])
        }
    }

    @Test func flippedByteInTheLogStopsReplayThere() throws {
        try withTemporaryDirectory { url in
            do {
                let store = try open(url)
                for i in 0..<4 { try store.upsert(Diligence(id: i)) }
            }
            let log = url.appendingPathComponent("records.log")
            var bytes = [UInt8](try Data(contentsOf: log))
            bytes[bytes.count - 10] ^= 0x40
            try Data(bytes).write(to: log)
            let store = try open(url)
            #expect(store.all().map(\.id) == [0, 1, 2])
            #expect(store.recoveredDamage != nil)
        }
    }

    /// A letter changed inside a record's string leaves the entry's structure intact: only its
    /// checksum tells, and replay must stop there rather than serve the changed text.
    @Test func aLetterChangedInsideARecordIsCaughtByItsChecksum() throws {
        try withTemporaryDirectory { url in
            do {
                let store = try open(url)
                for i in 0..<3 { try store.upsert(Diligence(id: i)) }
                try store.upsert(Diligence(id: 3, taskID: "reading"))
            }
            let log = url.appendingPathComponent("records.log")
            var bytes = [UInt8](try Data(contentsOf: log))
            let text = Array("reading".utf8)
            let at = try #require(
                (0...(bytes.count - text.count)).last { Array(bytes[$0..<($0 + text.count)]) == text }
            )
            bytes[at] = UInt8(ascii: "s")
            try Data(bytes).write(to: log)
            let store = try open(url)
            #expect(store.all().map(\.id) == [0, 1, 2])
            #expect(!store.all().contains { $0.taskID == "seading" })
            #expect(store.recoveredDamage != nil)
        }
    }

    @Test func compactionFoldsTheLogAndKeepsEverything() throws {
        try withTemporaryDirectory { url in
            let configuration = RecordStore<Diligence>.Configuration(durability: .none, compactionThreshold: 2_000)
            do {
                let store = try open(url, configuration)
                for i in 0..<200 { try store.upsert(Diligence(id: i % 40, breakTimes: i)) }
                let logSize =
                    try FileManager.default.attributesOfItem(atPath: url.appendingPathComponent("records.log").path)[
                        .size
                    ] as? Int
                #expect((logSize ?? .max) < 4_000, "the log was compacted")
            }
            let store = try open(url, configuration)
            #expect(store.count == 40)
            #expect(store.record(id: 39)?.breakTimes == 199)
            #expect(store.latest(1).first?.id == 39)
        }
    }

    @Test func crashBetweenSnapshotAndLogResetIsRecognized() throws {
        try withTemporaryDirectory { url in
            do {
                let store = try open(url)
                for i in 0..<3 { try store.upsert(Diligence(id: i)) }
            }
            let log = url.appendingPathComponent("records.log")
            let oldLog = try Data(contentsOf: log)
            do {
                let store = try open(url)
                try store.compact()
                try store.delete(id: 0)
            }
            // Put the pre-compaction log back: its generation is older than the snapshot's.
            try oldLog.write(to: log)
            let store = try open(url)
            #expect(store.all().map(\.id) == [0, 1, 2], "the stale log is ignored, not replayed twice")
        }
    }

    @Test func removeAllEmptiesTheStore() throws {
        try withTemporaryDirectory { url in
            let store = try open(url)
            try store.upsert(contentsOf: (0..<5).map { Diligence(id: $0) })
            try store.removeAll()
            #expect(store.count == 0)
            #expect(try open(url).count == 0)
        }
    }

    @Test func updateClosureMayUseTheStoreAgain() throws {
        try withTemporaryDirectory { url in
            let store = try open(url)
            try store.upsert(Diligence(id: 1))
            try store.update(id: 1) { record in
                record.breakTimes = store.count + 10
                try store.upsert(Diligence(id: 2))  // re-entrant write on the same thread
            }
            #expect(store.record(id: 1)?.breakTimes == 11)
            #expect(store.contains(id: 2))
        }
    }

    @Test func backgroundSaveCallsItsCompletionAndAsyncSaveWaits() async throws {
        try await withTemporaryDirectory { url in
            let store = try open(url)
            let result: Result<Void, StoreError> = await withCheckedContinuation { continuation in
                store.save(RecordBatch(upserting: [Diligence(id: 5)])) { continuation.resume(returning: $0) }
            }
            #expect((try? result.get()) != nil)
            #expect(store.contains(id: 5))
            try await store.save(RecordBatch(upserting: [Diligence(id: 6)]))
            #expect(store.count == 2)
        }
    }

    @Test func concurrentWritersFromEightTasksAllLand() async throws {
        try await withTemporaryDirectory { url in
            let store = try open(url)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        for i in 0..<50 {
                            try store.upsert(Diligence(id: task * 1_000 + i))
                            _ = store.latest(5)
                            if i % 10 == 0 { try store.update(id: task * 1_000 + i) { $0.breakTimes = 1 } }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(store.count == 400)
            let reopened = try open(url)
            #expect(reopened.count == 400)
            #expect(reopened.records(where: { $0.breakTimes == 1 }).count == 40)
        }
    }
}
