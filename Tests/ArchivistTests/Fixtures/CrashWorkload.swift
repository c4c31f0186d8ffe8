// What the crash tests need, which start and kill a writer process: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistTestSupport
import Foundation
@testable import Archivist

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
    mutating func apply(log lines: [String]) -> Pending? {
        var pending: Pending?
        for line in lines {
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
                continue  // "ready"
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
#endif
