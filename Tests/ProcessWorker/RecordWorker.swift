import Archivist
import ArchivistTestSupport
import Foundation

/// Opens the store the RecordStore workers share: no fsync (a killed process's writes are
/// in the page cache all the same) and a small compaction threshold, so compactions happen
/// while other processes append.
private func openSharedStore(_ path: String) throws -> RecordStore<WorkerRecord> {
    try RecordStore<WorkerRecord>(
        directory: URL(fileURLWithPath: path, isDirectory: true),
        configuration: .init(durability: .none, compactionThreshold: 8 << 10)
    )
}

/// `records-upsert <folder> <prefix> <count> [<compact every>]`: upserts `<prefix>-0` …
/// `<prefix>-<count - 1>` one at a time, in order, compacting after every `<compact every>`
/// upserts (0: never). A process killed midway has committed a prefix of these ids.
func recordsUpsert(_ arguments: [String]) throws {
    let store = try openSharedStore(argument(arguments, 0, "folder") { $0 })
    let prefix = argument(arguments, 1, "prefix") { $0 }
    let count = argument(arguments, 2, "count") { Int($0) }
    let compactEvery = arguments.count > 3 ? argument(arguments, 3, "compact every") { Int($0) } : 0
    for index in 0..<count {
        try store.upsert(
            WorkerRecord(id: "\(prefix)-\(index)", count: index, payload: String(repeating: "x", count: 64))
        )
        if compactEvery > 0 && (index + 1) % compactEvery == 0 { try store.compact() }
    }
}

/// `records-mixed <folder> <prefix> <count> <seed> <counters> <report file>`: `count` random operations on
/// this worker's own ids (`<prefix>-0` … `<prefix>-49`: upsert, update, delete, insert), each
/// followed by an increment of one of the shared records `counter-0` … `counter-<counters - 1>`
/// through `update(id:)`; then writes to the report file, one per line, `<id> <count>` for every own record it
/// expects to survive, and `increments <n>`.
func recordsMixed(_ arguments: [String]) throws {
    let store = try openSharedStore(argument(arguments, 0, "folder") { $0 })
    let prefix = argument(arguments, 1, "prefix") { $0 }
    let count = argument(arguments, 2, "count") { Int($0) }
    var random = SplitMix64(seed: argument(arguments, 3, "seed") { UInt64($0) })
    let counters = argument(arguments, 4, "counters") { Int($0) }
    let report = argument(arguments, 5, "report file") { $0 }
    for index in 0..<counters {
        // Whoever comes first creates the counter; the others find it there.
        do {
            try store.insert(WorkerRecord(id: "counter-\(index)", count: 0, payload: ""))
        } catch let error as StoreError where error.code == .alreadyExists {}
    }
    var expected: [String: Int] = [:]
    for step in 0..<count {
        let id = "\(prefix)-\(Int.random(in: 0..<50, using: &random))"
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            try store.upsert(WorkerRecord(id: id, count: step, payload: "upsert"))
            expected[id] = step
        case 1:
            if expected[id] != nil {
                try store.update(id: id) { $0.count = step }
                expected[id] = step
            }
        case 2:
            let existed = try store.delete(id: id)
            guard existed == (expected.removeValue(forKey: id) != nil) else {
                fail("delete(\(id)) returned \(existed)")
            }
        default:
            if expected[id] == nil {
                try store.insert(WorkerRecord(id: id, count: step, payload: "insert"))
                expected[id] = step
            }
        }
        try store.update(id: "counter-\(Int.random(in: 0..<counters, using: &random))") { $0.count += 1 }
    }
    var lines = expected.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
    lines.append("increments \(count)")
    try lines.joined(separator: "\n").write(toFile: report, atomically: true, encoding: .utf8)
}
