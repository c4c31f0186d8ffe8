// What the FoundationBridge article's snippets take for granted. Never run: only compiled.
import Archivist
import ArchivistKeyedArchive
import Foundation

final class Order: NSObject, NSSecureCoding, Archivable {   // as in the overview
    static var supportsSecureCoding: Bool { true }
    let number: String

    init(number: String) { self.number = number }

    func encode(with coder: NSCoder) { coder.encode(number as NSString, forKey: "number") }

    init?(coder: NSCoder) {
        guard let number = coder.decodeObject(of: NSString.self, forKey: "number") else { return nil }
        self.number = number as String
    }
}

final class LineItem: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    override init() {}
    func encode(with coder: NSCoder) {}
    init?(coder: NSCoder) {}
}

struct Bookmark: KeyedArchiveEncodable, KeyedArchiveDecodable {   // as in docs/FoundationBridge.md
    var url: String
    var visits: Int
    var keyedArchiveClassChain: [String] { ["MyApp.Bookmark", "NSObject"] }

    func encode(with archiver: KeyedArchiveArchiver) throws {
        try archiver.encodeObject(url, forKey: "url")
        archiver.encode(visits, forKey: "visits")
    }

    init(from unarchiver: KeyedArchiveUnarchiver) throws {
        url = try unarchiver.decodeRequiredObject(of: String.self, forKey: "url")
        visits = try unarchiver.decodeInteger(forKey: "visits")
    }
}

enum ShopCache: String, CacheType {
    case productList, userOrderList, hots, message, apiStrategy
    var location: CacheLocation { .sharedCaches }
}

var order: Order { Order(number: "A-1") }
var orders: [Order] { [] }
var data: Data { Data() }
var cache: CacheManager<ShopCache> { fatalError() }
