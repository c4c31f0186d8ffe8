import Foundation

@testable import Archivist

/// A model for cache tests.
struct Product: Codable, Archivable, Hashable, Sendable {
    var id: Int
    var name: String
    var price: Double
}

/// The seed's cache types, plus two with policies for expiry and byte-limit tests.
enum ShopCache: String, CacheType {
    case productList, userOrderList, hots, message, apiStrategy, shortLived, bounded

    var location: CacheLocation {
        switch self {
        case .productList, .hots, .apiStrategy, .shortLived, .bounded: .sharedCaches
        case .userOrderList: .userCaches
        case .message: .userDocuments
        }
    }

    var policy: CachePolicy {
        switch self {
        case .shortLived: CachePolicy(maxAge: -1)  // already expired when written
        case .bounded: CachePolicy(byteLimit: 4_000)
        case .message: CachePolicy(durability: .fileAndFolder)
        default: CachePolicy()
        }
    }
}
