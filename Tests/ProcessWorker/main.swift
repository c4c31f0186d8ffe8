// The worker processes of the multi-process tests (Tests/ArchivistTests/MultiProcess/): each
// test starts several of these on one store and checks, from a fresh process or the test
// itself, that nothing committed was lost.
//
// Usage: ArchivistProcessWorker <mode> <arguments...>
//
// Each mode lives in a file of its own (`<Area>Worker.swift`) as a function taking the
// arguments after the mode; register it in `modes` below. A worker exits 0 when all went
// well and 1 with a message on standard error otherwise, so the test can tell.
import ArchivistTestSupport
import Foundation

var modes: [String: ([String]) throws -> Void] = [
    "lock-counter": lockCounter,
    "records-upsert": recordsUpsert,
    "records-mixed": recordsMixed,
    "records-pets": recordsPets,
    "plist-set": plistSet,
    "preferences-set": preferencesSet,
    "preferences-deferred": preferencesDeferred,
    "preferences-expect": preferencesExpect,
    "cache-write": cacheWrite,
    "cache-read": cacheRead,
    "cache-check": cacheCheck,
    "cache-reopen": cacheReopen,
    "cache-store": cacheStore,
    "cache-expect": cacheExpect,
    "umask-everything": umaskEverything,
    "default-location": defaultLocation,
    "store-then-exit": storeThenExit,
    "stop-in-write": stopInWrite,
    "idle": idle,
    "orphan": orphan,
    "empty-folder": emptyFolder,
    "spare-claims": spareClaims,
    "spare-stop": spareStop,
    "statistics-script": statisticsScript,
]
#if os(Linux)
modes["fork-child"] = forkChild
#endif

exitWhenParentExits()
let arguments = Array(CommandLine.arguments.dropFirst())
guard let mode = arguments.first, let run = modes[mode] else {
    fail("usage: ArchivistProcessWorker <\(modes.keys.sorted().joined(separator: "|"))> <arguments...>")
}
do {
    try run(Array(arguments.dropFirst()))
} catch {
    fail("\(mode): \(error)")
}
