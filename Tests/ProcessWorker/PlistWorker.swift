import Archivist
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `plist-set <folder> <plist name> <key prefix> <count> <progress file> [report]`: sets `count`
/// distinct keys `<prefix><i>` (value `i`) in one file of a `PlistStore` on `folder`, and
/// after each `set` returns appends the key and a newline to the progress file — so a test
/// that kills this process knows which keys were committed. With `report`, prints the longest
/// time this process held the plist's lock (the figure in docs/Reliability.md).
func plistSet(_ arguments: [String]) throws {
    let (folder, name, prefix, count, progress) = plistArguments(arguments)
    let store = PlistStore(directory: URL(fileURLWithPath: folder), format: .binary)
    for index in 0..<count {
        try store.set(index, forKey: prefix + String(index), in: name)
        progress.committed(prefix + String(index))
    }
    reportLongestHold(arguments)
}

/// `preferences-set <folder> <plist name> <key prefix> <count> <progress file>`: as
/// `plist-set`, through a `Preferences` on that file, and each key must read back at once.
func preferencesSet(_ arguments: [String]) throws {
    let (folder, name, prefix, count, progress) = plistArguments(arguments)
    let preferences = try Preferences(store: PlistStore(directory: URL(fileURLWithPath: folder)), name: name)
    for index in 0..<count {
        let key = PreferenceKey<Int>(prefix + String(index), default: -1)
        try preferences.set(index, for: key)
        progress.committed(key.name)
        guard preferences[key] == index else { fail("\(key.name) reads \(preferences[key]) right after its set") }
    }
    reportLongestHold(arguments)
}

private func reportLongestHold(_ arguments: [String]) {
    if arguments.count > 5 && arguments[5] == "report" { print("longest plist lock hold: \(PlistFileLock.longestHold)") }
}

private func plistArguments(_ arguments: [String]) -> (String, String, String, Int, CommittedLines) {
    (argument(arguments, 0, "folder") { $0 }, argument(arguments, 1, "plist name") { $0 },
     argument(arguments, 2, "key prefix") { $0 }, argument(arguments, 3, "count") { Int($0) },
     CommittedLines(path: argument(arguments, 4, "progress file") { $0 }))
}

/// A file that lists, one a line, what this process has committed; appended with `O_APPEND`
/// single writes, so lines of several processes never interleave.
struct CommittedLines {
    let fd: Int32

    init(path: String) {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        if fd < 0 { fail("cannot open the progress file \(path): errno \(errno)") }
    }

    /// Records `line` as committed.
    func committed(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            fail("cannot append to the progress file: errno \(errno)")
        }
    }
}
