import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// Damaged, foreign and unwritable entries are errors first, then misses; never garbage.
@Suite struct CacheCorruptionTests {
    enum Damage: String, CaseIterable { case truncated, zeroLength, bitFlip, foreign, misplaced }

    @Test(arguments: Damage.allCases)
    func damagedEntriesThrowOnceThenMiss(damage: Damage) throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            let writer = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
            try writer.store("orders", for: .apiStrategy, parameter: "/v1/orders")
            try writer.store("users", for: .apiStrategy, parameter: "/v1/users")
            let url = try #require(try writer.info(for: .apiStrategy, parameter: "/v1/orders")).fileURL
            var bytes = try Data(contentsOf: url)
            switch damage {
            case .truncated: bytes = bytes.prefix(bytes.count - 3)
            case .zeroLength: bytes = Data()
            case .bitFlip: bytes[bytes.count - 2] ^= 0x10
            case .foreign: bytes = Data("{\"not\": \"an entry\"}".utf8)
            case .misplaced:
                bytes = try Data(
                    contentsOf: try #require(try writer.info(for: .apiStrategy, parameter: "/v1/users")).fileURL
                )
            }
            try bytes.write(to: url)

            let reader = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
            let error = #expect(throws: CacheError.self) {
                try reader.value(String.self, for: .apiStrategy, parameter: "/v1/orders")
            }
            #expect(error?.code == (damage == .misplaced ? .entryMismatch : .corruptEntry))
            #expect(error?.typeName == "apiStrategy")
            #expect(error?.parameter == "/v1/orders")
            #expect(error?.fileURL?.standardizedFileURL.path == url.standardizedFileURL.path)
            #expect(try reader.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == nil)
            #expect(!FileManager.default.fileExists(atPath: url.path))
            #expect(reader.totalSize == entryFiles(under: dir).values.reduce(0, +))
            #expect(try reader.value(String.self, for: .apiStrategy, parameter: "/v1/users") == "users")
        }
    }

    /// A bad entry that cannot be removed (the unlink fails) is still on disk, so the size
    /// index keeps counting it: sizes stay equal to a walk of the files.
    @Test(arguments: FaultInjector.Mode.allCases)
    func aBadEntryThatCannotBeRemovedStaysCounted(mode: FaultInjector.Mode) throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            // The writer goes before the reader opens: stores are shared within a process, and
            // the reader's must be the one over the failing file system.
            let url = try { () throws -> URL in
                let writer = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
                try writer.store("orders", for: .apiStrategy, parameter: "/v1/orders")
                return try #require(try writer.info(for: .apiStrategy, parameter: "/v1/orders")).fileURL
            }()
            var bytes = try Data(contentsOf: url)
            bytes[bytes.count - 2] ^= 0x10
            try bytes.write(to: url)

            let injector = FaultInjector(mode: mode)
            let reader = try CacheManager<ShopCache>(
                root: root,
                user: nil,
                configuration: .init(memoryCountLimit: 0),
                fileSystem: injector.fileSystem
            )
            injector.arm(.init(operation: .unlink, n: 1, persistent: true, errno: EACCES))
            #expect(throws: CacheError.self) {
                try reader.value(String.self, for: .apiStrategy, parameter: "/v1/orders")
            }
            #expect(injector.disarm() >= 1)
            #expect(FileManager.default.fileExists(atPath: url.path))
            #expect(reader.totalSize == entryFiles(under: dir).values.reduce(0, +))
            #expect(reader.totalSize > 0)
        }
    }

    @Test func aReadOnlyFolderIsATypedErrorAndTheOldValueStays() throws {
        try withTemporaryDirectory { dir throws in
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir))
            try cache.store("old", for: .hots)
            let folder = try #require(try cache.info(for: .hots)).fileURL.deletingLastPathComponent()
            let undo = try makeReadOnly(folder)
            defer { undo() }
            try #require(!canCreateFile(in: folder), "could not make the folder read-only")
            let error = #expect(throws: CacheError.self) { try cache.store("new", for: .hots) }
            #expect(error?.code == .permissionDenied)
            #expect(error?.errno != nil)
            #expect(error?.typeName == "hots")
            #expect(try cache.value(String.self, for: .hots) == "old")
            let fresh = try CacheManager<ShopCache>(root: CacheRoot(directory: dir.appendingPathComponent(".")))
            #expect(try fresh.value(String.self, for: .hots) == "old")
        }
    }
}
