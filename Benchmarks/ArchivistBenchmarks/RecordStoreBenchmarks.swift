import Archivist
import Foundation

/// A task-list app's task as a record.
struct TaskRecord: Codable, Archivable, Identifiable, Sendable {
    var id: Int
    var task: CodableTask

    init(_ i: Int) {
        id = i
        task = CodableTask(HandTask(i))
    }

    /// The plist form the seeds write: a dictionary of property-list values.
    var plist: [String: Any] {
        [
            "id": task.id, "name": task.name, "color": task.color, "diligenceTime": task.diligenceTime,
            "isRestMode": task.isRestMode, "restTime": task.restTime, "isFocusMode": task.isFocusMode,
            "musicName": task.musicName, "isMusicEnabled": task.isMusicEnabled,
            "isAlertEnabled": task.isAlertEnabled, "alertTime": task.alertTime,
        ]
    }
}

/// RecordStore with 1,000 / 10,000 / 100,000 records: one update, and an upsert of 1,000,
/// against rewriting the whole plist as an app that keeps its table in a plist does for every change.
func runRecordStoreBenchmarks(_ harness: Harness) throws {
    let quick = harness.options.quick
    let sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]
    let suite = "records"
    for size in sizes {
        let folder = harness.scratch.appendingPathComponent("records-\(size)")
        let store = try RecordStore<TaskRecord>(
            directory: folder,
            configuration: .init(durability: .none, compactionThreshold: 8 << 20)
        )
        try store.upsert(contentsOf: (0..<size).map(TaskRecord.init))
        var counter = 0
        harness.measure(suite, "\(size): RecordStore update one", samples: 201) {
            counter += 1
            _ = try? store.update(id: counter % size) { $0.task.diligenceTime += 1 }
            return nil
        }
        let durable = try RecordStore<TaskRecord>(
            directory: folder.appendingPathComponent("durable"),
            configuration: .init(durability: .file)
        )
        try durable.upsert(contentsOf: (0..<size).map(TaskRecord.init))
        harness.measure(suite, "\(size): RecordStore update one (fsync)", samples: quick ? 21 : 51) {
            counter += 1
            _ = try? durable.update(id: counter % size) { $0.task.diligenceTime += 1 }
            return nil
        }
        harness.measure(suite, "\(size): RecordStore upsert 1,000", samples: 11) {
            counter += 1
            try? store.upsert(contentsOf: (0..<1_000).map { TaskRecord((counter * 1_000 + $0) % size) })
            return nil
        }

        // The seeds' way: the whole table is a plist dictionary rewritten on every change.
        var table: [String: Any] = [:]
        for i in 0..<size { table[String(i)] = TaskRecord(i).plist }
        let plistURL = folder.appendingPathComponent("taskData.plist")
        // A rewrite grows with the rows, and at 100,000 one alone is a long part of the run:
        // one cold sample there, three at 10,000. Quick mode: three samples at every size, and
        // no warm-up at 10,000.
        let rewriteSamples = quick ? 3 : size >= 100_000 ? 1 : size >= 10_000 ? 3 : 11
        let rewriteWarmUp = size < (quick ? 10_000 : 100_000)
        harness.measure(suite, "\(size): plist rewrite per change", samples: rewriteSamples, warmUp: rewriteWarmUp) {
            counter += 1
            var row = table[String(counter % size)] as? [String: Any] ?? [:]
            row["diligenceTime"] = counter
            table[String(counter % size)] = row
            let data = try? PropertyListSerialization.data(fromPropertyList: table, format: .binary, options: 0)
            try? data?.write(to: plistURL, options: .atomic)
            return data?.count
        }
    }
    harness.printTable(suite, title: "RecordStore vs rewriting the whole plist") { name in
        guard let size = name.split(separator: ":").first else { return nil }
        return "\(size): plist rewrite per change"
    }
}
