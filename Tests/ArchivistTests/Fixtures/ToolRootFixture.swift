import Foundation

@testable import Archivist

/// A cache root filled by the library for the tool's tests: shared, per-user and document
/// entries, parameters, an expired entry and a graph, with what each entry should list as.
struct ToolRootFixture {
    let folder: ScratchFolder
    let root: URL
    let cache: CacheManager<ShopCache>

    static let products = [Product(id: 1, name: "Tea", price: 3.5), Product(id: 2, name: "Cake", price: 4)]

    init() throws {
        folder = try ScratchFolder()
        root = folder.url.appendingPathComponent("root", isDirectory: true)
        cache = try CacheManager<ShopCache>(root: CacheRoot(directory: root), user: "alice")
        try cache.store(Self.products, for: .productList)
        try cache.store("orders strategy", for: .apiStrategy, parameter: "/v1/orders")
        try cache.store(Data(repeating: 0xAB, count: 10_000), for: .apiStrategy, parameter: "/v1/users")
        try cache.store("stale", for: .shortLived)  // expired as written
        try cache.store([Product(id: 3, name: "Pie", price: 5)], for: .userOrderList)
        try cache.store("hello", for: .message, expiry: .after(3_600))
        try cache.flush()
    }

    /// The entry file of `type` and `parameter`.
    func file(_ type: ShopCache, _ parameter: String? = nil) throws -> URL {
        guard let info = try cache.info(for: type, parameter: parameter) else {
            throw CacheError(.fileSystem, "no entry")
        }
        return info.fileURL
    }

    /// The size of the file at `url`.
    static func size(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? -1
    }
}
