import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// A cache type whose name is whatever the test needs.
struct NamedCache: CacheType {
    var name: String
    var location: CacheLocation { .sharedCaches }
}

/// Names the entry header cannot record are refused by `store` with a typed error, never
/// stored and then lost as `corruptEntry` on the next read. Writer and reader share one limit.
@Suite struct CacheKeyLengthTests {
    @Test func aParameterOverTheLimitIsRefusedAtStore() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(
                root: CacheRoot(directory: dir),
                configuration: .init(memoryCountLimit: 0)
            )
            let tooLong = String(repeating: "p", count: EntryHeader.maxParameterLength + 1)
            let error = #expect(throws: CacheError.self) { try cache.store("v", for: .apiStrategy, parameter: tooLong) }
            #expect(error?.code == .keyTooLong)
            #expect(cache.totalSize == 0)
            #expect(entryFiles(under: dir).isEmpty)
        }
    }

    @Test func aTypeNameOverTheLimitIsRefusedAtStore() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<NamedCache>(
                root: CacheRoot(directory: dir),
                configuration: .init(memoryCountLimit: 0)
            )
            let type = NamedCache(name: String(repeating: "n", count: EntryHeader.maxTypeNameLength + 1))
            let error = #expect(throws: CacheError.self) { try cache.store("v", for: type) }
            #expect(error?.code == .keyTooLong)
            #expect(entryFiles(under: dir).isEmpty)
        }
    }

    /// Exactly at the limits, with multi-byte characters (the limits count UTF-8 bytes), an
    /// entry round-trips through a freshly opened store, which reads it from disk. (Through
    /// the store, so the test does not spend seconds hashing 16 MiB with a debug-built MD5.)
    @Test func namesAtTheLimitsReadBack() throws {
        try withTemporaryDirectory { dir throws in
            let name = String(repeating: "é", count: EntryHeader.maxTypeNameLength / 2)
            let parameter = String(repeating: "é", count: EntryHeader.maxParameterLength / 2)
            let key = DiskKey(folder: FolderPath(["limits"]), name: .single)
            try DiskStore.open(at: dir).write(
                Data("at the limit".utf8),
                to: key,
                typeName: name,
                parameter: parameter,
                expiry: nil,
                durability: .none
            )
            let bytes = try #require(try AtomicFile.read(path: dir.path + "/limits/value"))
            let (header, length) = try bytes.withUnsafeBytes {
                try EntryHeader.decode($0, payloadIncluded: true, path: "value")
            }
            #expect(header.typeName == name && header.parameter == parameter)
            #expect(Data(bytes[length...]) == Data("at the limit".utf8))
            let error = #expect(throws: StorageError.self) {
                try DiskStore.open(at: dir).write(
                    Data(),
                    to: key,
                    typeName: name + "e",
                    parameter: parameter,
                    expiry: nil,
                    durability: .none
                )
            }
            #expect(error?.code == .keyTooLong)
        }
    }
}
