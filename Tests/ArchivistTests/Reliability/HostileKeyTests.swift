import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// A cache type whose name is any string, so hostile names can be tried as type names too.
struct NamedCacheType: CacheType {
    var name: String
    var location: CacheLocation
}

/// The hostile strings of ``CacheSecurityTests`` as cache type names: stored, read, sized and
/// cleared without any of them becoming a path component.
@Suite struct HostileKeyTests {
    @Test(arguments: CacheSecurityTests.hostileParameters.filter { !$0.isEmpty })  // an empty name: below
    func hostileTypeNamesStayInsideTheRoot(name: String) throws {
        try withTemporaryDirectory { dir throws in
            let root = dir.appendingPathComponent("root")
            let cache = try CacheManager<NamedCacheType>(root: CacheRoot(directory: root), user: name)
            let types = CacheLocation.allCases.map { NamedCacheType(name: name, location: $0) }
            for type in types {
                try cache.store(name, for: type, parameter: name)
                #expect(try cache.value(String.self, for: type, parameter: name) == name)
                #expect(cache.size(of: type) > 0)
            }
            #expect(allPaths(under: dir).allSatisfy { $0 == "root" || $0.hasPrefix("root/") })
            for path in allPaths(under: root) where !path.hasPrefix(".archivist") {
                for component in path.split(separator: "/") {
                    let fixed = ["shared-caches", "user-caches", "user-documents", "value"].contains(component)
                    #expect(fixed || MD5.Digest(hex: component) != nil, "unexpected component \(component)")
                }
            }
            #expect(cache.totalSize == entryFiles(under: root).values.reduce(0, +))
            for type in types { try cache.clear(.type(type)) }
            #expect(cache.totalSize == 0)
        }
    }

    /// An empty type name files nothing: every call that needs the type's folder throws
    /// `invalidTypeName` (it trapped before), the others answer as for an unknown type, and
    /// nothing is written under the root.
    @Test(arguments: CacheLocation.allCases)
    func emptyTypeNameThrowsATypedError(location: CacheLocation) throws {
        try withTemporaryDirectory { dir throws in
            let root = dir.appendingPathComponent("root")
            let cache = try CacheManager<NamedCacheType>(root: CacheRoot(directory: root), user: "u")
            let empty = NamedCacheType(name: "", location: location)
            func expectInvalid(_ body: () throws -> Void) {
                let error = #expect(throws: CacheError.self) { try body() }
                #expect(error?.code == .invalidTypeName)
                #expect(error?.description.contains("invalid type name") == true)
            }
            expectInvalid { try cache.store("x", for: empty, parameter: "p") }
            expectInvalid { try cache.store(Data([1, 2, 3]), for: empty) }
            expectInvalid { _ = try cache.value(String.self, for: empty, parameter: "p") }
            expectInvalid { _ = try cache.info(for: empty) }
            expectInvalid { _ = try cache.removeValue(for: empty, parameter: "p") }
            expectInvalid { try cache.clear(.type(empty)) }
            #expect(!cache.contains(empty, parameter: "p"))
            #expect(cache.size(of: empty) == 0)
            // A type with a name still works beside it.
            let named = NamedCacheType(name: "named", location: location)
            try cache.store("y", for: named)
            #expect(try cache.value(String.self, for: named) == "y")
            #expect(cache.totalSize == entryFiles(under: root).values.reduce(0, +))
        }
    }
}
