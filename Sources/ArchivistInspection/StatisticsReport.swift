import Archivist
import Foundation

/// `archivist stats`: the per-type statistics every process of a root has counted
/// (``CacheStatistics``), read from the root's shared file without opening a store.
package struct StatisticsReport: Sendable {
    /// One type's row: its name, location and counts.
    package struct Row: Sendable {
        package var typeName: String
        package var location: String
        package var counts: CacheStatistics.Counts
    }

    package var root: String
    /// Whether the root has a statistics table at all.
    package var available: Bool
    package var rows: [Row]

    /// The location names by the scope numbers the rows record.
    static let locations = ["shared-caches", "user-caches", "user-documents"]

    /// Reads the statistics of the root at `root`.
    ///
    /// - Throws: ``CacheError`` when the shared file exists but cannot be read.
    /// - Complexity: Blocking file I/O: one `open`, `fstat` and `mmap`.
    package init(root: String) throws {
        self.root = root
        guard let (_, contents) = try CacheStatistics.read(rootPath: root) else {
            available = false
            rows = []
            return
        }
        available = true
        var merged: [String: Row] = [:]
        for row in contents {
            let name = row.isNameComplete ? row.name : row.name + "…"
            let location = Int(row.scope) < Self.locations.count ? Self.locations[Int(row.scope)] : "scope \(row.scope)"
            let key = location + "\u{0}" + name
            let counts = CacheStatistics.Counts(counters: row.counters)
            merged[key] = Row(
                typeName: name,
                location: location,
                counts: (merged[key]?.counts ?? CacheStatistics.Counts()) + counts
            )
        }
        rows = merged.values.sorted { ($0.location, $0.typeName) < ($1.location, $1.typeName) }
    }

    /// Every type's counts added up.
    package var total: CacheStatistics.Counts { rows.reduce(CacheStatistics.Counts()) { $0 + $1.counts } }

    /// The report for people: reads and hit rates, then writes, evictions, bytes and errors,
    /// one line per type and a total.
    package var text: String {
        guard available else { return "\(root): no statistics yet (no process with statistics has opened it)" }
        func rate(_ counts: CacheStatistics.Counts) -> String {
            counts.hitRate.map { String(format: "%.1f %%", $0 * 100) } ?? "-"
        }
        var reads: [[String]] = [
            ["TYPE", "LOCATION", "READS", "HIT RATE", "MEMORY", "DISK", "MISSES", "EXPIRED", "AVG READ", "AVG DECODE"]
        ]
        var writes: [[String]] = [
            ["TYPE", "STORES", "REMOVALS", "EVICTED (LIMIT/COUNT/EXPIRY)", "READ", "WRITTEN", "ERRORS"]
        ]
        for row in rows + [Row(typeName: "total", location: "", counts: total)] {
            let c = row.counts
            reads.append([
                row.typeName, row.location, Formatting.count(c.reads), rate(c), Formatting.count(c.memoryHits),
                Formatting.count(c.diskHits), Formatting.count(c.misses), Formatting.count(c.expiredReads),
                c.averageReadTime.map(Formatting.duration) ?? "-", c.averageDecodeTime.map(Formatting.duration) ?? "-",
            ])
            let errors = c.errors.sorted { $0.key.description < $1.key.description }
                .map { "\($0.key): \(Formatting.count($0.value))" }.joined(separator: ", ")
            writes.append([
                row.typeName, Formatting.count(c.stores), Formatting.count(c.removals),
                "\(Formatting.count(c.evictions.byteLimit))/\(Formatting.count(c.evictions.count))/\(Formatting.count(c.evictions.expiry))",
                Formatting.bytes(Int64(clamping: c.bytesRead)), Formatting.bytes(Int64(clamping: c.bytesWritten)),
                errors.isEmpty ? "-" : errors,
            ])
        }
        return "\(root)\n" + Formatting.table(reads, rightAligned: Set(2...9)) + "\n\n"
            + Formatting.table(writes, rightAligned: [1, 2, 3, 4, 5])
            + "\n\nMemory hits arrive when each process reads or resets statistics, flushes, closes its manager or exits."
    }

    /// The report as JSON: `root`, `available`, `types` (each with `type`, `location` and the
    /// counts) and `total`. Counts: `reads`, `hitRate`, `memoryHits`, `diskHits`, `misses`,
    /// `expiredReads`, `stores`, `removals`, `evictions` (`byteLimit`, `count`, `expiry`),
    /// `bytesRead`, `bytesWritten`, `errors` (by code), `timedReads`, `readNanoseconds`,
    /// `decodeNanoseconds`.
    package var json: JSONValue {
        .object([
            ("root", .string(root)), ("available", .bool(available)),
            (
                "types",
                .array(
                    rows.map { row in
                        .object(
                            [("type", .string(row.typeName)), ("location", .string(row.location))]
                                + Self.members(row.counts)
                        )
                    }
                )
            ),
            ("total", .object(Self.members(total))),
        ])
    }

    static func members(_ c: CacheStatistics.Counts) -> [(String, JSONValue)] {
        [
            ("reads", .unsigned(c.reads)), ("hitRate", c.hitRate.map { .double($0) } ?? .null),
            ("memoryHits", .unsigned(c.memoryHits)), ("diskHits", .unsigned(c.diskHits)),
            ("misses", .unsigned(c.misses)),
            ("expiredReads", .unsigned(c.expiredReads)), ("stores", .unsigned(c.stores)),
            ("removals", .unsigned(c.removals)),
            (
                "evictions",
                .object([
                    ("byteLimit", .unsigned(c.evictions.byteLimit)), ("count", .unsigned(c.evictions.count)),
                    ("expiry", .unsigned(c.evictions.expiry)),
                ])
            ),
            ("bytesRead", .unsigned(c.bytesRead)), ("bytesWritten", .unsigned(c.bytesWritten)),
            (
                "errors",
                .object(
                    c.errors.sorted { "\($0.key)" < "\($1.key)" }.map { (Self.codeName($0.key), .unsigned($0.value)) }
                )
            ),
            ("timedReads", .unsigned(c.timedReads)),
            (
                "readNanoseconds",
                .int(c.readTime.components.seconds * 1_000_000_000 + c.readTime.components.attoseconds / 1_000_000_000)
            ),
            (
                "decodeNanoseconds",
                .int(
                    c.decodeTime.components.seconds * 1_000_000_000 + c.decodeTime.components.attoseconds
                        / 1_000_000_000
                )
            ),
        ]
    }

    /// The code's Swift name (`corruptEntry`), as a script would match it.
    static func codeName(_ code: CacheError.Code) -> String {
        switch code {
        case .corruptEntry: "corruptEntry"
        case .entryMismatch: "entryMismatch"
        case .encodingFailed: "encodingFailed"
        case .decodingFailed: "decodingFailed"
        case .noUser: "noUser"
        case .keyTooLong: "keyTooLong"
        case .invalidTypeName: "invalidTypeName"
        case .permissionDenied: "permissionDenied"
        case .readOnlyFileSystem: "readOnlyFileSystem"
        case .diskFull: "diskFull"
        case .fileSystem: "fileSystem"
        }
    }
}
