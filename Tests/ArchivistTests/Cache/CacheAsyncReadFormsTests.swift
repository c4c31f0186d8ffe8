import Foundation
import Testing

@testable import Archivist

/// Every blocking read has an `async` form that answers as the blocking one does.
@Suite struct CacheAsyncReadFormsTests {
    @Test func infoAndMaxAgeReadsAnswerFromAsyncCode() async throws {
        try await withTemporaryDirectory { dir in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir), user: "alice")
            try await cache.store("fresh", for: .hots)
            let info = try #require(try await cache.info(for: .hots))
            #expect(info.payloadSize > 0)
            #expect(info.typeName == ShopCache.hots.name)
            #expect(try await cache.info(for: .apiStrategy, parameter: "/v1/none") == nil)
            // a loaded test run may take minutes
            #expect(try await cache.value(String.self, for: .hots, maxAge: 86_400) == "fresh")
            #expect(try await cache.value(String.self, for: .hots, maxAge: -1) == nil)  // no entry is that young
        }
    }
}
