import Foundation
import Testing

@testable import Archivist

/// A cache type whose own `==` and hash ignore its name: to the manager's dictionary of type
/// folders, every such type of one location is the same key.
private struct NameBlindCache: CacheType {
    var name: String
    var location: CacheLocation
    static func == (a: Self, b: Self) -> Bool { a.location == b.location }
    func hash(into hasher: inout Hasher) { hasher.combine(location) }
}

/// The folder a manager finds for a type (the slot of the type found last, then the dictionary
/// of all, then MD5) is always the one made from the type's name bytes, location and user, in
/// any order of lookups: never another type's, never one made from a former name.
@Suite struct CacheTypeFolderTests {
    static let names = ["orders", "caf\u{E9}", "cafe\u{301}", "ordersX", "x"]

    /// What `folder(for:)` must answer, computed from scratch.
    static func expectedFolder(name: String, location: CacheLocation, user: String) -> FolderPath {
        FolderPath(
            [location.folderName] + (location.isUserScoped ? [MD5.hexDigest(of: user)] : []) + [MD5.hexDigest(of: name)]
        )
    }

    @Test func everyLookupOrderGivesTheFolderOfTheNameAndLocation() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<NamedCacheType>(root: CacheRoot(directory: dir), user: "u")
            let types = Self.names.flatMap { name in
                CacheLocation.allCases.map { NamedCacheType(name: name, location: $0) }
            }
            // Each type after each other type (the slot holds the one before), twice over.
            for _ in 0..<2 {
                for first in types {
                    for second in types {
                        for type in [first, second, second] {
                            #expect(
                                try cache.folder(for: type)
                                    == Self.expectedFolder(name: type.name, location: type.location, user: "u")
                            )
                        }
                    }
                }
            }
        }
    }

    @Test func typesEqualUnderTheirOwnEqualityKeepTheirOwnFolders() throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            let cache = try CacheManager<NameBlindCache>(root: root, configuration: .init(memoryCountLimit: 0))
            let types = Self.names.map { NameBlindCache(name: $0, location: .sharedCaches) }
            #expect(types.dropFirst().allSatisfy { $0 == types[0] })
            for (i, type) in types.enumerated() { try cache.store("value \(i)", for: type) }
            for _ in 0..<2 {
                for (i, type) in types.enumerated().reversed() {
                    #expect(
                        try cache.folder(for: type)
                            == Self.expectedFolder(name: type.name, location: .sharedCaches, user: "")
                    )
                    #expect(try cache.value(String.self, for: type) == "value \(i)")
                }
            }
            #expect(cache.usage(of: .sharedCaches).entryCount == types.count)
        }
    }
}
