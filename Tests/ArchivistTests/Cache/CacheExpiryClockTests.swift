import Foundation
import Testing

@testable import Archivist

/// A clock a test sets and moves by hand, for managers opened with it: expiries and ages are
/// judged at the times the test chooses, never by waiting. Whole seconds since 1970, so a
/// date and an interval added to it compare exactly, through the entry header too.
final class TestClock: Sendable {
    private let seconds: Locked<Double>

    /// A clock at the current time, rounded down to a whole second.
    init() { seconds = Locked(Date().timeIntervalSince1970.rounded(.down)) }

    /// The time the clock shows.
    var date: Date { Date(timeIntervalSince1970: seconds.withLock { $0 }) }

    /// Moves the clock by `interval` seconds (back when negative).
    func advance(by interval: TimeInterval) { seconds.withLock { $0 += interval } }

    /// The clock as a manager reads it.
    var now: @Sendable () -> Date { { [self] in date } }
}

/// Cache types for the clock tests: one whose policy gives each entry a minute, and `items`,
/// the type (and location) the worker processes read.
enum ClockedCache: String, CacheType {
    case minute, items

    var location: CacheLocation { .sharedCaches }

    var policy: CachePolicy {
        switch self {
        case .minute: CachePolicy(maxAge: 60)
        case .items: CachePolicy()
        }
    }
}

/// Entries stored with a future expiry — `.after`, `.at`, a policy's `maxAge` — are served
/// until it and not from it on, and `value(maxAge:)` serves exactly the entries written within
/// that age: through the manager that stored them (its memory tier), another manager of the
/// root (the disk) and another process (with the system clock).
@Suite struct CacheExpiryClockTests {
    /// A manager on `root` telling the time by `clock`.
    static func manager(_ root: URL, _ clock: TestClock, memory: Bool = true) throws -> CacheManager<ClockedCache> {
        try CacheManager<ClockedCache>(
            root: CacheRoot(directory: root),
            user: nil,
            configuration: .init(memoryCountLimit: memory ? 100 : 0),
            fileSystem: .posix,
            clock: clock.now
        )
    }

    @Test(arguments: ["after", "at", "policy"])
    func anEntryIsServedUntilItsExpiryAndNotFromItOn(form: String) throws {
        let folder = try ScratchFolder()
        let clock = TestClock()
        let writer = try Self.manager(folder.url, clock)
        let start = clock.date
        switch form {
        case "after": try writer.store("fresh", for: .items, expiry: .after(60))
        case "at": try writer.store("fresh", for: .items, expiry: .at(start.addingTimeInterval(60)))
        default: try writer.store("fresh", for: .minute)
        }
        let type: ClockedCache = form == "policy" ? .minute : .items
        #expect(try writer.info(for: type)?.expiry == start.addingTimeInterval(60))
        // Readers through the disk: another manager of the root, with and without a memory tier.
        let other = try Self.manager(folder.url, clock)
        let diskOnly = try Self.manager(folder.url, clock, memory: false)
        let readers = [("the writer", writer), ("another manager", other), ("a manager without memory", diskOnly)]

        clock.advance(by: 59)
        for (name, reader) in readers {
            #expect(try reader.value(String.self, for: type) == "fresh", "\(name) a second before the expiry")
        }
        clock.advance(by: 1)  // exactly the expiry: no longer fresh
        for (name, reader) in readers {
            #expect(try reader.value(String.self, for: type) == nil, "\(name) at the expiry")
            #expect(try reader.value(String.self, for: type, maxAge: 3_600) == "fresh", "\(name): written a minute ago")
        }
        #expect(writer.contains(type), "an expired entry stays on disk for the offline fallback")
        let fallback = try writer.value(String.self, for: type) { throw CocoaError(.fileReadUnknown) }
        #expect(fallback.value == "fresh")
    }

    @Test func aStoreWithAnExpiryAlreadyPastIsNotServed() throws {
        let folder = try ScratchFolder()
        let clock = TestClock()
        let cache = try Self.manager(folder.url, clock)
        try cache.store("stale", for: .items, expiry: .at(clock.date.addingTimeInterval(-1)))
        try cache.store("now", for: .items, parameter: "edge", expiry: .at(clock.date))
        #expect(try cache.value(String.self, for: .items) == nil)
        #expect(try cache.value(String.self, for: .items, parameter: "edge") == nil)
        #expect(try Self.manager(folder.url, clock).value(String.self, for: .items) == nil)
    }

    @Test func valueWithMaxAgeServesOnlyEntriesWrittenWithinIt() throws {
        let folder = try ScratchFolder()
        let clock = TestClock()
        let writer = try Self.manager(folder.url, clock)
        try writer.store("old", for: .items, expiry: .never)
        _ = try writer.value(String.self, for: .items)  // in the writer's memory tier
        let other = try Self.manager(folder.url, clock)
        let diskOnly = try Self.manager(folder.url, clock, memory: false)
        clock.advance(by: 100)
        for (name, reader) in [
            ("the writer", writer), ("another manager", other), ("a manager without memory", diskOnly),
        ] {
            #expect(try reader.value(String.self, for: .items, maxAge: 50) == nil, "\(name): 100 s old, maxAge 50")
            #expect(try reader.value(String.self, for: .items, maxAge: 99) == nil, "\(name): 100 s old, maxAge 99")
            #expect(try reader.value(String.self, for: .items, maxAge: 100) == "old", "\(name): 100 s old, maxAge 100")
            #expect(try reader.value(String.self, for: .items, maxAge: 200) == "old", "\(name): 100 s old, maxAge 200")
            #expect(try reader.value(String.self, for: .items) == "old", "\(name): no expiry")
        }
    }

    @Test func anotherProcessReadsExpiriesByItsOwnClock() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        let clock = TestClock()
        let cache = try Self.manager(folder.url, clock)
        // Written two minutes ago (by this manager's clock) with a minute to live: expired
        // for a process on the system clock; written now with an hour: fresh for it.
        clock.advance(by: -120)
        try cache.store("gone", for: .items, parameter: "expired", expiry: .after(60))
        try cache.store(
            "gone too",
            for: .items,
            parameter: "expired-at",
            expiry: .at(clock.date.addingTimeInterval(60))
        )
        clock.advance(by: 120)
        try cache.store("here", for: .items, parameter: "fresh", expiry: .after(3_600))
        let checks = [("expired", "-"), ("expired-at", "-"), ("fresh", "here")]
        let children = try checks.map { try ChildProcess(worker, ["cache-expect", folder.url.path, $0.0, $0.1]) }
        ChildProcess.waitForAll(children)
    }
}
