import Archivist
import ArchivistTestSupport
import Foundation

/// `default-location <app name>`: prints `CacheRoot.defaultLocation(for:)`'s caches and
/// documents paths, one a line, as this process's environment makes them.
func defaultLocation(_ arguments: [String]) throws {
    let root = CacheRoot.defaultLocation(for: argument(arguments, 0, "app name") { $0 })
    print(root.caches.path)
    print(root.documents.path)
}

/// `store-then-exit <root> <flush|no-flush>`: stores entries of every location, clears one
/// type, optionally calls `flush()`, and exits at once — no deinit runs, as when a tool's
/// `main` returns or the process is killed.
func storeThenExit(_ arguments: [String]) throws {
    let root = CacheRoot(directory: URL(fileURLWithPath: argument(arguments, 0, "root") { $0 }))
    let flushing = argument(arguments, 1, "flush|no-flush") { ["flush": true, "no-flush": false][$0] }
    let cache = try CacheManager<UmaskCache>(root: root, user: "u")
    for type in UmaskCache.allCases {
        for i in 0..<50 { try cache.store(String(repeating: "v", count: 500), for: type, parameter: "\(i)") }
    }
    try cache.clear(.type(.user))
    if flushing { try cache.flush() }
    exit(0)
}
