import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The processes of the `scale` suite (ScaleBenchmarks.swift): this executable, started with
// `--scale-child` (handled in main.swift before options). Only a new process opens a root for
// real: within a process the library shares one store per root.

/// The entries the `scale` suite stores: `Data` of one size, the entry number as parameter, the
/// memory tier off.
enum ScaleBench {
    /// The cache of `root`, memory tier off.
    static func cache(_ root: String) throws -> CacheManager<BenchCache> {
        try CacheManager<BenchCache>(
            root: CacheRoot(directory: URL(fileURLWithPath: root, isDirectory: true)),
            configuration: .init(memoryCountLimit: 0)
        )
    }

    /// The value of `size` bytes stored under every key (its first bytes vary with `seed`).
    static func value(size: Int, seed: Int = 0) -> Data {
        var data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) })
        withUnsafeBytes(of: UInt64(truncatingIfNeeded: seed)) { seedBytes in
            for (i, byte) in seedBytes.prefix(size).enumerated() { data[i] = byte }
        }
        return data
    }

    /// The parameter of entry `i`.
    static func key(_ i: Int) -> String { String(i) }

    /// How many new entries the open child stores before the flush it times.
    static let flushChanges = 1_000
    /// How many rounds of ``flushChanges`` stores and then as many removals, each followed by a
    /// timed flush, the open child runs.
    static let flushRounds = 3

    /// The bytes of the size index's files under `root` (one `.archivist` folder per store of
    /// the cache, at most two levels down): the journal's length, and the `index` file's inode
    /// and length — a new inode is a snapshot layer written whole.
    static func indexFiles(under root: String) -> (journal: Int, index: [UInt64: Int]) {
        var journal = 0
        var index: [UInt64: Int] = [:]
        func visit(_ path: String, depth: Int) {
            var status = stat()
            if stat(path + "/.archivist/journal", &status) == 0 { journal += Int(status.st_size) }
            if stat(path + "/.archivist/index", &status) == 0 { index[UInt64(status.st_ino)] = Int(status.st_size) }
            guard depth > 0, let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
            for name in names where !name.hasPrefix(".") { visit(path + "/" + name, depth: depth - 1) }
        }
        visit(root, depth: 1)
        return (journal, index)
    }

    /// The process's resident memory in bytes: `/proc/self/statm` on Linux, the task's basic
    /// info on Darwin; `nil` where neither answers.
    static func residentBytes() -> Int? {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * sysconf(Int32(_SC_PAGESIZE))
        #elseif canImport(Darwin)
        var info = mach_task_basic_info()
        var count = mach_msg_type_number_t(MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
        let result = withUnsafeMutablePointer(to: &info) {
            $0.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
                task_info(mach_task_self_, task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count)
            }
        }
        return result == KERN_SUCCESS ? Int(info.resident_size) : nil
        #else
        return nil
        #endif
    }

    /// What an `open` child measured, one line of numbers in a file: nanoseconds of the open,
    /// resident bytes before and after it, nanoseconds of the first read and of the first
    /// flush, the index bytes written per change, then nanoseconds of every flush it timed.
    struct OpenSample {
        var openNS: Int64
        var residentBefore: Int
        var residentAfter: Int
        var firstReadNS: Int64
        var flushNS: Int64
        /// The journal and snapshot bytes the changes and their flushes wrote, per change.
        var bytesPerChange: Int
        /// Every flush timed: after ``ScaleBench/flushChanges`` stores, and after as many
        /// removals, ``ScaleBench/flushRounds`` times.
        var flushes: [Int64]

        var line: String {
            ([openNS, Int64(residentBefore), Int64(residentAfter), firstReadNS, flushNS, Int64(bytesPerChange)]
                + flushes).map(String.init).joined(separator: " ")
        }

        init(
            openNS: Int64,
            residentBefore: Int,
            residentAfter: Int,
            firstReadNS: Int64,
            flushNS: Int64,
            bytesPerChange: Int,
            flushes: [Int64]
        ) {
            self.openNS = openNS
            self.residentBefore = residentBefore
            self.residentAfter = residentAfter
            self.firstReadNS = firstReadNS
            self.flushNS = flushNS
            self.bytesPerChange = bytesPerChange
            self.flushes = flushes
        }

        init?(line: String) {
            let numbers = line.split(separator: " ").compactMap {
                Int64($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            guard numbers.count >= 6 else { return nil }
            self.init(
                openNS: numbers[0],
                residentBefore: Int(numbers[1]),
                residentAfter: Int(numbers[2]),
                firstReadNS: numbers[3],
                flushNS: numbers[4],
                bytesPerChange: Int(numbers[5]),
                flushes: Array(numbers[6...])
            )
        }
    }
}

/// The `scale` suite's child processes:
///
/// - `--scale-child fill <root> <count> <size>`: stores `count` values of `size` bytes under
///   keys 0 ..< `count`, printing progress, then flushes and exits.
/// - `--scale-child open <root> <count> <size> <out>`: times the open of `root`, reads the
///   resident memory before and after it, times the first read of an existing entry, stores
///   ``ScaleBench/flushChanges`` new entries and times the `flush()` after them; writes an
///   ``ScaleBench/OpenSample`` line to `<out>`, then removes those entries and flushes again,
///   so the root holds `count` entries with a saved index for the next child.
/// - `--scale-child clear <root> <count> <size> <out>`: opens `root`, times `clear()` and
///   writes its nanoseconds to `<out>`, then exits without waiting for the deletion the clear
///   leaves to the background.
/// - `--scale-child write <root> <count> <size> <progress>`: replaces entries 0, 1, 2, …
///   (modulo `count`) in an endless loop, writing how many it stored so far as a `UInt64` at
///   the start of `<progress>` every 64 stores, until it is killed.
func runScaleBenchmarkChild(_ arguments: [String]) -> Never {
    do {
        guard arguments.count >= 4, let count = Int(arguments[2]), let size = Int(arguments[3]) else {
            throw CocoaError(.featureUnsupported)
        }
        let root = arguments[1]
        switch arguments[0] {
        case "fill":
            let cache = try ScaleBench.cache(root)
            let value = ScaleBench.value(size: size)
            let step = max(count / 10, 1)
            let clock = ContinuousClock()
            let start = clock.now
            for i in 0..<count {
                try cache.store(value, for: .blobs, parameter: ScaleBench.key(i))
                if (i + 1) % step == 0 && i + 1 < count {
                    let seconds = Double((clock.now - start).nanoseconds) / 1e9
                    print(
                        String(
                            format: "    filled %d of %d (%.0f s, %.0f stores/s)",
                            i + 1,
                            count,
                            seconds,
                            Double(i + 1) / seconds
                        )
                    )
                    fflush(nil)
                }
            }
            try cache.flush()
        case "open":
            guard arguments.count >= 5 else { throw CocoaError(.featureUnsupported) }
            let clock = ContinuousClock()
            let before = ScaleBench.residentBytes() ?? 0
            let openStart = clock.now
            let cache = try ScaleBench.cache(root)
            let openNS = (clock.now - openStart).nanoseconds
            let after = ScaleBench.residentBytes() ?? 0
            let readStart = clock.now
            let read = try cache.value(Data.self, for: .blobs, parameter: ScaleBench.key(count / 2))
            let readNS = (clock.now - readStart).nanoseconds
            guard read?.count == size else { throw CocoaError(.fileReadCorruptFile) }
            let value = ScaleBench.value(size: size, seed: 1)
            // Rounds of new entries, then their removals, each followed by a timed flush; the
            // journal's growth and each new snapshot file's bytes are what the changes wrote.
            var flushes: [Int64] = []
            var written = 0
            for _ in 0..<ScaleBench.flushRounds {
                for removing in [false, true] {
                    let before = ScaleBench.indexFiles(under: root)
                    for i in 0..<ScaleBench.flushChanges {
                        if removing {
                            try cache.removeValue(for: .blobs, parameter: "flush-\(i)")
                        } else {
                            try cache.store(value, for: .blobs, parameter: "flush-\(i)")
                        }
                    }
                    let changed = ScaleBench.indexFiles(under: root)
                    let flushStart = clock.now
                    try cache.flush()
                    flushes.append((clock.now - flushStart).nanoseconds)
                    let after = ScaleBench.indexFiles(under: root)
                    written += max(0, changed.journal - before.journal)
                    for (inode, bytes) in after.index where changed.index[inode] == nil { written += bytes }
                }
            }
            let sample = ScaleBench.OpenSample(
                openNS: openNS,
                residentBefore: before,
                residentAfter: after,
                firstReadNS: readNS,
                flushNS: flushes[0],
                bytesPerChange: written / (2 * ScaleBench.flushRounds * ScaleBench.flushChanges),
                flushes: flushes
            )
            try sample.line.write(toFile: arguments[4], atomically: false, encoding: .utf8)
        case "clear":
            guard arguments.count >= 5 else { throw CocoaError(.featureUnsupported) }
            let cache = try ScaleBench.cache(root)
            // The open's and earlier writes' dirty pages first, so that the clear does not
            // wait behind their write-back.
            sync()
            let clock = ContinuousClock()
            let start = clock.now
            try cache.clear()
            let clearNS = (clock.now - start).nanoseconds
            try String(clearNS).write(toFile: arguments[4], atomically: false, encoding: .utf8)
        // Exits without waiting for the deletion: the suite removes the root itself.
        case "write":
            guard arguments.count >= 5 else { throw CocoaError(.featureUnsupported) }
            let progress = open(arguments[4], O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            guard progress >= 0 else { throw CocoaError(.fileWriteNoPermission) }
            let cache = try ScaleBench.cache(root)
            let value = ScaleBench.value(size: size, seed: 2)
            var stored: UInt64 = 0
            while true {
                try cache.store(value, for: .blobs, parameter: ScaleBench.key(Int(stored % UInt64(count))))
                stored += 1
                if stored % 64 == 0 { _ = withUnsafeBytes(of: stored) { pwrite(progress, $0.baseAddress, 8, 0) } }
            }
        default:
            throw CocoaError(.featureUnsupported)
        }
        exit(0)
    } catch {
        print("scale benchmark child \(arguments): \(error)")
        exit(1)
    }
}
