import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `scale` suite: what a user with a very large cache sees, through the public
/// `CacheManager` API — one cache type, one parameter per entry, `Data` values, the memory
/// tier off, durability none — at 10,000, 100,000 and 1,000,000 entries of 200 B and 10,000
/// and 100,000 entries of 10 KB. (1,000,000 × 10 KB is left out: it needs more than 12 GB of
/// disk.) Quick mode stops at 100,000 × 200 B and 10,000 × 10 KB.
///
/// Each size is filled once by a child process (a loop of stores, timed only to report the
/// fill rate), which flushes and exits; the same root then serves every measurement of that
/// size and is deleted after it:
/// 1. **open**: `CacheManager(root:configuration:)` in a fresh child process (the library
///    shares one store per root within a process, so only a new process opens for real),
///    median over several children; in the same child the **resident memory** the open adds
///    (`/proc/self/statm`; the task's basic info on Darwin), the **first read** of an existing
///    entry, and **`flush()` after 1,000 new entries**, then after their removal, three rounds
///    of both (so each child leaves the root as it opened it): the first flush's median, every
///    flush's median and worst case, and the **bytes written per change** (the journal's growth
///    and each new snapshot file);
/// 2. **open after a kill**: a child replacing entries in a loop is killed (`SIGKILL`) once it
///    has stored 1,000, and a fresh child times the next open (the recovery);
/// 3. in this process: steady-state **set** (replacing an existing entry) and **get**, each
///    operation timed, their median; **`totalSize`** and **`size(of:)`**, each call timed;
///    **disk use**: the blocks allocated under the root (`st_blocks × 512` summed by a walk,
///    folders and the index included) against the values' logical bytes, and the index's own
///    logical and allocated figures (`totalUsage`);
/// 4. **clear** last (it empties the root), in a fresh process, until it returns; that
///    process exits without waiting for the background deletion, and the suite removes the
///    root itself.
///
/// Each measurement is one table with a row per size, compared with the 10,000-entry row of
/// the same value size: how the cost grows with the entry count. The open, resident-memory and
/// flush tables name the targets for 1,000,000 entries (open ≤ 10 ms and ≤ 2× the 10,000-entry
/// open, ≤ 16 MB resident memory added by the open, flush after 1,000 changes ≤ 10 ms); they
/// are reported, not enforced.
func runScaleBenchmarks(_ harness: Harness) throws {
    let quick = harness.options.quick
    let sizes: [(count: Int, valueSize: Int)] =
        quick
        ? [(10_000, 200), (100_000, 200), (10_000, 10_240)]
        : [(10_000, 200), (100_000, 200), (1_000_000, 200), (10_000, 10_240), (100_000, 10_240)]
    var measured: [ScaleMeasurement] = []
    for (count, valueSize) in sizes {
        measured.append(try measureScale(harness, count: count, valueSize: valueSize))
    }
    recordScaleTables(harness, measured)
}

/// What the suite measured at one size.
private struct ScaleMeasurement {
    var label: String
    var count: Int
    var valueSize: Int
    var fillNS: Int64 = 0
    var opens: [ScaleBench.OpenSample] = []
    var opensAfterKill: [Int64] = []
    var sets: [Int64] = []
    var gets: [Int64] = []
    var totalSizes: [Int64] = []
    var typeSizes: [Int64] = []
    var clearNS: Int64 = 0
    var allocatedWalk = 0
    var usage = CacheUsage()

    init(count: Int, valueSize: Int) {
        self.count = count
        self.valueSize = valueSize
        label =
            "\(groupedThousands(count)) × "
            + (valueSize % 1_024 == 0 ? "\(valueSize / 1_024) KB" : "\(valueSize) B")
    }

    /// The values' own bytes: entries × value size.
    var valueBytes: Int { count * valueSize }
}

/// `n` with a comma every three digits: 1,000,000.
private func groupedThousands(_ n: Int) -> String {
    var digits = String(n)
    var groups: [Substring] = []
    while digits.count > 3 {
        groups.insert(Substring(digits.suffix(3)), at: 0)
        digits.removeLast(3)
    }
    return ([Substring(digits)] + groups).joined(separator: ",")
}

private enum ScaleBenchError: Error {
    case child(String)
}

private func measureScale(_ harness: Harness, count: Int, valueSize: Int) throws -> ScaleMeasurement {
    let quick = harness.options.quick
    var result = ScaleMeasurement(count: count, valueSize: valueSize)
    let root = harness.scratch.appendingPathComponent("scale-\(count)-\(valueSize)", isDirectory: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let clock = ContinuousClock()
    print("  \(result.label): filling")
    fflush(nil)

    // Fill in a child, which flushes and exits: the next open is that of a root closed cleanly.
    let fillStart = clock.now
    try runChild(["fill", root.path, String(count), String(valueSize)])
    result.fillNS = (clock.now - fillStart).nanoseconds
    print(
        String(
            format: "  %@: filled in %.1f s (%.0f stores/s)",
            result.label,
            Double(result.fillNS) / 1e9,
            Double(count) / (Double(result.fillNS) / 1e9)
        )
    )
    // The fill's dirty pages are written back now, not during the opens.
    sync()

    // Opens in fresh processes.
    let openRuns = quick ? 3 : (count >= 1_000_000 ? 3 : 5)
    let sampleFile = harness.scratch.appendingPathComponent("scale-sample").path
    for _ in 0..<openRuns {
        result.opens.append(
            try openInChild(root: root.path, count: count, valueSize: valueSize, sampleFile: sampleFile)
        )
    }
    let opens = result.opens.map(\.openNS).sorted()
    print("  \(result.label): open \(Harness.format(opens[opens.count / 2])) (median of \(openRuns) processes)")

    // Opens after a writer was killed mid-run.
    let killRuns = quick ? 1 : (count >= 1_000_000 ? 2 : 3)
    let progressFile = harness.scratch.appendingPathComponent("scale-progress").path
    for _ in 0..<killRuns {
        try killWriter(root: root.path, count: count, valueSize: valueSize, progressFile: progressFile)
        result.opensAfterKill.append(
            try openInChild(
                root: root.path,
                count: count,
                valueSize: valueSize,
                sampleFile: sampleFile
            ).openNS
        )
    }

    // Steady state, in this process.
    let cache = try ScaleBench.cache(root.path)
    var generator = SplitMix64(seed: UInt64(count))
    let operations = quick ? 1_000 : 3_000
    let value = ScaleBench.value(size: valueSize, seed: 3)
    for _ in 0..<operations {
        let key = ScaleBench.key(Int(generator.next() % UInt64(count)))
        let start = clock.now
        try cache.store(value, for: .blobs, parameter: key)
        result.sets.append((clock.now - start).nanoseconds)
    }
    for _ in 0..<operations {
        let key = ScaleBench.key(Int(generator.next() % UInt64(count)))
        let start = clock.now
        let read = try cache.value(Data.self, for: .blobs, parameter: key)
        result.gets.append((clock.now - start).nanoseconds)
        guard read?.count == valueSize else { throw ScaleBenchError.child("entry \(key) missing after the fill") }
    }
    var sizeSum = 0
    for _ in 0..<1_001 {
        var start = clock.now
        sizeSum &+= cache.totalSize
        result.totalSizes.append((clock.now - start).nanoseconds)
        start = clock.now
        sizeSum &+= cache.size(of: BenchCache.blobs)
        result.typeSizes.append((clock.now - start).nanoseconds)
    }
    result.usage = cache.totalUsage
    guard result.usage.entryCount == count, sizeSum > 0 else {
        throw ScaleBenchError.child("\(result.usage.entryCount) entries after a fill of \(count)")
    }
    result.allocatedWalk = allocatedBytes(under: root.path)

    // Clear last, in a fresh process: it empties the root. That process exits once the clear
    // returns, and the files the clear moved to the trash are removed here with the root: the
    // suite does not wait for the library's background deletion.
    let clearFile = harness.scratch.appendingPathComponent("scale-clear").path
    unlink(clearFile)
    try runChild(["clear", root.path, String(count), String(valueSize), clearFile])
    guard let clearText = try? String(contentsOfFile: clearFile, encoding: .utf8), let clearNS = Int64(clearText) else {
        throw ScaleBenchError.child("the clear child wrote no time")
    }
    result.clearNS = clearNS
    let removalStart = clock.now
    removeTree(root.path)
    print(
        "  \(result.label): clear \(Harness.format(result.clearNS)); root removed in "
            + Harness.format((clock.now - removalStart).nanoseconds)
    )
    return result
}

/// Runs a `--scale-child` process to its end; throws when it fails.
private func runChild(_ arguments: [String]) throws {
    fflush(nil)
    let pid = try spawnSelf(arguments, mode: "--scale-child")
    do { try waitFor([pid]) } catch { throw ScaleBenchError.child("\(arguments.first ?? "") child failed") }
}

/// One `open` child's measurements.
private func openInChild(root: String, count: Int, valueSize: Int, sampleFile: String) throws -> ScaleBench.OpenSample {
    unlink(sampleFile)
    try runChild(["open", root, String(count), String(valueSize), sampleFile])
    guard let line = try? String(contentsOfFile: sampleFile, encoding: .utf8),
        let sample = ScaleBench.OpenSample(line: line)
    else {
        throw ScaleBenchError.child("the open child wrote no sample")
    }
    return sample
}

/// Starts a `write` child, kills it (`SIGKILL`) once it has stored 1,000 values, and waits for it.
private func killWriter(root: String, count: Int, valueSize: Int, progressFile: String) throws {
    unlink(progressFile)
    fflush(nil)
    let pid = try spawnSelf(["write", root, String(count), String(valueSize), progressFile], mode: "--scale-child")
    let deadline = ContinuousClock.now + .seconds(600)
    var stored: UInt64 = 0
    while stored < 1_000 {
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            throw ScaleBenchError.child("the writer exited before it was killed")
        }
        guard ContinuousClock.now < deadline else {
            kill(pid, SIGKILL)
            _ = try? waitFor([pid])
            throw ScaleBenchError.child("the writer stored \(stored) values in 600 s")
        }
        usleep(1_000)
        let fd = open(progressFile, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            _ = withUnsafeMutableBytes(of: &stored) { pread(fd, $0.baseAddress, 8, 0) }
            close(fd)
        }
    }
    kill(pid, SIGKILL)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
}

/// The bytes the file system allocated to everything under `path` (`st_blocks × 512`, the
/// folder itself included), by a walk that does not follow symbolic links.
private func allocatedBytes(under path: String) -> Int {
    var status = stat()
    guard lstat(path, &status) == 0 else { return 0 }
    var total = Int(status.st_blocks) * 512
    guard (status.st_mode & S_IFMT) == S_IFDIR, let directory = opendir(path) else { return total }
    defer { closedir(directory) }
    let descriptor = dirfd(directory)
    while let entry = readdir(directory) {
        let name = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
            UnsafeRawPointer(tuple).withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
        }
        guard name != ".", name != ".." else { continue }
        var child = stat()
        guard fstatat(descriptor, name, &child, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
        if (child.st_mode & S_IFMT) == S_IFDIR {
            total += allocatedBytes(under: path + "/" + name)
        } else {
            total += Int(child.st_blocks) * 512
        }
    }
    return total
}

/// Removes `path` and everything under it, as `rm -rf` does: `unlinkat` on each name the
/// folder lists, by its type, without a `stat` per entry (which `FileManager.removeItem` adds).
private func removeTree(_ path: String) {
    guard let directory = opendir(path) else {
        unlink(path)
        return
    }
    let descriptor = dirfd(directory)
    var folders: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
            UnsafeRawPointer(tuple).withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
        }
        guard name != ".", name != ".." else { continue }
        if Int32(entry.pointee.d_type) == Int32(DT_DIR) || (unlinkat(descriptor, name, 0) != 0 && errno == EISDIR) {
            folders.append(name)
        }
    }
    closedir(directory)
    for folder in folders { removeTree(path + "/" + folder) }
    rmdir(path)
}

/// Records one table per measurement, a row per size, each compared with the 10,000-entry row
/// of its value size; prints the tables.
private func recordScaleTables(_ harness: Harness, _ measured: [ScaleMeasurement]) {
    func baseline(_ m: ScaleMeasurement) -> String? {
        measured.first { $0.valueSize == m.valueSize }?.label
    }
    let million = "1,000,000 × 200 B"
    func timeRow(_ suite: String, _ m: ScaleMeasurement, _ samples: [Int64], note: String? = nil) {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return }
        harness.record(
            BenchmarkResult(
                suite: suite,
                name: m.label,
                medianNS: sorted[sorted.count / 2],
                minNS: sorted[0],
                bytes: nil,
                samples: sorted.count,
                note: note
            ),
            printed: false
        )
    }
    func bytesRow(_ suite: String, _ name: String, _ bytes: Int, samples: Int = 1, note: String? = nil) {
        harness.record(
            BenchmarkResult(
                suite: suite,
                name: name,
                medianNS: 0,
                minNS: 0,
                bytes: bytes,
                samples: samples,
                note: note
            ),
            printed: false
        )
    }
    func table(_ suite: String, _ title: String) {
        harness.printTable(suite, title: title) { name in
            measured.first { $0.label == name }.flatMap(baseline)
        }
    }
    let openTarget = "target ≤ 10 ms and ≤ 2× the 10,000 × 200 B open"
    for m in measured {
        timeRow("scale.open", m, m.opens.map(\.openNS), note: m.label == million ? openTarget : nil)
    }
    table(
        "scale.open",
        "open (CacheManager(root:configuration:)) in a fresh process after a clean close, median of the processes; "
            + "target at \(million): ≤ 10 ms and ≤ 2× the 10,000 × 200 B open"
    )

    for m in measured {
        let added = m.opens.map { $0.residentAfter - $0.residentBefore }.sorted()
        bytesRow(
            "scale.open-memory",
            m.label,
            added[added.count / 2],
            samples: added.count,
            note: m.label == million ? "target ≤ 16 MB" : nil
        )
    }
    let memoryTitle =
        "resident memory added by the open (bytes: after − before, median of the processes); target at \(million): ≤ 16 MB"
    harness.recordTable("scale.open-memory", title: memoryTitle)
    printBytesTable(harness, "scale.open-memory", title: memoryTitle)

    for m in measured { timeRow("scale.first-read", m, m.opens.map(\.firstReadNS)) }
    table("scale.first-read", "the first value read after the open, in the same process")

    for m in measured {
        timeRow("scale.flush", m, m.opens.map(\.flushNS), note: m.label == million ? "target ≤ 10 ms" : nil)
    }
    table(
        "scale.flush",
        "flush() after \(groupedThousands(ScaleBench.flushChanges)) new entries, in the process that opened; "
            + "target at \(million): ≤ 10 ms"
    )

    let roundsTitle =
        "flush() after each of \(ScaleBench.flushRounds) rounds of \(groupedThousands(ScaleBench.flushChanges)) "
        + "new entries and of their removals, every process that opened; target at \(million): ≤ 10 ms in every round"
    for m in measured {
        let all = m.opens.flatMap(\.flushes)
        timeRow(
            "scale.flush-rounds",
            m,
            all,
            note: all.max().map { "worst \(Harness.format($0)) of \(all.count) flushes" }
        )
    }
    table("scale.flush-rounds", roundsTitle)
    print("  worst case of every flush timed:")
    for m in measured {
        if let worst = m.opens.flatMap(\.flushes).max() { print("  \(m.label): worst \(Harness.format(worst))") }
    }

    for m in measured {
        let perChange = m.opens.map(\.bytesPerChange).sorted()
        bytesRow(
            "scale.flush-bytes",
            m.label,
            perChange[perChange.count / 2],
            samples: perChange.count,
            note: "journal and snapshot bytes written per change, median of the processes"
        )
    }
    let bytesTitle =
        "bytes written per change (journal records and snapshot files) over the rounds of flush() above"
    harness.recordTable("scale.flush-bytes", title: bytesTitle)
    printBytesTable(harness, "scale.flush-bytes", title: bytesTitle)

    for m in measured { timeRow("scale.open-after-kill", m, m.opensAfterKill) }
    table("scale.open-after-kill", "open in a fresh process after a writer was killed (SIGKILL) mid-run")

    for m in measured { timeRow("scale.set", m, m.sets) }
    table("scale.set", "one store replacing an existing entry, steady state (median of the operations)")
    for m in measured { timeRow("scale.get", m, m.gets) }
    table("scale.get", "one read of an existing entry from disk, steady state (median of the operations)")
    for m in measured { timeRow("scale.total-size", m, m.totalSizes) }
    table("scale.total-size", "one totalSize call (median of the calls)")
    for m in measured { timeRow("scale.type-size", m, m.typeSizes) }
    table("scale.type-size", "one size(of:) call for the cache type (median of the calls)")
    for m in measured { timeRow("scale.clear", m, [m.clearNS]) }
    table("scale.clear", "clear() until it returns, in a fresh process (the deletion continues in the background)")
    for m in measured { timeRow("scale.fill", m, [m.fillNS / Int64(m.count)]) }
    table(
        "scale.fill",
        "filling the root (information): one store, the fill's time divided by its stores, process start included"
    )

    for m in measured {
        let ratio = String(format: "%.1f× the values' bytes", Double(m.allocatedWalk) / Double(m.valueBytes))
        bytesRow("scale.disk", "\(m.label): allocated under the root", m.allocatedWalk, note: ratio)
        bytesRow("scale.disk", "\(m.label): values' logical bytes", m.valueBytes)
        bytesRow("scale.disk", "\(m.label): entry files, logical (totalUsage)", m.usage.logicalBytes)
        bytesRow(
            "scale.disk",
            "\(m.label): entry files, allocated (totalUsage)",
            m.usage.allocatedBytes,
            note: String(
                format: "%.1f× their logical bytes",
                Double(m.usage.allocatedBytes) / Double(max(m.usage.logicalBytes, 1))
            )
        )
    }
    harness.recordTable(
        "scale.disk",
        title: "disk use (bytes): blocks allocated (st_blocks × 512, a walk of the root) against the values' bytes"
    )
    printBytesTable(
        harness,
        "scale.disk",
        title: "disk use: blocks allocated (st_blocks × 512, a walk of the root) against the values' bytes"
    )
}

/// Prints a table of rows that record bytes, not times, with their notes.
private func printBytesTable(_ harness: Harness, _ suite: String, title: String) {
    print("\n\(title)")
    for row in harness.results where row.suite == suite {
        print("  \(row.name): \(row.bytes.map(Harness.formatBytes) ?? "")" + (row.note.map { " (\($0))" } ?? ""))
    }
}
