// What Caching.md's snippets take for granted. Never run: only compiled.
import Archivist
import Foundation

struct Product: Codable, Archivable, Sendable {   // as in Getting Started
    var id: Int
    var name: String
    var price: Decimal?
}

struct API: Sendable { func hots() async throws -> [Product] { [] } }

var products: [Product] { [] }
var api: API { API() }
var cache: CacheManager<ShopCache> { fatalError() }
func showOfflineBanner(_ error: (any Error)? = nil) {}
