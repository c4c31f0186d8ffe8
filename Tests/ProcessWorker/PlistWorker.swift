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
/// `plist-set`, through a `Preferences` on that file with durable sets (each on disk when it
/// returns), and each key must read back at once.
func preferencesSet(_ arguments: [String]) throws {
    let (folder, name, prefix, count, progress) = try plistArguments(arguments)
    let preferences = try Preferences(store: PlistStore(directory: URL(fileURLWithPath: folder)), name: name)
    for index in 0..<count {
        let key = PreferenceKey<Int>(prefix + String(index), default: -1)
        try preferences.set(index, for: key, durability: .fileAndFolder)
        try progress.append(key.name)
        guard preferences[key] == index else { fail("\(key.name) reads \(preferences[key]) right after its set") }
    }
    reportLongestHold(arguments)
}

/// `preferences-deferred <folder> <plist name> <key prefix> <count> <flush|exit>`: sets
/// `count` keys `<prefix><i>` (value `i`) through a `Preferences` with the default, deferred
/// sets, each read back at once; then either flushes, or just exits and leaves the unwritten
/// sets to the write at exit. The `Preferences` stays alive until `exit`.
func preferencesDeferred(_ arguments: [String]) throws {
    let folder = argument(arguments, 0, "folder") { $0 }
    let name = argument(arguments, 1, "plist name") { $0 }
    let prefix = argument(arguments, 2, "key prefix") { $0 }
    let count = argument(arguments, 3, "count") { Int($0) }
    let ending = argument(arguments, 4, "flush|exit") { ["flush", "exit"].contains($0) ? $0 : nil }
    let preferences = try Preferences(store: PlistStore(directory: URL(fileURLWithPath: folder)), name: name)
    for index in 0..<count {
        let key = PreferenceKey<Int>(prefix + String(index), default: -1)
        try preferences.set(index, for: key)
        guard preferences[key] == index else { fail("\(key.name) reads \(preferences[key]) right after its set") }
    }
    if ending == "flush" { try preferences.flush() }
    keptUntilExit = preferences
    exit(0)
}

/// Keeps `preferences-deferred`'s `Preferences` alive, so only the write at exit can save its sets.
nonisolated(unsafe) private var keptUntilExit: Preferences?

/// `preferences-expect <folder> <plist name> <key> <value>`: fails unless a fresh `Preferences`
/// on the file reads `value` (an integer) for `key`.
func preferencesExpect(_ arguments: [String]) throws {
    let folder = argument(arguments, 0, "folder") { $0 }
    let name = argument(arguments, 1, "plist name") { $0 }
    let key = PreferenceKey<Int>(argument(arguments, 2, "key") { $0 }, default: -1)
    let expected = argument(arguments, 3, "value") { Int($0) }
    let preferences = try Preferences(store: PlistStore(directory: URL(fileURLWithPath: folder)), name: name)
    guard preferences[key] == expected else { fail("\(key.name) reads \(preferences[key]), not \(expected)") }
}

private func reportLongestHold(_ arguments: [String]) {
    if arguments.count > 5 && arguments[5] == "report" {
        print("longest plist lock hold: \(PlistFileLock.longestHold)")
    }
}

private func plistArguments(_ arguments: [String]) throws -> (String, String, String, Int, ProgressLog) {
    (
        argument(arguments, 0, "folder") { $0 }, argument(arguments, 1, "plist name") { $0 },
        argument(arguments, 2, "key prefix") { $0 }, argument(arguments, 3, "count") { Int($0) },
        try ProgressLog(appendingTo: argument(arguments, 4, "progress file") { $0 })
    )
}
