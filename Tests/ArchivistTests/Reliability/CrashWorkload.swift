import Foundation
@testable import Archivist
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The crash writer's types (Tests/CrashWriter/main.swift), mirrored so the test can read what
// it wrote: the same names (archive type names are unqualified), locations and encodings.

/// The writer's cache types.
enum CrashCache: String, CacheType, CaseIterable {
    case small, large, document

    var location: CacheLocation {
        switch self {
        case .small: .sharedCaches
        case .large: .userCaches
        case .document: .userDocuments
        }
    }

    var parameters: [String?] {
        switch self {
        case .small: [nil, "p0", "p1", "p2", "p3", "p4"]
        case .large: ["p0", "p1", "p2"]
        case .document: [nil, "a", "b"]
        }
    }
}

/// The writer's cache value: `count` bytes, each a function of the version.
struct CrashBlob: Archivable, Sendable {
    var version: Int
    var bytes: Data

    /// Whether the bytes are exactly what the writer stores for `version` with `length` bytes.
    func isIntact(length: Int) -> Bool {
        let expected = UInt8(truncatingIfNeeded: version &* 131)
        return bytes.count == length && bytes.allSatisfy { $0 == expected }
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

/// The writer's record: a payload that is a function of the id and the batch.
struct CrashRecord: Codable, Archivable, Identifiable, Sendable {
    var id: Int
    var batch: Int
    var payload: Data

    /// Whether the payload is exactly what the writer stores for this id and batch.
    var isIntact: Bool {
        let length = (id &* 7919 &+ batch &* 104_729) % 3_000
        return payload == Data((0..<length).map { UInt8(truncatingIfNeeded: id &+ batch &* 31 &+ $0) })
    }
}

/// What the test knows the writer committed, kept across kills.
struct CrashModel {
    /// A cache entry: `nil` when absent, else the version and the byte count it was written with.
    struct Entry: Hashable {
        var version: Int
        var length: Int
    }

    struct Key: Hashable, CustomStringConvertible {
        var type: CrashCache
        var parameter: String?
        var description: String { "\(type.rawValue)/\(parameter ?? "-")" }
    }

    /// Every entry whose store or removal returned.
    var entries: [Key: Entry] = [:]
    /// Every record (id → the batch that last wrote it) of the batches whose save returned.
    var records: [Int: Int] = [:]

    /// The operation that had begun but not returned when the writer was killed.
    enum Pending {
        case store(Key, Entry?)
        case clear(CrashCache)
        case batch(upserts: [Int], deletes: [Int], sequence: Int)
    }

    /// Applies a round's log; returns the operation in flight at the kill, if any.
    mutating func apply(log text: String) -> Pending? {
        var pending: Pending?
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ").map(String.init)
            switch fields.first {
            case "b":
                let key = Key(type: CrashCache(rawValue: fields[1])!, parameter: fields[2] == "-" ? nil : fields[2])
                let version = Int(fields[3])!
                pending = .store(key, version < 0 ? nil : Entry(version: version, length: Int(fields[4])!))
            case "e":
                if case .store(let key, let entry)? = pending { entries[key] = entry }
                pending = nil
            case "x":
                pending = .clear(CrashCache(rawValue: fields[1])!)
            case "X":
                if case .clear(let type)? = pending { entries = entries.filter { $0.key.type != type } }
                pending = nil
            case "B":
                let ids = { (field: String) in field == "-" ? [] : field.split(separator: ",").map { Int($0)! } }
                pending = .batch(upserts: ids(fields[2]), deletes: ids(fields[3]), sequence: Int(fields[1])!)
            case "E":
                if case .batch(let upserts, let deletes, let sequence)? = pending {
                    records = Self.applying(upserts, deletes, sequence, to: records)
                }
                pending = nil
            default:
                continue   // "ready"
            }
        }
        return pending
    }

    static func applying(_ upserts: [Int], _ deletes: [Int], _ sequence: Int, to records: [Int: Int]) -> [Int: Int] {
        var result = records
        for id in upserts { result[id] = sequence }
        for id in deletes { result[id] = nil }
        return result
    }
}

/// The crash writer's executable, built by `swift test` next to the test bundle (the test
/// target depends on it). `ARCHIVIST_CRASH_WRITER` overrides the search.
func crashWriterPath() -> String? {
    executableNextToTests(named: "ArchivistCrashWriter", override: "ARCHIVIST_CRASH_WRITER")
}
