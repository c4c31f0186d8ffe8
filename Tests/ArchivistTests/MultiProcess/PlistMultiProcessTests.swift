// Starts worker processes: macOS and Linux only.
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

/// `PlistStore` and `Preferences` shared by several real processes (`ArchivistProcessWorker`'s
/// `plist-set` and `preferences-set` modes): no key whose `set` returned is ever lost, the file
/// always parses, and a `Preferences` serves another process's change.
@Suite struct PlistMultiProcessTests {
    @Test(arguments: ["plist-set", "preferences-set"])
    func writersInSeveralProcessesLoseNoKey(mode: String) throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let progress = folder.file("committed").path
        let children = try (0..<3).map { writer in
            try ChildProcess(worker, [mode, folder.url.path, "shared", "w\(writer)-", "150", progress])
        }
        ChildProcess.waitForAll(children)
        let root = try PlistStore(directory: folder.url)["shared"]
        let committed = ProgressLog.lines(at: progress)
        #expect(committed.count == 3 * 150)
        expectEveryKey(committed, in: root)
        #expect(root.count == 3 * 150)
    }

    @Test func aWriterKilledMidRunNeverCostsAnotherACommittedKey() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let progress = folder.file("committed").path
        let survivor = try ChildProcess(worker, ["plist-set", folder.url.path, "shared", "s-", "150", progress])
        var random = SplitMix64(seed: 8_006)
        for round in 0..<40 {
            let before = lineCount(progress)
            let victim = try ChildProcess(
                worker,
                ["preferences-set", folder.url.path, "shared", "v\(round)-", "1000000", progress]
            )
            // Kill it after it committed a few keys (0–3 more lines, whoever wrote them), so
            // the kill lands anywhere in a write: reading, encoding, writing, renaming.
            let wait = Int(random.next() % 4)
            while lineCount(progress) < before + wait && !hasExited(victim) { usleep(500) }
            let status = victim.kill()
            if status & 0x7f != SIGKILL {
                Issue.record("round \(round): the writer ended on its own before the kill, wait status \(status)")
            }
            let committed = ProgressLog.lines(at: progress)  // before the read: the survivor goes on
            let root = try PlistStore(directory: folder.url)["shared"]  // parses after every kill
            expectEveryKey(committed, in: root)
        }
        ChildProcess.waitForAll([survivor])
        let store = PlistStore(directory: folder.url)  // a fresh opener sweeps the dead writers' temporaries
        let root = try store["shared"]
        let committed = ProgressLog.lines(at: progress)
        expectEveryKey(committed, in: root)
        #expect((0..<150).allSatisfy { root["s-\($0)"] == .int($0) }, "the survivor's keys are all there")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
            .filter { AtomicFile.isTemporary($0[...]) }
        #expect(leftovers.isEmpty)
    }

    @Test func preferencesServeAnotherProcesssChange() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let preferences = try Preferences(store: PlistStore(directory: folder.url), name: "Settings")
        let key = PreferenceKey<Int>("other-0", default: -1)
        #expect(preferences[key] == -1)
        try preferences.set(7, for: PreferenceKey<Int>("mine", default: -1))
        let child = try ChildProcess(
            worker,
            ["preferences-set", folder.url.path, "Settings", "other-", "1", folder.file("committed").path]
        )
        ChildProcess.waitForAll([child])
        #expect(preferences[key] == 0, "the other process's set had returned")
        #expect(try preferences.storedValue(for: key) == 0)
        #expect(preferences[PreferenceKey<Int>("mine", default: -1)] == 7)
    }

    // MARK: Helpers

    /// Whether `child` has ended, without reaping it (its `kill()` still reaps it).
    private func hasExited(_ child: ChildProcess) -> Bool {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(child.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return true }
        #if canImport(Glibc)
        return info._sifields._kill.si_pid != 0  // `si_pid` is a C macro there
        #else
        return info.si_pid != 0
        #endif
    }

    private func lineCount(_ path: String) -> Int {
        ProgressLog.lines(at: path).count
    }

    private func expectEveryKey(
        _ keys: [String],
        in root: [String: PlistValue],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let missing = keys.filter { key in
            guard let index = key.split(separator: "-").last.flatMap({ Int($0) }) else { return true }
            return root[key] != .int(index)
        }
        #expect(
            missing.isEmpty,
            "\(missing.count) committed keys lost, such as \(missing.prefix(5))",
            sourceLocation: sourceLocation
        )
    }
}
#endif
