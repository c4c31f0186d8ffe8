import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `TemporaryName`: a sweep deletes the temporaries of dead writers and keeps live ones'.
@Suite struct TemporaryNameTests {
    private let now = TemporaryName.currentTime()

    @Test func namesAreUniqueAndRecognized() {
        let names = (0..<1_000).map { _ in TemporaryName.make() }
        #expect(Set(names).count == names.count)
        for name in names.prefix(10) {
            #expect(AtomicFile.isTemporary(name[...]))
            #expect(TemporaryName.Owner(name: name[...]) == TemporaryName.identity)
        }
    }

    @Test func aPathInAFolderEndsInOneOfOurNames() {
        let path = TemporaryName.path(inFolder: "/store/shared-caches")
        #expect(path.hasPrefix("/store/shared-caches/"))
        let name = path.split(separator: "/").last!
        #expect(AtomicFile.isTemporary(name))
        #expect(TemporaryName.Owner(name: name) == TemporaryName.identity)
        #expect(TemporaryName.path(inFolder: "/store/shared-caches") != path)
    }

    /// The path is built byte by byte: it must read exactly as the plain concatenation would,
    /// the counter in lowercase hex without leading zeros.
    @Test func aPathIsTheFolderOurPrefixAndTheCounterInHex() throws {
        for folder in ["/store/shared-caches", "", "/ä/ü"] {
            let path = TemporaryName.path(inFolder: folder)
            let start = folder + "/" + TemporaryName.ownerPrefix
            #expect(path.hasPrefix(start))
            let digits = try #require(String(path.utf8.dropFirst(start.utf8.count)))
            let serial = try #require(UInt64(digits, radix: 16))
            #expect(path == start + String(serial, radix: 16))
            // Other tests may take names in between: later, not necessarily next.
            let next = TemporaryName.path(inFolder: folder)
            let nextDigits = try #require(String(next.utf8.dropFirst(start.utf8.count)))
            let nextSerial = try #require(UInt64(nextDigits, radix: 16))
            #expect(nextSerial > serial && next == start + String(nextSerial, radix: 16))
        }
    }

    @Test func ownTemporariesAndLiveProcessesOnesAreKept() {
        #expect(!TemporaryName.isAbandoned(TemporaryName.make()[...], modified: now, now: now))
        let parent = name(pid: getppid(), incarnation: 7)  // the test runner's parent is alive
        #expect(!TemporaryName.isAbandoned(parent[...], modified: now, now: now))
    }

    // Starts a worker process: macOS and Linux only.
    #if os(macOS) || os(Linux)
    @Test func deadOwnersTemporariesAreAbandoned() throws {
        let worker = try #require(processWorkerPath())
        let child = try ChildProcess(worker, ["no-such-mode"])  // exits at once with status 1
        _ = child.wait()
        #expect(TemporaryName.isAbandoned(name(pid: child.pid, incarnation: 1)[...], modified: now, now: now))
    }
    #endif

    @Test func aPredecessorWithOurPIDIsDead() {
        #expect(TemporaryName.isAbandoned(abandonedTemporaryName()[...], modified: now, now: now))
    }

    @Test func anotherNamespaceOrTheOldFormIsJudgedByAgeOnly() {
        let foreign = ".tmp-1.\(String(TemporaryName.identity.namespace &+ 1, radix: 16)).5.1"
        for candidate in [foreign, ".tmp-0123456789abcdef"] {
            #expect(!TemporaryName.isAbandoned(candidate[...], modified: now, now: now))
            #expect(TemporaryName.isAbandoned(candidate[...], modified: now - TemporaryName.abandonAge - 1, now: now))
        }
    }

    @Test func sweepDeletesOnlyAbandonedTemporaries() throws {
        let folder = try ScratchFolder()
        let mine = folder.file(TemporaryName.make())
        let predecessor = folder.file(abandonedTemporaryName())
        let entry = folder.file("0123456789abcdef0123456789abcdef")
        for url in [mine, predecessor, entry] { try Data([1]).write(to: url) }
        #expect(TemporaryName.sweepAbandoned(inFolder: folder.url.path) == 1)
        #expect(FileManager.default.fileExists(atPath: mine.path))
        #expect(!FileManager.default.fileExists(atPath: predecessor.path))
        #expect(FileManager.default.fileExists(atPath: entry.path))
    }

    /// A temporary name of the current format with the given owner in this namespace.
    private func name(pid: pid_t, incarnation: UInt64) -> String {
        ".tmp-\(String(pid, radix: 16)).\(String(TemporaryName.identity.namespace, radix: 16)).\(String(incarnation, radix: 16)).1"
    }
}
