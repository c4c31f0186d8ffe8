// The process the crash tests kill (Tests/ArchivistTests/Reliability/CrashTests.swift).
//
// Usage: ArchivistCrashWriter <folder> <seed> <round>
//
// Opens a CacheManager under <folder>/caches and <folder>/documents and a RecordStore under
// <folder>/records, then stores, removes and clears cache entries and saves record batches
// until it is killed. Before and after each operation it appends a line to <folder>/writer.log
// with one write(2) each (a SIGKILL loses no completed write(2), so the log is exact):
//
//     ready
//     b <type> <parameter> <version> <length>   store of a version began (version -1: removal)
//     e <type> <parameter>                ... and returned
//     x <type>                            clear of a type began
//     X <type>                            ... and returned
//     B <sequence> <upserted ids> <deleted ids>   batch began (ids comma-separated, or -)
//     E <sequence>                        ... and returned
//
// Every value is self-checking: a cache entry's bytes and a record's payload are a function
// of its version or batch, which the test recomputes. The types, the generator and the log
// are shared with the tests (Tests/ArchivistTestSupport).
import Archivist
import ArchivistTestSupport
import Foundation

exitWhenParentExits()
let arguments = CommandLine.arguments
guard arguments.count == 4, let seed = UInt64(arguments[2]), let round = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: ArchivistCrashWriter <folder> <seed> <round>\n".utf8))
    exit(2)
}
let folder = URL(fileURLWithPath: arguments[1], isDirectory: true)

/// The record carrying the sequence number of the last batch, written in every batch.
let sequenceID = -1

var rng = SplitMix64(seed: seed ^ UInt64(round) &* 0xD1B5_4A32_D192_ED03)
do {
    let log = try ProgressLog(appendingTo: folder.path + "/writer.log")
    let root = CacheRoot(
        caches: folder.appendingPathComponent("caches"),
        documents: folder.appendingPathComponent("documents")
    )
    let cache = try CacheManager<CrashCache>(
        root: root,
        user: "crash-user",
        configuration: .init(memoryCountLimit: 0)
    )
    let durability: Durability = round % 2 == 0 ? .none : .file
    let records = try RecordStore<CrashRecord>(
        directory: folder.appendingPathComponent("records"),
        configuration: .init(durability: durability, compactionThreshold: 32 << 10)
    )
    var sequence = records.record(id: sequenceID)?.batch ?? 0
    var version = round * 1_000_000
    try log.append("ready")
    while true {
        let roll = Int.random(in: 0..<100, using: &rng)
        if roll < 30 {
            sequence += 1
            var batch = RecordBatch<CrashRecord>()
            var ids = Set<Int>()
            for _ in 0..<Int.random(in: 2...8, using: &rng) { ids.insert(Int.random(in: 0..<40, using: &rng)) }
            for id in ids.sorted() { batch.upsert(CrashRecord(id: id, batch: sequence)) }
            batch.upsert(CrashRecord(id: sequenceID, batch: sequence))
            let victim = Int.random(in: 0..<40, using: &rng)
            if !ids.contains(victim) && roll % 2 == 0 { batch.delete(id: victim) }
            let upserted = batch.upserts.map { String($0.id) }.joined(separator: ",")
            let deleted = batch.deletes.isEmpty ? "-" : batch.deletes.map(String.init).joined(separator: ",")
            try log.append("B \(sequence) \(upserted) \(deleted)")
            try records.save(batch)
            try log.append("E \(sequence)")
            continue
        }
        let type = CrashCache.allCases[Int.random(in: 0..<3, using: &rng)]
        if roll < 32 {
            try log.append("x \(type.rawValue)")
            try cache.clear(.type(type))
            try log.append("X \(type.rawValue)")
            continue
        }
        let parameter = type.parameters[Int.random(in: 0..<type.parameters.count, using: &rng)]
        let name = parameter ?? "-"
        if roll < 40 {
            try log.append("b \(type.rawValue) \(name) -1 0")
            try cache.removeValue(for: type, parameter: parameter)
        } else {
            version += 1
            let length = Int.random(in: 0...type.maxLength, using: &rng)
            try log.append("b \(type.rawValue) \(name) \(version) \(length)")
            let blob = CrashBlob(version: version, length: length)
            try cache.store(blob, for: type, parameter: parameter)
        }
        try log.append("e \(type.rawValue) \(name)")
    }
} catch {
    fail("\(error)")
}
