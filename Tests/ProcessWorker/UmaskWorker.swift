import Archivist
import ArchivistTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `umask-everything <folder>`: with umask 0777 (every permission bit stripped from what the
/// process creates), makes every kind of file the library creates under `folder` — cache
/// entries, the size index and its marker, trash, a record store's log, snapshot and
/// quarantine, plists and preferences — so the test can check each is 0600 or 0700.
func umaskEverything(_ arguments: [String]) throws {
    let folder = URL(fileURLWithPath: argument(arguments, 0, "folder") { $0 })
    umask(0o777)

    let cache = try CacheManager<UmaskCache>(
        root: CacheRoot(directory: folder.appendingPathComponent("cache")),
        user: "u"
    )
    for type in UmaskCache.allCases { try cache.store("value", for: type, parameter: "p") }
    try cache.store("single", for: .shared)
    try cache.store("gone soon", for: .shared, parameter: "q")
    try cache.clear(.type(.user))

    let records = folder.appendingPathComponent("records")
    do {
        let store = try RecordStore<UmaskRecord>(directory: records, configuration: .init(compactionThreshold: 64))
        for id in 0..<20 { try store.insert(UmaskRecord(id: id, text: String(repeating: "r", count: 40))) }
    }
    // A torn tail, so the next open writes a quarantine file.
    let log = try FileHandle(forWritingTo: records.appendingPathComponent("records.log"))
    log.seekToEndOfFile()
    log.write(Data([0xFF, 0xFF, 0x00, 0x00, 1, 2, 3]))
    log.closeFile()
    _ = try RecordStore<UmaskRecord>(directory: records)

    let plists = PlistStore(directory: folder.appendingPathComponent("plists"))
    try plists.set(.string("x"), forKey: "k", in: "settings")
    let preferences = try Preferences(store: plists)
    try preferences.set(3, for: PreferenceKey("count", default: 0))
    try preferences.flush()
}

/// A record for the record store.
struct UmaskRecord: Codable, Archivable, Identifiable, Sendable {
    var id: Int
    var text: String
}
