import ArchivistKeyedArchive
import Foundation
import Testing

@testable import Archivist

/// The Guide's `Order`: an `NSSecureCoding` class, `Archivable` by declaration, with mutable
/// state and so not `Sendable`.
final class GuideOrder: NSObject, NSSecureCoding, Archivable {
    static var supportsSecureCoding: Bool { true }
    var number: String
    var total: Double

    init(number: String, total: Double) {
        self.number = number
        self.total = total
    }

    required init?(coder: NSCoder) {
        guard let number = coder.decodeObject(of: NSString.self, forKey: "number") as String? else { return nil }
        self.number = number
        total = coder.decodeDouble(forKey: "total")
    }

    func encode(with coder: NSCoder) {
        coder.encode(number as NSString, forKey: "number")
        coder.encode(total, forKey: "total")
    }
}

/// Non-`Sendable` models read from async code: the value comes back as the caller's own.
struct CacheAsyncNonSendableTests {
    static func letters() -> User {
        let user = User(account: "alice", writeName: "Alice")
        for number in 1...3 {
            let letter = Letter(
                pkNumber: number,
                sender: "bob",
                content: "letter \(number)",
                date: Date(timeIntervalSince1970: Double(number)),
                isRead: false,
                incoming: true
            )
            letter.user = user
            user.letters.append(letter)
        }
        return user
    }

    /// Stores and reads back the letters graph and the orders from an async function.
    static func roundTrip(in dir: URL) async throws -> (User?, [GuideOrder]?) {
        let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
        try await cache.store(letters(), for: .message)
        try await cache.store([GuideOrder(number: "A-1", total: 12.5)], for: .userOrderList)
        let user = try await cache.value(User.self, for: .message)
        let orders = try await cache.value([GuideOrder].self, for: .userOrderList)
        return (user, orders)
    }

    @Test func anAsyncFunctionReadsTheGraphAndTheDeclaredClass() async throws {
        try await withTemporaryDirectory { dir in
            let (user, orders) = try await Self.roundTrip(in: dir)
            let read = try #require(user)
            #expect(read.letters.map(\.content) == ["letter 1", "letter 2", "letter 3"])
            #expect(read.letters.allSatisfy { $0.user === read })  // back-references kept
            #expect(orders?.map(\.number) == ["A-1"])
            #expect(orders?.first?.total == 12.5)
        }
    }

    @Test func aTaskReadsTheGraph() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try await cache.store(Self.letters(), for: .message)
            let count = try await Task {
                let user = try await cache.value(User.self, for: .message)
                return user?.letters.filter { $0.user === user }.count
            }.value
            #expect(count == 3)
        }
    }

    @Test func expiredAndMissingEntriesReadAsNil() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            #expect(try await cache.value(User.self, for: .hots) == nil)
            try await cache.store(Self.letters(), for: .shortLived)
            #expect(try await cache.value(User.self, for: .shortLived) == nil)
        }
    }

    @Test func anEntryOfAnotherTypeIsDecodingFailedNamingItsKey() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try await cache.store("not a user", for: .hots)
            let error = await #expect(throws: CacheError.self) { try await cache.value(User.self, for: .hots) }
            #expect(error?.code == .decodingFailed)
            #expect(error?.typeName == "hots")
        }
    }
}
