import Foundation
import Testing

@testable import Archivist

/// A Codable model that forgot `Sendable`: it works, but never uses the memory tier.
final class UnsendableNote: Codable, Archivable {
    var text: String
    init(text: String) { self.text = text }
}

/// The same model, `Sendable`: it uses the memory tier.
struct SendableNote: Codable, Archivable, Sendable {
    var text: String
}

/// `Sendable` decides whether values use the memory tier; that choice is said where it is made
/// (doc comments, Guide, a debug-build note once per type), and no path of the API loses the
/// memory tier for a `Sendable` value.
@Suite struct CacheMemoryTierChoiceTests {
    #if DEBUG
    @Test func aNonSendableModelIsNotedOncePerTypeInDebugBuilds() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store(UnsendableNote(text: "a"), for: .hots)
            try cache.store(UnsendableNote(text: "b"), for: .hots)
            #expect(try cache.value(UnsendableNote.self, for: .hots)?.text == "b")
            try cache.store(SendableNote(text: "c"), for: .productList)  // Sendable: no note
            #expect(try cache.value(SendableNote.self, for: .productList)?.text == "c")
            let notes = MemoryTierSkipNotes.printed.withLock { $0 }
            #expect(notes.filter { $0.contains("UnsendableNote") }.count == 1)
            #expect(!notes.contains { $0.contains("SendableNote") })
        }
    }
    #endif

    /// The blocking fetch-or-fall-back form stored every value through the non-`Sendable`
    /// overload, so even a `Sendable` value fetched that way was dropped from memory.
    @Test func aSendableValueFetchedThroughTheFallbackFormIsKeptInMemory() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            let products = [Product(id: 1, name: "Tea", price: 3)]
            let fetched = try cache.value([Product].self, for: .productList) { products }
            #expect(fetched.value == products && !fetched.isFromCache)
            let url = try #require(try cache.info(for: .productList)).fileURL
            try FileManager.default.removeItem(at: url)  // behind the cache's back: only memory has it
            #expect(try cache.value([Product].self, for: .productList) == products)
        }
    }
}
