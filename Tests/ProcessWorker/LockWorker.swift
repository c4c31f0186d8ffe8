import Archivist
import ArchivistTestSupport
import Foundation

/// `lock-counter <lock file> <counter file> <iterations>`: increments a decimal counter kept
/// in a plain file, `iterations` times, each read-modify-write under the `FileLock` — so the
/// final count is exact only if the lock excludes every other process.
func lockCounter(_ arguments: [String]) throws {
    let lockPath = argument(arguments, 0, "lock file") { $0 }
    let counterPath = argument(arguments, 1, "counter file") { $0 }
    let iterations = argument(arguments, 2, "iterations") { Int($0) }
    let lock = FileLock(path: lockPath)
    for _ in 0..<iterations {
        try lock.withExclusive {
            let text = (try? String(contentsOfFile: counterPath, encoding: .utf8)) ?? "0"
            guard let value = Int(text) else { fail("counter file holds \(text.debugDescription)") }
            // Not atomic on purpose: only the lock keeps two writers apart.
            try String(value + 1).write(toFile: counterPath, atomically: false, encoding: .utf8)
        }
    }
}
