import Foundation
import Testing

@testable import Archivist

/// Every read form for a non-`Sendable` model — `maxAge`, `async`, completion — called from
/// async code on the letters graph (a `User` whose letters point back to it weakly), and the
/// statistics such reads count.
@Suite struct CacheNonSendableReadFormsTests {
    /// The letters a read graph holds whose back-reference is the very user read.
    static func linkedLetters(_ user: User?) -> Int? {
        user.map { user in user.letters.filter { $0.user === user }.count }
    }

    @Test func maxAgeReadsAwaitedFromAnAsyncFunction() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try await cache.store([CacheAsyncNonSendableTests.letters()], for: .message, parameter: "m-1001")
            // The issue's own line: an array of non-Sendable users, with a maxAge.
            let users: [User]? = try await cache.value(for: .message, parameter: "m-1001", maxAge: 86_400)
            #expect(users?.count == 1)
            #expect(Self.linkedLetters(users?.first) == 3)
            // No entry is that young.
            let none: [User]? = try await cache.value(for: .message, parameter: "m-1001", maxAge: -1)
            #expect(none == nil)
            let missing: [User]? = try await cache.value(for: .message, parameter: "m-404", maxAge: 86_400)
            #expect(missing == nil)
        }
    }

    /// The blocking `maxAge` read (in async code, Swift picks the `async` form).
    static func blockingLinkedLetters(
        _ cache: CacheManager<ShopCache>,
        _ type: ShopCache,
        maxAge: TimeInterval
    ) throws -> Int? {
        let user: User? = try cache.value(for: type, maxAge: maxAge)
        return linkedLetters(user)
    }

    /// The blocking `maxAge` read of a `Sendable` value.
    static func blockingString(_ cache: CacheManager<ShopCache>, maxAge: TimeInterval) throws -> String? {
        try cache.value(for: .hots, maxAge: maxAge)
    }

    @Test func maxAgeReadsBlockingFromAsyncCode() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try await cache.store(CacheAsyncNonSendableTests.letters(), for: .message)
            #expect(try Self.blockingLinkedLetters(cache, .message, maxAge: 86_400) == 3)
            #expect(try Self.blockingLinkedLetters(cache, .message, maxAge: -1) == nil)
            // maxAge serves an entry past its expiry, as for a Sendable value.
            try await cache.store(CacheAsyncNonSendableTests.letters(), for: .shortLived)
            #expect(try await cache.value(User.self, for: .shortLived) == nil)
            #expect(Self.linkedLetters(try await cache.value(User.self, for: .shortLived, maxAge: 86_400)) == 3)
            #expect(try Self.blockingLinkedLetters(cache, .shortLived, maxAge: 86_400) == 3)
        }
    }

    @Test func theCompletionFormDecodesOnItsQueue() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try await cache.store(CacheAsyncNonSendableTests.letters(), for: .message)
            let linked: Int? = try await withCheckedThrowingContinuation { continuation in
                cache.value(User.self, for: .message) { result in
                    continuation.resume(with: result.map { Self.linkedLetters($0) })  // only a count leaves the queue
                }
            }
            #expect(linked == 3)
            let missed: Bool = try await withCheckedThrowingContinuation { continuation in
                cache.value(User.self, for: .hots) { result in continuation.resume(with: result.map { $0 == nil }) }
            }
            #expect(missed)
            try await cache.store("not a user", for: .hots)
            let failure: CacheError.Code? = await withCheckedContinuation { continuation in
                cache.value(User.self, for: .hots) { result in
                    if case .failure(let error) = result {
                        continuation.resume(returning: error.code)
                    } else {
                        continuation.resume(returning: nil)
                    }
                }
            }
            #expect(failure == .decodingFailed)
        }
    }

    /// An actor's method reads the graph with each form: the value is the actor's own.
    actor LetterBox {
        let cache: CacheManager<ShopCache>
        var user: User?
        init(cache: CacheManager<ShopCache>) { self.cache = cache }

        func load() async throws -> [Int?] {
            user = try await cache.value(User.self, for: .message)
            let first = CacheNonSendableReadFormsTests.linkedLetters(user)
            user = try await cache.value(for: .message, maxAge: 86_400)
            return [first, CacheNonSendableReadFormsTests.linkedLetters(user)]
        }
    }

    @Test func anActorKeepsWhatItReads() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try await cache.store(CacheAsyncNonSendableTests.letters(), for: .message)
            #expect(try await LetterBox(cache: cache).load() == [3, 3])
        }
    }

    /// A non-`Sendable` value on disk and not in memory (such values never are) read with
    /// `await`: a disk hit, not a miss, in every form.
    @Test func awaitedReadsOfANonSendableModelCountDiskHits() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try await cache.store(CacheAsyncNonSendableTests.letters(), for: .message)
            let before = cache.statistics(of: .message)
            _ = try await cache.value(User.self, for: .message)
            let afterRead = cache.statistics(of: .message)
            #expect(afterRead.diskHits == before.diskHits + 1)
            #expect(afterRead.hits == before.hits + 1)
            #expect(afterRead.misses == before.misses)
            #expect(afterRead.memoryHits == before.memoryHits)
            _ = try await cache.value(User.self, for: .message, maxAge: 86_400)
            let afterMaxAge = cache.statistics(of: .message)
            #expect(afterMaxAge.diskHits == afterRead.diskHits + 1)
            #expect(afterMaxAge.misses == before.misses)
            _ = try await cache.value(User.self, for: .message, parameter: "absent")
            let afterMiss = cache.statistics(of: .message)
            #expect(afterMiss.misses == before.misses + 1)
            #expect(afterMiss.diskHits == afterMaxAge.diskHits)
        }
    }

    /// A `Sendable` model still takes the memory-tier overload in every form (the second read
    /// is a memory hit), and a non-`Sendable` one the disk-only one.
    @Test func overloadsStillChooseTheMemoryTierBySendable() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try await cache.store("fresh", for: .hots)
            let blocking = try Self.blockingString(cache, maxAge: 86_400)
            let awaited: String? = try await cache.value(for: .hots, maxAge: 86_400)
            #expect(blocking == "fresh" && awaited == "fresh")
            let fromMemory: String? = await withCheckedContinuation { continuation in
                cache.value(String.self, for: .hots) { continuation.resume(returning: try? $0.get()) }
            }
            #expect(fromMemory == "fresh")
            #expect(cache.statistics(of: .hots).memoryHits == 3)
            try await cache.store(CacheAsyncNonSendableTests.letters(), for: .message)
            _ = try Self.blockingLinkedLetters(cache, .message, maxAge: 86_400)
            _ = try await cache.value(User.self, for: .message, maxAge: 86_400)
            #expect(cache.statistics(of: .message).memoryHits == 0)
            #expect(cache.statistics(of: .message).diskHits == 2)
        }
    }

    struct Offline: Error {}

    /// The blocking read of a `Sendable` value (in async code, Swift picks the `async` form).
    static func blockingValue(_ cache: CacheManager<ShopCache>, _ type: ShopCache) throws -> String? {
        try cache.value(String.self, for: type)
    }

    /// The `async` fetch form with a non-`Sendable` model: it stores what it fetched, falls
    /// back to the cache when the fetch throws; a `Sendable` model still takes the form that
    /// keeps it in the memory tier.
    @Test func theAsyncFetchFormTakesANonSendableModel() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            let fetched = try await cache.value(User.self, for: .message) { () async throws -> User in
                CacheAsyncNonSendableTests.letters()
            }
            #expect(!fetched.isFromCache && fetched.storeError == nil)
            #expect(Self.linkedLetters(fetched.value) == 3)
            let fallback = try await cache.value(User.self, for: .message) { () async throws -> User in throw Offline()
            }
            #expect(fallback.isFromCache)
            #expect(Self.linkedLetters(fallback.value) == 3)
            await #expect(throws: Offline.self) {
                _ = try await cache.value(User.self, for: .message, parameter: "never") { () async throws -> User in
                    throw Offline()
                }
            }
            #expect(try await LetterBox(cache: cache).fetch() == [3, 3])
            let strings = try await cache.value(String.self, for: .hots) { () async throws -> String in "fresh" }
            #expect(strings.value == "fresh")
            #expect(try Self.blockingValue(cache, .hots) == "fresh")
            #expect(cache.statistics(of: .hots).memoryHits == 1)  // stored through the memory-tier form
        }
    }
}

extension CacheNonSendableReadFormsTests.LetterBox {
    /// The fetch form on the actor: what it fetched and what it falls back to are its own.
    func fetch() async throws -> [Int?] {
        user = try await cache.value(for: .message) { () async throws -> User in CacheAsyncNonSendableTests.letters() }
            .value
        let first = CacheNonSendableReadFormsTests.linkedLetters(user)
        user = try await cache.value(for: .message) { () async throws -> User in
            throw CacheNonSendableReadFormsTests.Offline()
        }.value
        return [first, CacheNonSendableReadFormsTests.linkedLetters(user)]
    }
}
