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

/// A child process started with `posix_spawn`, so the test can SIGKILL it at any moment.
struct ChildProcess {
    let pid: pid_t

    /// Starts `executable` with `arguments` and this process's environment.
    init(_ executable: String, _ arguments: [String]) throws {
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, nil, nil, &argv, &envp)
        guard result == 0 else { throw CacheError.posix("posix_spawn", path: executable, errno: result) }
        self.pid = pid
    }

    /// Sends SIGKILL and reaps the child; returns its wait status.
    func kill() -> Int32 {
        #if canImport(Glibc)
        _ = Glibc.kill(pid, SIGKILL)
        #else
        _ = Darwin.kill(pid, SIGKILL)
        #endif
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}

/// The crash writer's executable, built by `swift test` next to the test bundle (the test
/// target depends on it). `ARCHIVIST_CRASH_WRITER` overrides the search.
func crashWriterPath() -> String? {
    if let path = ProcessInfo.processInfo.environment["ARCHIVIST_CRASH_WRITER"] { return path }
    let me = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    var folder = me.resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<5 {   // on macOS the test binary sits inside a bundle: X.xctest/Contents/MacOS
        let candidate = folder.appendingPathComponent("ArchivistCrashWriter").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        folder.deleteLastPathComponent()
    }
    return nil
}
