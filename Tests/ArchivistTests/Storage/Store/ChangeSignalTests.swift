import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `ChangeSignal`: a commit to a file wakes every observer of that file, in this process as in
/// others, and no observer of another file.
@Suite(.timeLimit(.minutes(20))) struct ChangeSignalTests {
    /// One observer's wakes: counted, and streamed so a test can wait for the next.
    final class Wakes: Sendable {
        let count = Locked(0)
        let stream: AsyncStream<Void>
        private let continuation: AsyncStream<Void>.Continuation

        init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self) }

        func wake() {
            count.withLock { $0 += 1 }
            continuation.yield()
        }

        /// Whether a wake comes within a generous timeout.
        func next() async -> Bool { await firstElement(of: stream, within: .seconds(20)) != nil }
    }

    /// What a commit does to the signal's file: appends to it, then posts.
    private func commit(_ signal: ChangeSignal) throws {
        let fd = open(signal.folder + "/" + signal.fileName, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StorageError.posix("open", path: signal.folder, errno: errno) }
        defer { close(fd) }
        #expect(write(fd, "x", 1) == 1)
        signal.post()
    }

    /// Runs everything queued on `queue` so far.
    private func drain(_ queue: DispatchQueue) async {
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
    }

    @Test func aCommitWakesEveryObserverOfTheFileWhateverThePathsSpelling() async throws {
        try await withTemporaryDirectory { dir in
            let link = dir.path + "-link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir.path)
            defer { try? FileManager.default.removeItem(atPath: link) }
            let writer = ChangeSignal(folder: dir.path, fileName: "journal")
            let reader = ChangeSignal(folder: link, fileName: "journal")
            let queue = DispatchQueue(label: "observers")
            let first = Wakes()
            let second = Wakes()
            let observations = [writer.observe(on: queue, first.wake), reader.observe(on: queue, second.wake)]
            #expect(observations.allSatisfy { $0 != nil })
            try commit(writer)
            #expect(await first.next())
            #expect(await second.next())
            withExtendedLifetime(observations) {}
        }
    }

    @Test func aCommitToAnotherFileWakesNoObserverOfThisOne() async throws {
        try await withTemporaryDirectory { dir in
            let journal = ChangeSignal(folder: dir.path, fileName: "journal")
            let other = ChangeSignal(folder: dir.path, fileName: "other")
            let queue = DispatchQueue(label: "observers")
            let journalWakes = Wakes()
            let otherWakes = Wakes()
            let observations = [
                journal.observe(on: queue, journalWakes.wake), other.observe(on: queue, otherWakes.wake),
            ]
            try commit(other)
            #expect(await otherWakes.next())
            await drain(queue)  // a wake of the journal's observer by the same event would have run by now
            #expect(journalWakes.count.withLock { $0 } == 0)
            withExtendedLifetime(observations) {}
        }
    }

    @Test func aCancelledObservationIsNotWokenAgain() async throws {
        try await withTemporaryDirectory { dir in
            let signal = ChangeSignal(folder: dir.path, fileName: "journal")
            let queue = DispatchQueue(label: "observers")
            let cancelled = Wakes()
            let live = Wakes()
            let gone = try #require(signal.observe(on: queue, cancelled.wake))
            let kept = signal.observe(on: queue, live.wake)
            gone.cancel()
            try commit(signal)
            #expect(await live.next())
            await drain(queue)
            #expect(cancelled.count.withLock { $0 } == 0)
            withExtendedLifetime(kept) {}
        }
    }

    /// On Linux a file renamed into place (a record store's new log) raises the event by
    /// itself; Apple platforms rely on the writer's post.
    @Test(.enabled(if: isLinux, "the rename is the signal only with inotify"))
    func aFileRenamedIntoPlaceWakesObservers() async throws {
        try await withTemporaryDirectory { dir in
            let signal = ChangeSignal(folder: dir.path, fileName: "records.log")
            let wakes = Wakes()
            let observation = signal.observe(on: DispatchQueue(label: "observer"), wakes.wake)
            try Data("new".utf8).write(to: dir.appendingPathComponent("records.log.new"))
            #expect(rename(dir.path + "/records.log.new", dir.path + "/records.log") == 0)
            #expect(await wakes.next())
            withExtendedLifetime(observation) {}
        }
    }

    @Test func everySpellingOfAFolderGivesOneNotificationName() throws {
        try withTemporaryDirectory { dir in
            let link = dir.path + "-link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir.path)
            defer { try? FileManager.default.removeItem(atPath: link) }
            let name = ChangeSignal.notificationName(folder: dir.path, fileName: "journal")
            #expect(name.hasPrefix("archivist.") && name.count == "archivist.".count + 32)
            #expect(ChangeSignal.notificationName(folder: link, fileName: "journal") == name)
            #expect(ChangeSignal.notificationName(folder: dir.path + "/.", fileName: "journal") == name)
            #expect(ChangeSignal.notificationName(folder: dir.path, fileName: "records.log") != name)
            let other = dir.appendingPathComponent("other")
            try FileManager.default.createDirectory(at: other, withIntermediateDirectories: false)
            #expect(ChangeSignal.notificationName(folder: other.path, fileName: "journal") != name)
        }
    }
}

/// Whether the tests run on Linux.
private let isLinux: Bool = {
    #if os(Linux)
    true
    #else
    false
    #endif
}()
