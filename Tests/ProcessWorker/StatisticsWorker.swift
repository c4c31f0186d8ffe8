import Archivist
import Foundation

// The mode of the statistics tests (Tests/ArchivistTests/MultiProcess/CacheStatisticsMultiProcessTests.swift):
// a fixed sequence of operations whose counts the test knows, run by several processes on
// one root, which must add up in the root's shared statistics.

/// The cache types of the statistics script.
enum StatisticsCache: String, CacheType {
    case notes, drafts
    var location: CacheLocation { self == .notes ? .sharedCaches : .userCaches }
}

/// `statistics-script <root> <rounds>`: per round, for both types: 3 stores, 2 reads of each
/// (a disk-free memory hit each, the values being in the memory tier), 1 miss, 1 removal,
/// 1 expired read. The manager goes away at the end (its memory hits reach the shared file
/// then, and again at exit).
func statisticsScript(_ arguments: [String]) throws {
    let root = argument(arguments, 0, "root") { $0 }
    let rounds = argument(arguments, 1, "rounds") { Int($0) }
    let cache = try CacheManager<StatisticsCache>(
        root: CacheRoot(directory: URL(fileURLWithPath: root)),
        user: "worker"
    )
    let me = ProcessInfo.processInfo.processIdentifier
    for round in 0..<rounds {
        for type in [StatisticsCache.notes, .drafts] {
            for item in 0..<3 { try cache.store("value \(item)", for: type, parameter: "\(me)-\(round)-\(item)") }
            for item in 0..<3 {
                for _ in 0..<2 { _ = try cache.value(String.self, for: type, parameter: "\(me)-\(round)-\(item)") }
            }
            _ = try cache.value(String.self, for: type, parameter: "\(me)-\(round)-missing")
            try cache.removeValue(for: type, parameter: "\(me)-\(round)-0")
            try cache.store(
                "old",
                for: type,
                parameter: "\(me)-\(round)-old",
                expiry: .at(Date(timeIntervalSinceNow: -60))
            )
            _ = try cache.value(String.self, for: type, parameter: "\(me)-\(round)-old")
        }
    }
}
