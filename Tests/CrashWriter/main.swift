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
// of its version or batch, which the test recomputes.
import Archivist
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let arguments = CommandLine.arguments
guard arguments.count == 4, let seed = UInt64(arguments[2]), let round = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: ArchivistCrashWriter <folder> <seed> <round>\n".utf8))
    exit(2)
}
let folder = URL(fileURLWithPath: arguments[1], isDirectory: true)

/// Appends one line to the log with a single write(2).
struct Log {
    let fd: Int32

    init(path: String) {
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 { fail("cannot open \(path): errno \(errno)") }
    }

    func line(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        if write(fd, bytes, bytes.count) != bytes.count { fail("short write to the log") }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ArchivistCrashWriter: \(message)\n".utf8))
    exit(1)
}

/// A SplitMix64 generator, as the tests' own.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Three cache types over both stores and all three durabilities.
enum CrashCache: String, CacheType, CaseIterable {
    case small, large, document

    var location: CacheLocation {
        switch self {
        case .small: .sharedCaches
        case .large: .userCaches
        case .document: .userDocuments
        }
    }

    var policy: CachePolicy {
        switch self {
        case .small: CachePolicy(durability: .none)
        case .large: CachePolicy(durability: .file)
        case .document: CachePolicy(durability: .fileAndFolder)
        }
    }

    var parameters: [String?] {
        switch self {
        case .small: [nil, "p0", "p1", "p2", "p3", "p4"]
        case .large: ["p0", "p1", "p2"]
        case .document: [nil, "a", "b"]
        }
    }

    var maxLength: Int {
        switch self {
        case .small: 2_000
        case .large: 300_000
        case .document: 20_000
        }
    }
}

/// A cache value whose bytes are a function of its version (their count is logged).
struct CrashBlob: Archivable, Sendable {
    var version: Int
    var bytes: Data

    init(version: Int, length: Int) {
        self.version = version
        bytes = Data(repeating: UInt8(truncatingIfNeeded: version &* 131), count: length)
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(version, forKey: "version")
        try archive.encode(bytes, forKey: "bytes")
    }

    init(from archive: ArchiveDecoder) throws {
        version = try archive.decode(Int.self, forKey: "version")
        bytes = try archive.decode(Data.self, forKey: "bytes")
    }
}

/// A record whose payload is a function of its id and the batch that wrote it.
struct CrashRecord: Codable, Archivable, Identifiable, Sendable {
    var id: Int
    var batch: Int
    var payload: Data

    init(id: Int, batch: Int) {
        self.id = id
        self.batch = batch
        let length = (id &* 7919 &+ batch &* 104_729) % 3_000
        payload = Data((0..<length).map { UInt8(truncatingIfNeeded: id &+ batch &* 31 &+ $0) })
    }
}

/// The record carrying the sequence number of the last batch, written in every batch.
let sequenceID = -1

let log = Log(path: folder.path + "/writer.log")
var rng = SplitMix64(state: seed ^ UInt64(round) &* 0xD1B5_4A32_D192_ED03)
do {
    let root = CacheRoot(caches: folder.appendingPathComponent("caches"),
                         documents: folder.appendingPathComponent("documents"))
    let cache = try CacheManager<CrashCache>(root: root, user: "crash-user",
                                             configuration: .init(memoryCountLimit: 0))
    let durability: Durability = round % 2 == 0 ? .none : .file
    let records = try RecordStore<CrashRecord>(
        directory: folder.appendingPathComponent("records"),
        configuration: .init(durability: durability, compactionThreshold: 32 << 10))
    var sequence = records.record(id: sequenceID)?.batch ?? 0
    var version = round * 1_000_000
    log.line("ready")
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
            log.line("B \(sequence) \(upserted) \(deleted)")
            try records.save(batch)
            log.line("E \(sequence)")
            continue
        }
        let type = CrashCache.allCases[Int.random(in: 0..<3, using: &rng)]
        if roll < 32 {
            log.line("x \(type.rawValue)")
            try cache.clear(.type(type))
            log.line("X \(type.rawValue)")
            continue
        }
        let parameter = type.parameters[Int.random(in: 0..<type.parameters.count, using: &rng)]
        let name = parameter ?? "-"
        if roll < 40 {
            log.line("b \(type.rawValue) \(name) -1 0")
            try cache.removeValue(for: type, parameter: parameter)
        } else {
            version += 1
            let length = Int.random(in: 0...type.maxLength, using: &rng)
            log.line("b \(type.rawValue) \(name) \(version) \(length)")
            let blob = CrashBlob(version: version, length: length)
            try cache.store(blob, for: type, parameter: parameter)
        }
        log.line("e \(type.rawValue) \(name)")
    }
} catch {
    fail("\(error)")
}
