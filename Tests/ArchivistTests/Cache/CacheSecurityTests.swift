import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// Hostile input: nothing a caller passes may create a path outside the root, reach another
/// user's scope, or weaken permissions.
@Suite struct CacheSecurityTests {
    static let hostileParameters: [String] = [
        "../..", "../../../../etc/passwd", "/etc/passwd", "/", ".", "..", "a/../../b", "a\0b", "\0",
        String(repeating: "x", count: 10_000), "ユーザー/データ", "🧨/../🧨", "%2e%2e", "%2e%2e%2f%2e%2e",
        "..\\..\\windows", "~", "$HOME", "name\nwith\nnewlines", "",
    ]

    @Test(arguments: hostileParameters)
    func hostileParametersStayInsideTheRoot(parameter: String) throws {
        try withTemporaryDirectory { dir throws in
            let root = dir.appendingPathComponent("root")
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: root), user: parameter)
            try cache.store(parameter, for: .apiStrategy, parameter: parameter)
            try cache.store(parameter, for: .userOrderList, parameter: parameter)
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: parameter) == parameter)
            #expect(try cache.value(String.self, for: .userOrderList, parameter: parameter) == parameter)
            // Only `root` exists next to it, and every name inside is a hash or a fixed word.
            #expect(allPaths(under: dir).allSatisfy { $0 == "root" || $0.hasPrefix("root/") })
            for path in allPaths(under: root) where !path.hasPrefix(".archivist") {
                for component in path.split(separator: "/") {
                    let fixed = ["shared-caches", "user-caches", "user-documents", "value"].contains(component)
                    #expect(fixed || MD5.Digest(hex: component) != nil, "unexpected component \(component)")
                }
            }
            #expect(cache.totalSize == entryFiles(under: root).values.reduce(0, +))
        }
    }

    @Test func oneUserCannotReadSizeOrClearAnothersScope() throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            let alice = try CacheManager<ShopCache>(root: root, user: "alice")
            let bob = try CacheManager<ShopCache>(root: root, user: "bob")
            try alice.store("alice's orders", for: .userOrderList)
            try alice.store("alice's messages", for: .message)
            try alice.store("shared", for: .productList)

            #expect(try bob.value(String.self, for: .userOrderList) == nil)
            #expect(try bob.value(String.self, for: .message) == nil)
            #expect(!bob.contains(.userOrderList))
            #expect(bob.size(of: ShopCache.userOrderList) == 0)
            #expect(bob.size(of: CacheLocation.userDocuments) == 0)
            #expect(bob.totalSize == alice.size(of: CacheLocation.sharedCaches))

            try bob.clear(.user)
            try bob.clear(.location(.userCaches))
            try bob.clear(.type(.message))
            #expect(try alice.value(String.self, for: .userOrderList) == "alice's orders")
            #expect(try alice.value(String.self, for: .message) == "alice's messages")

            // A user id that merely looks like another user's folder name is hashed again.
            let impostor = try CacheManager<ShopCache>(root: root, user: MD5.hexDigest(of: "alice"))
            #expect(try impostor.value(String.self, for: .userOrderList) == nil)
        }
    }

    @Test func signOutClearsOnlyThatUsersScopes() throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            let alice = try CacheManager<ShopCache>(root: root, user: "alice")
            let bob = try CacheManager<ShopCache>(root: root, user: "bob")
            try alice.store("a", for: .userOrderList)
            try bob.store("b", for: .userOrderList)
            try alice.store("shared", for: .hots)
            let freed = try alice.clear(.user)
            #expect(freed > 0)
            #expect(alice.size(of: CacheLocation.userCaches) == 0)
            #expect(try alice.value(String.self, for: .hots) == "shared")
            #expect(try bob.value(String.self, for: .userOrderList) == "b")
        }
    }
}
