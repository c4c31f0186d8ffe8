import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The shapes of an app's cache, measured the way a new user would: a fresh root per repetition, one
/// cache type with the key as parameter, the memory tier off, 10,000 single-model entries
/// (~170 B of JSON each) and 1,000 × 100 KB `Data`; after each fill, warm gets, one
/// `totalSize` and `clear()`. The reference is raw POSIX as an app would write it by hand (MD5
/// of the key as the file name in one flat folder, JSONEncoder for models, temporary file +
/// rename, no fsync), in a folder of its own beside Archivist's root.
///
/// The two stores fill and read *interleaved operation by operation* (`InterleavedOperations`:
/// raw's set of key i and Archivist's, the one going first alternating), so both work under
/// the same kernel state at every moment. On ext4 without a journal (the project machine's root
/// fs) creating a file scans every inode of its group freed in the last 60 s, and on a
/// journaled ext4 a commit or write-back throttling stalls writes for milliseconds: a fill of
/// one store after the other would let such a stall decide one store's median. `totalSize` and
/// `clear()` are single calls, taken in turn, the store going first alternating with the
/// repetition (an even number of them). The trash of a clear is drained before the next fill
/// (the `clear + deletion` row: the call plus waiting for the deletion, raw's being
/// synchronous), so no deletion runs beside a fill. `ARCHIVIST_BENCHMARK_SETTLE=<seconds>`
/// waits that long before each fill, after the deletions, to let ext4's recently-deleted window
/// pass (61 s does it; slow).
///
/// Raw's `clear()` unlinks its files and keeps its folder, so its 100 KB fill goes into the
/// folder the 10,000 models grew (ext4 never shrinks a folder: sparse blocks, short scans),
/// while Archivist's goes into a folder its trash kept or a new one.
/// `ARCHIVIST_BENCHMARK_RAW_CLEAR=recreate` is the control: raw's clear also removes and
/// re-creates its folder, as a hand-written cache that clears with `removeItem` +
/// `createDirectory` does.
///
/// Sets and gets are also timed in the calling thread's CPU time (user and kernel): on a
/// machine shared with other work, wall time mostly measures preemption, while the thread's
/// CPU time is what the store itself costs (work left to a background queue not included).
///
/// Quick mode: 2 repetitions of 1,000 models and 100 blobs (every entry is a file created and
/// later deleted, which dominates the suite's time when the disk is busy).
func runCacheShapeBenchmarks(_ harness: Harness) throws {
    let quick = harness.options.quick
    let repetitions = quick ? 2 : 8  // even: each store goes first equally often
    let settle = ProcessInfo.processInfo.environment["ARCHIVIST_BENCHMARK_SETTLE"].flatMap(Double.init) ?? 0
    let models = (0..<(quick ? 1_000 : 10_000)).map(ShapeModel.init)
    let blob = Data((0..<100_000).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 31 &+ i >> 9) })
    let keys = (0..<max(models.count, 1_000)).map { "item-\($0)" }
    let blobCount = quick ? 100 : 1_000
    let jsonSize = try JSONEncoder().encode(models[models.count / 2]).count

    let clock = ContinuousClock()
    var times: [String: [Int64]] = [:]  // "suite|case" → samples
    func time(_ suite: String, _ name: String, _ body: () throws -> Void) rethrows {
        let start = clock.now
        try body()
        times["\(suite)|\(name)", default: []].append((clock.now - start).nanoseconds)
    }
    /// Runs `operation` of every store interleaved (see `InterleavedOperations`) and records each
    /// store's wall and CPU time under `name`.
    func interleaved(
        _ suite: String,
        _ name: String,
        _ stores: [any ShapeStore],
        count: Int,
        firstTurn: Int,
        _ operation: (any ShapeStore, Int) throws -> Void
    ) rethrows {
        let totals = try InterleavedOperations.run(count: count, stores: stores.count, firstTurn: firstTurn) {
            store,
            i in
            try operation(stores[store], i)
        }
        for (store, total) in zip(stores, totals) {
            times["\(suite)|\(store.name) \(name)", default: []].append(total.wall)
            times["\(suite)|\(store.name) \(name) CPU", default: []].append(total.cpu)
        }
    }

    for repetition in 0..<repetitions {
        let base = harness.scratch.appendingPathComponent("shapes-\(repetition)", isDirectory: true)
        var stores: [any ShapeStore] = [
            try RawPOSIXShapeStore(folder: base.appendingPathComponent("raw", isDirectory: true)),
            try ArchivistShapeStore(folder: base.appendingPathComponent("archivist", isDirectory: true)),
        ]
        if repetition % 2 == 1 { stores.reverse() }
        for shape in ["shapes.models", "shapes.blobs"] {
            let count = shape == "shapes.models" ? models.count : blobCount
            // The previous fill's dirty pages would otherwise be written back during this one.
            sync()
            if settle > 0 { Thread.sleep(forTimeInterval: settle) }
            if shape == "shapes.models" {
                try interleaved(shape, "set", stores, count: count, firstTurn: repetition) { store, i in
                    try store.store(models[i], key: keys[i])
                }
                try interleaved(shape, "get (warm)", stores, count: count, firstTurn: repetition) { store, i in
                    if try store.model(key: keys[i]) != models[i] { throw CacheShapeError.wrongValue(keys[i]) }
                }
            } else {
                try interleaved(shape, "set", stores, count: count, firstTurn: repetition) { store, i in
                    try store.store(blob, key: keys[i])
                }
                try interleaved(shape, "get (warm)", stores, count: count, firstTurn: repetition) { store, i in
                    if try store.data(key: keys[i])?.count != blob.count { throw CacheShapeError.wrongValue(keys[i]) }
                }
            }
            for store in stores {
                try time(shape, "\(store.name) totalSize") { _ = try store.totalSize() }
            }
            sync()
            for store in stores {
                let clearStart = clock.now
                try time(shape, "\(store.name) clear") { try store.clear() }
                try store.waitForDeletion()
                times["\(shape)|\(store.name) clear + deletion", default: []].append(
                    (clock.now - clearStart).nanoseconds
                )
            }
        }
        try? FileManager.default.removeItem(at: base)
    }

    for (shape, title) in [
        (
            "shapes.models",
            "\(models.count) single-model entries (\(jsonSize) B of JSON each), fresh root per repetition"
        ),
        ("shapes.blobs", "\(blobCount) × 100 KB Data entries, fresh root per repetition"),
    ] {
        for store in ["raw POSIX", "Archivist"] {
            for operation in [
                "set", "get (warm)", "totalSize", "clear", "clear + deletion", "set CPU", "get (warm) CPU",
            ] {
                let name = "\(store) \(operation)"
                let samples = (times["\(shape)|\(name)"] ?? []).sorted()
                guard !samples.isEmpty else { continue }
                harness.record(
                    BenchmarkResult(
                        suite: shape,
                        name: name,
                        medianNS: samples[samples.count / 2],
                        minNS: samples[0],
                        bytes: nil,
                        samples: samples.count
                    )
                )
            }
        }
        harness.printTable(shape, title: title) { name in
            name.hasPrefix("Archivist ") ? "raw POSIX " + name.dropFirst("Archivist ".count) : name
        }
    }
}

/// A product row of about 170 bytes of JSON: the single-model entry of the shapes.
struct ShapeModel: Codable, Archivable, Equatable {
    var id: Int, sku: String, title: String, price: Double, currency: String, inStock: Bool, tags: [String]
    var updatedAt: Date

    init(_ i: Int) {
        id = i
        sku = "SKU-\(100_000 + i)-EU"
        title = "Product number \(i), blue cotton"
        price = Double(i % 10_000) / 100
        currency = "EUR"
        inStock = i % 3 != 0
        tags = ["sale", "tag-\(i % 17)", "new"]
        updatedAt = Date(timeIntervalSinceReferenceDate: 785_000_000 + Double(i))
    }
}

private enum CacheShapeError: Error {
    case wrongValue(String)
    case system(String, Int32)
}

/// What the shapes do with a store.
private protocol ShapeStore {
    var name: String { get }
    func store(_ model: ShapeModel, key: String) throws
    func model(key: String) throws -> ShapeModel?
    func store(_ data: Data, key: String) throws
    func data(key: String) throws -> Data?
    func totalSize() throws -> Int
    func clear() throws
    /// Waits until what `clear()` removed is deleted from the disk.
    func waitForDeletion() throws
}

/// Archivist: one cache type, the key as parameter, the memory tier off.
private struct ArchivistShapeStore: ShapeStore {
    let cache: CacheManager<BenchCache>
    var name: String { "Archivist" }

    init(folder: URL) throws {
        cache = try CacheManager(root: CacheRoot(directory: folder), configuration: .init(memoryCountLimit: 0))
    }

    func store(_ model: ShapeModel, key: String) throws { try cache.store(model, for: .blobs, parameter: key) }
    func model(key: String) throws -> ShapeModel? { try cache.value(ShapeModel.self, for: .blobs, parameter: key) }
    func store(_ data: Data, key: String) throws { try cache.store(data, for: .blobs, parameter: key) }
    func data(key: String) throws -> Data? { try cache.value(Data.self, for: .blobs, parameter: key) }
    func totalSize() throws -> Int { Int(cache.totalSize) }
    func clear() throws { try cache.clear() }
    func waitForDeletion() throws { try cache.flush() }
}

/// Raw POSIX as written by hand: MD5 file names in one flat folder, JSON for models,
/// temporary file + rename, no fsync; size and clear walk the folder.
private final class RawPOSIXShapeStore: ShapeStore {
    let folder: String
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()
    var name: String { "raw POSIX" }

    init(folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.folder = folder.path
    }

    private func name(of key: String) -> String { MD5.hexDigest(of: key) }

    func store(_ model: ShapeModel, key: String) throws { try store(encoder.encode(model), key: key) }

    func model(key: String) throws -> ShapeModel? {
        try data(key: key).map { try decoder.decode(ShapeModel.self, from: $0) }
    }

    func store(_ data: Data, key: String) throws {
        guard rawWrite(data, folder: folder, name: name(of: key)) else { throw CacheShapeError.system("write", errno) }
    }

    func data(key: String) throws -> Data? { rawRead(folder + "/" + name(of: key)) }

    func totalSize() throws -> Int {
        var total = 0
        try forEachEntry { directory, entry in
            var status = stat()
            guard fstatat(directory, entry, &status, 0) == 0 else { throw CacheShapeError.system("fstatat", errno) }
            total += Int(status.st_size)
        }
        return total
    }

    func clear() throws {
        try forEachEntry { directory, entry in
            guard unlinkat(directory, entry, 0) == 0 else { throw CacheShapeError.system("unlinkat", errno) }
        }
        if recreatesFolder {
            guard rmdir(folder) == 0 else { throw CacheShapeError.system("rmdir", errno) }
            guard mkdir(folder, 0o700) == 0 else { throw CacheShapeError.system("mkdir", errno) }
        }
    }

    /// Whether `clear()` removes and re-creates the folder (`ARCHIVIST_BENCHMARK_RAW_CLEAR=recreate`).
    private let recreatesFolder = ProcessInfo.processInfo.environment["ARCHIVIST_BENCHMARK_RAW_CLEAR"] == "recreate"

    func waitForDeletion() throws {}  // `clear()` unlinks synchronously

    /// Calls `body` with the folder's descriptor and each entry's name except `.` and `..`.
    private func forEachEntry(_ body: (Int32, UnsafePointer<CChar>) throws -> Void) throws {
        guard let directory = opendir(folder) else { throw CacheShapeError.system("opendir", errno) }
        defer { closedir(directory) }
        let descriptor = dirfd(directory)
        while let entry = readdir(directory) {
            try withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                try UnsafeRawPointer(tuple).withMemoryRebound(to: CChar.self, capacity: 256) { name in
                    if strcmp(name, ".") != 0, strcmp(name, "..") != 0 { try body(descriptor, name) }
                }
            }
        }
    }
}
