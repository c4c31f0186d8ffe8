import Archivist
import ArchivistTestSupport
import Foundation

/// `plist-set <folder> <plist name> <key prefix> <count> <progress file> [report]`: sets `count`
/// distinct keys `<prefix><i>` (value `i`) in one file of a `PlistStore` on `folder`, and
/// after each `set` returns appends the key and a newline to the progress file — so a test
/// that kills this process knows which keys were committed. With `report`, prints the longest
/// time this process held the plist's lock (the figure in docs/Reliability.md).
func plistSet(_ arguments: [String]) throws {
    let (folder, name, prefix, count, progress) = try plistArguments(arguments)
    let store = PlistStore(directory: URL(fileURLWithPath: folder), format: .binary)
    for index in 0..<count {
        try store.set(index, forKey: prefix + String(index), in: name)
        try progress.append(prefix + String(index))
    }
    reportLongestHold(arguments)
}

/// `preferences-set <folder> <plist name> <key prefix> <count> <progress file>`: as
/// `plist-set`, through a `Preferences` on that file, and each key must read back at once.
func preferencesSet(_ arguments: [String]) throws {
    let (folder, name, prefix, count, progress) = try plistArguments(arguments)
    let preferences = try Preferences(store: PlistStore(directory: URL(fileURLWithPath: folder)), name: name)
    for index in 0..<count {
        let key = PreferenceKey<Int>(prefix + String(index), default: -1)
        try preferences.set(index, for: key)
        try progress.append(key.name)
        guard preferences[key] == index else { fail("\(key.name) reads \(preferences[key]) right after its set") }
    }
    reportLongestHold(arguments)
}

private func reportLongestHold(_ arguments: [String]) {
    if arguments.count > 5 && arguments[5] == "report" { print("longest plist lock hold: \(PlistFileLock.longestHold)") }
}

private func plistArguments(_ arguments: [String]) throws -> (String, String, String, Int, ProgressLog) {
    (argument(arguments, 0, "folder") { $0 }, argument(arguments, 1, "plist name") { $0 },
     argument(arguments, 2, "key prefix") { $0 }, argument(arguments, 3, "count") { Int($0) },
     try ProgressLog(appendingTo: argument(arguments, 4, "progress file") { $0 }))
}
