import Foundation
import Testing

@testable import Archivist

/// One rule for keys everywhere — the memory tier, the folder cache, the file names (MD5 of
/// the UTF-8 bytes), the entry header, the store registry: keys are the same only when their
/// UTF-8 bytes are. Canonically equivalent spellings, equal under Swift's `==`, are two keys.
@Suite struct CacheKeyBytesTests {
    static let precomposed = "caf\u{E9}"  // é as one scalar
    static let decomposed = "cafe\u{301}"  // e + combining acute accent

    @Test func twoSpellingsOfAParameterAreTwoEntriesInMemoryAndOnDisk() throws {
        #expect(Self.precomposed == Self.decomposed)  // what Swift's String equality says
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            let cache = try CacheManager<ShopCache>(root: root)
            try cache.store("first", for: .apiStrategy, parameter: Self.precomposed)
            try cache.store("second", for: .apiStrategy, parameter: Self.decomposed)
            #expect(cache.usage(of: ShopCache.apiStrategy).entryCount == 2)
            // The writing process (memory tier) and a fresh one (disk) agree.
            let fresh = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
            for reader in [cache, fresh] {
                #expect(try reader.value(String.self, for: .apiStrategy, parameter: Self.precomposed) == "first")
                #expect(try reader.value(String.self, for: .apiStrategy, parameter: Self.decomposed) == "second")
            }
            try cache.removeValue(for: .apiStrategy, parameter: Self.decomposed)
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: Self.precomposed) == "first")
            #expect(try cache.value(String.self, for: .apiStrategy, parameter: Self.decomposed) == nil)
        }
    }

    @Test func twoSpellingsOfATypeNameAreTwoTypes() throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            let cache = try CacheManager<NamedCache>(root: root)
            let first = NamedCache(name: Self.precomposed)
            let second = NamedCache(name: Self.decomposed)
            #expect(first == second)  // the type's own (synthesized) equality
            try cache.store("first", for: first)
            try cache.store("second", for: second)
            let fresh = try CacheManager<NamedCache>(root: root, configuration: .init(memoryCountLimit: 0))
            for reader in [cache, fresh] {
                #expect(try reader.value(String.self, for: first) == "first")
                #expect(try reader.value(String.self, for: second) == "second")
            }
            try cache.clear(.type(second))
            #expect(try cache.value(String.self, for: first) == "first")
            #expect(try cache.value(String.self, for: second) == nil)
        }
    }

    @Test func twoSpellingsOfARootPathAreTwoStores() throws {
        try withTemporaryDirectory { dir throws in
            let one = try DiskStore.open(at: dir.appendingPathComponent(Self.precomposed))
            let two = try DiskStore.open(at: dir.appendingPathComponent(Self.decomposed))
            #expect(one !== two)
            #expect(
                one.rootPath.utf8.elementsEqual(
                    dir.appendingPathComponent(Self.precomposed).standardizedFileURL.path.utf8
                )
            )
            #expect(
                two.rootPath.utf8.elementsEqual(
                    dir.appendingPathComponent(Self.decomposed).standardizedFileURL.path.utf8
                )
            )
        }
    }
}
