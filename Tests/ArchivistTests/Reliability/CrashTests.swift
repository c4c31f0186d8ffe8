// Starts and kills a writer process: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistTestSupport
import Foundation
import Testing
@testable import Archivist
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Kills a writer process (Tests/CrashWriter) with SIGKILL at seeded random moments, reopens
/// its caches and record store, and checks what survived.
///
/// `ARCHIVIST_CRASH_KILLS` sets the number of kills (300 by default; the long run in
/// docs/Reliability.md uses 1,000 or more) and `ARCHIVIST_CRASH_SEED` the seed.
@Suite struct CrashTests {
    static let environment = ProcessInfo.processInfo.environment
    static let kills = environment["ARCHIVIST_CRASH_KILLS"].flatMap(Int.init) ?? 300
    static let seed = environment["ARCHIVIST_CRASH_SEED"].flatMap(UInt64.init) ?? 0xC0FFEE

    /// After every kill: each cache entry holds the last version whose store returned or the
    /// one in flight, never torn bytes; the size index equals the files; no temporary or trash
    /// file is left; the record store holds exactly the batches whose save returned, plus
    /// possibly the one in flight, whole.
    @Test(.timeLimit(.minutes(30)))
    func killedWriterLeavesCommittedOrInFlightStateNeverTorn() throws {
        guard let writer = crashWriterPath() else {
            Issue.record("ArchivistCrashWriter not found next to the test binary; set ARCHIVIST_CRASH_WRITER")
            return
        }
        try withTemporaryDirectory { folder in
            var rng = SplitMix64(seed: Self.seed)
            var model = CrashModel()
            var midOperation = 0
            var duringOpen = 0
            for round in 0..<Self.kills {
                let logPath = folder.path + "/writer.log"
                _ = unlink(logPath)
                let child = try ChildProcess(writer, [folder.path, String(Self.seed), String(round)])
                let moment = Int.random(in: 0..<8, using: &rng)
                if moment == 0 {
                    // Kill while the writer may still be opening: recovery must be crash-safe too.
                    usleep(UInt32.random(in: 0..<20_000, using: &rng))
                } else {
                    let ready = Self.waitForReady(logPath, deadline: .now + .seconds(30))
                    // Mostly soon after opening; sometimes late enough that the size index's
                    // background save (half a second after a change) may be under way.
                    usleep(
                        moment == 1
                            ? UInt32.random(in: 400_000..<700_000, using: &rng)
                            : UInt32.random(in: 500..<40_000, using: &rng)
                    )
                    if !ready {
                        _ = child.kill()
                        Issue.record("round \(round): the writer never became ready (seed \(Self.seed))")
                        return
                    }
                }
                let status = child.kill()
                guard status & 0x7F == SIGKILL else {
                    Issue.record("round \(round): the writer exited by itself, status \(status) (seed \(Self.seed))")
                    return
                }
                let log = ProgressLog.lines(at: logPath)
                if log.first != "ready" { duringOpen += 1 }
                let pending = model.apply(log: log)
                if pending != nil { midOperation += 1 }
                let failures = try Self.verify(folder, &model, pending)
                for failure in failures {
                    Issue.record("round \(round) (seed \(Self.seed)): \(failure)")
                }
                if !failures.isEmpty { return }
            }
            print(
                "CrashTests: \(Self.kills) kills survived (seed \(Self.seed)): \(midOperation) in the middle of an "
                    + "operation, \(duringOpen) before the writer finished opening; "
                    + "\(model.entries.count) cache entries and \(model.records.count) records at the end"
            )
        }
    }

    /// Polls the log for the writer's `ready` line (with plain reads: this runs thousands of
    /// times, and Foundation's file reader shows up in LeakSanitizer's suppressed reports).
    static func waitForReady(_ path: String, deadline: ContinuousClock.Instant) -> Bool {
        let expected = Array("ready".utf8)
        while ContinuousClock.now < deadline {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 {
                var bytes = [UInt8](repeating: 0, count: expected.count)
                let count = read(fd, &bytes, bytes.count)
                close(fd)
                if count == expected.count && bytes == expected { return true }
            }
            usleep(500)
        }
        return false
    }

    /// Reopens everything and checks it against the model; brings the model in line with what
    /// survived of the operation in flight. Returns the failures.
    static func verify(_ folder: URL, _ model: inout CrashModel, _ pending: CrashModel.Pending?) throws -> [String] {
        var failures: [String] = []
        let root = CacheRoot(
            caches: folder.appendingPathComponent("caches"),
            documents: folder.appendingPathComponent("documents")
        )
        do {
            let cache = try CacheManager<CrashCache>(
                root: root,
                user: "crash-user",
                configuration: .init(memoryCountLimit: 0)
            )
            var found: [CrashModel.Key: CrashModel.Entry] = [:]
            for type in CrashCache.allCases {
                for parameter in type.parameters {
                    let key = CrashModel.Key(type: type, parameter: parameter)
                    do {
                        if let blob = try cache.value(CrashBlob.self, for: type, parameter: parameter) {
                            found[key] = CrashModel.Entry(version: blob.version, length: blob.bytes.count)
                            let expected = [model.entries[key]?.version, pendingEntry(pending, key)?.version]
                            if !expected.contains(blob.version) {
                                failures.append("\(key) holds version \(blob.version), expected \(expected)")
                            } else if let length = [model.entries[key], pendingEntry(pending, key)]
                                .compactMap({ $0 }).first(where: { $0.version == blob.version })?.length,
                                !blob.isIntact(length: length)
                            {
                                failures.append("\(key) version \(blob.version) has damaged bytes")
                            }
                        }
                    } catch {
                        failures.append("\(key) threw \(error)")
                    }
                }
            }
            for type in CrashCache.allCases {
                let keys = type.parameters.map { CrashModel.Key(type: type, parameter: $0) }
                let asCommitted = keys.allSatisfy { found[$0] == model.entries[$0] }
                let asAfterStore = keys.allSatisfy { key in
                    if case .store(key, let entry)? = pending { return found[key] == entry }
                    return found[key] == model.entries[key]
                }
                let cleared = keys.allSatisfy { found[$0] == nil }
                var clearing = false
                if case .clear(type)? = pending { clearing = true }
                if !(asCommitted || asAfterStore || (clearing && cleared)) {
                    failures.append("\(type) is neither as committed nor as after the operation in flight")
                }
            }
            model.entries = found
            // The open sweeps a killed writer's temporaries on the trash queue (they are no
            // entries, so no size counts them): wait for it before walking the files. Walking
            // before it, 1 run in a few hundred kills found the index "behind" the disk by
            // exactly such a temporary's size (no rescan at open hides that).
            cache.caches.waitForTrash()
            cache.documents.waitForTrash()
            let files = entryFiles(under: root.caches).merging(entryFiles(under: root.documents)) { $0 + $1 }
            let onDisk = files.values.reduce(0, +)
            if cache.totalSize != onDisk || cache.totalUsage.entryCount != found.count {
                let temporaries = files.filter { AtomicFile.isTemporary($0.key.split(separator: "/").last ?? "") }
                failures.append(
                    "size index \(cache.totalSize) bytes / \(cache.totalUsage.entryCount) entries, "
                        + "disk \(onDisk) bytes / \(found.count) entries (temporaries \(temporaries)): "
                        + "\(files.keys.sorted())"
                )
            }
        }

        let records = try RecordStore<CrashRecord>(
            directory: folder.appendingPathComponent("records"),
            configuration: .init(durability: .none)
        )
        // Both stores are open now, so their sweeps have run.
        for path in allPaths(under: folder) {
            let name = path.split(separator: "/").last.map(String.init) ?? path
            if AtomicFile.isTemporary(name[...]) { failures.append("temporary left: \(path)") }
            if path.contains(".archivist/trash/") { failures.append("trash left: \(path)") }
        }
        let all = records.all()
        let held = Dictionary(all.map { ($0.id, $0.batch) }, uniquingKeysWith: { $1 })
        for record in all where !record.isIntact { failures.append("record \(record.id) has a damaged payload") }
        if held == model.records {
            return failures
        }
        if case .batch(let upserts, let deletes, let sequence)? = pending,
            held == CrashModel.applying(upserts, deletes, sequence, to: model.records)
        {
            model.records = held
            return failures
        }
        failures.append(
            "records \(held.sorted { $0.key < $1.key }) are not a prefix of the committed batches "
                + "(expected \(model.records.sorted { $0.key < $1.key }))"
        )
        return failures
    }

    static func pendingEntry(_ pending: CrashModel.Pending?, _ key: CrashModel.Key) -> CrashModel.Entry? {
        if case .store(key, let entry)? = pending { return entry }
        return nil
    }
}
#endif
