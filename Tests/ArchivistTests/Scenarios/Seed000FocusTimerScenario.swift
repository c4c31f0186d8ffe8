import Archivist
import Foundation
import Testing

/// Seed 000: the focus timer's data — a task table (add, delete, update, query), diligence
/// records per task (add, delete, query), today's story keeping only the latest (with its
/// image), and defaults shipped with the app — with Archivable models instead of plists.
/// (The plist form of the same job is `PlistSeedScenarioTests`.) Public API only.
@Suite struct Seed000FocusTimerScenario {
    struct FocusTask: Codable, Archivable, Identifiable, Sendable, Equatable {
        var id: String
        var name: String
        var color: String
        var diligenceTime: Int
        var isRestMode: Bool
        var restTime: Int
        var isFocusMode: Bool
        var musicName: String
        var isMusicEnabled: Bool
        var isAlertEnabled: Bool
        var alertTime: Date
    }

    struct DiligenceRecord: Codable, Archivable, Identifiable, Sendable, Equatable {
        var id: UUID
        var taskID: String
        var startDate: Date
        var endDate: Date
        var breakTimes: Int
        var diligenceTime: Int
    }

    struct TodaysStory: Codable, Archivable, Sendable, Equatable {
        var dateToday: Date
        var title: String
        var attribute: String
        var para1: String
        var image: Data
    }

    enum FocusCache: String, CacheType {
        case story
        var location: CacheLocation { .userDocuments }
    }

    private func task(_ id: String, _ name: String) -> FocusTask {
        FocusTask(
            id: id,
            name: name,
            color: "#FF6666",
            diligenceTime: 25,
            isRestMode: true,
            restTime: 5,
            isFocusMode: false,
            musicName: "rain",
            isMusicEnabled: true,
            isAlertEnabled: false,
            alertTime: Date(timeIntervalSinceReferenceDate: 700_000_000)
        )
    }

    /// The app's launch: open the task table, seeding it from the bundled defaults when empty.
    private func openTasks(in folder: URL, bundledDefaults: URL) throws -> RecordStore<FocusTask> {
        let tasks = try RecordStore<FocusTask>(directory: folder.appendingPathComponent("tasks"))
        if tasks.count == 0, let shipped = try? Data(contentsOf: bundledDefaults) {
            try tasks.upsert(contentsOf: try Archive.decode([FocusTask].self, from: shipped))
        }
        return tasks
    }

    @Test func focusTimerDataWithArchivableModels() throws {
        try withTemporaryDirectory { folder in
            // The defaults the app ships (in its bundle): two tasks.
            let bundled = folder.appendingPathComponent("Bundle/defaultTasks.archive")
            try FileManager.default.createDirectory(
                at: bundled.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Archive.encode([task("t1", "Focus"), task("t2", "Read")]).write(to: bundled)
            let documents = folder.appendingPathComponent("Documents")

            // First launch: the defaults are there.
            var tasks = try openTasks(in: documents, bundledDefaults: bundled)
            #expect(tasks.all().map(\.name) == ["Focus", "Read"])

            // Add, update, delete, query.
            try tasks.insert(task("t3", "Run"))
            try tasks.update(id: "t2") {
                $0.diligenceTime = 50
                $0.isAlertEnabled = true
            }
            try tasks.delete(id: "t1")
            #expect(tasks.records(where: { $0.isAlertEnabled }).map(\.id) == ["t2"])

            // Second launch: the user's table, not the defaults again.
            tasks = try openTasks(in: documents, bundledDefaults: bundled)
            #expect(tasks.all().map(\.id) == ["t3", "t2"], "write order: t2 was updated after t3 was added")
            #expect(tasks.record(id: "t2")?.diligenceTime == 50)

            // Diligence records per task: add, query by task, delete.
            let diligence = try RecordStore<DiligenceRecord>(directory: documents.appendingPathComponent("diligence"))
            let start = Date(timeIntervalSinceReferenceDate: 710_000_000)
            let sessions = (0..<5).map { i in
                DiligenceRecord(
                    id: UUID(),
                    taskID: i < 3 ? "t2" : "t3",
                    startDate: start.addingTimeInterval(Double(i) * 3_600),
                    endDate: start.addingTimeInterval(Double(i) * 3_600 + 1_500),
                    breakTimes: i % 2,
                    diligenceTime: 1_500
                )
            }
            try diligence.upsert(contentsOf: sessions)
            let forT2 = diligence.records(where: { $0.taskID == "t2" }, sortedBy: { $0.startDate < $1.startDate })
            #expect(forT2.count == 3)
            #expect(forT2.map(\.breakTimes).reduce(0, +) == 1)
            try diligence.delete(id: sessions[0].id)
            #expect(diligence.records(where: { $0.taskID == "t2" }).count == 2)

            // Today's story: only the latest is kept, image bytes and all.
            let cache = try CacheManager<FocusCache>(
                root: CacheRoot(directory: folder.appendingPathComponent("Cache")),
                user: "me"
            )
            for day in 1...3 {
                let story = TodaysStory(
                    dateToday: start.addingTimeInterval(Double(day) * 86_400),
                    title: "Day \(day)",
                    attribute: "Bing",
                    para1: "今日背景图故事 \(day)",
                    image: Data(repeating: UInt8(day), count: 300_000)
                )
                try cache.store(story, for: .story)
            }
            let story = try #require(try cache.value(TodaysStory.self, for: .story))
            #expect(story.title == "Day 3" && story.image == Data(repeating: 3, count: 300_000))
            #expect(cache.size(of: .story) < 2 * 300_000, "older stories are replaced, not kept")
        }
    }
}
