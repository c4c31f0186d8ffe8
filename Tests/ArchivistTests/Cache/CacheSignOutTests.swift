import Foundation
import Testing

@testable import Archivist

/// Sign-out: `clear(.user)` takes the user's values out of every reader's reach — the memory
/// tier of the manager that cleared, another manager of the same user (its memory tier
/// included), a manager opened afterwards — and leaves the shared caches and other users alone.
@Suite struct CacheSignOutTests {
    @Test func clearUserLeavesNoValueOfTheUserInAnyManager() throws {
        let folder = try ScratchFolder()
        let root = CacheRoot(directory: folder.url)
        let alice = try CacheManager<ShopCache>(root: root, user: "alice")
        let aliceElsewhere = try CacheManager<ShopCache>(root: root, user: "alice")
        let bob = try CacheManager<ShopCache>(root: root, user: "bob")
        let orders = [Product(id: 1, name: "alice's order", price: 9)]
        try alice.store(orders, for: .userOrderList)
        try alice.store("alice's letter", for: .message)
        try alice.store([Product(id: 2, name: "shared", price: 1)], for: .productList)
        try bob.store([Product(id: 3, name: "bob's order", price: 5)], for: .userOrderList)
        // Every value of alice's is read through both of her managers: each memory tier holds it.
        for manager in [alice, aliceElsewhere] {
            #expect(try manager.value([Product].self, for: .userOrderList) == orders)
            #expect(try manager.value(String.self, for: .message) == "alice's letter")
        }

        try alice.clear(.user)

        for (name, manager) in [
            ("the manager that cleared", alice), ("another manager of alice", aliceElsewhere),
            ("a manager opened after the clear", try CacheManager<ShopCache>(root: root, user: "alice")),
        ] {
            #expect(try manager.value([Product].self, for: .userOrderList) == nil, "\(name) still serves her orders")
            #expect(try manager.value(String.self, for: .message) == nil, "\(name) still serves her letter")
            #expect(!manager.contains(.userOrderList) && !manager.contains(.message), "\(name)")
            #expect(
                try manager.value([Product].self, for: .productList)?.first?.name == "shared",
                "\(name): shared caches stay"
            )
        }
        #expect(
            try bob.value([Product].self, for: .userOrderList)?.first?.name == "bob's order",
            "another user's values stay"
        )
    }
}
