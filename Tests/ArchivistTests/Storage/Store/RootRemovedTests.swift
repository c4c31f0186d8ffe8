import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store whose root was removed (and made again at its path, here by the store's own next
/// write) is no longer the folder it opened: a miss below the removed folder is asked of the
/// path, so removes and clears act where its writes went — even when the new folder holds an
/// `.archivist` of its own, which must not make the removed folder look like the store's.
@Suite struct RootRemovedTests {
    private let key = DiskKey(
        folder: FolderPath(["shared-caches", MD5.hexDigest(of: "t")]),
        name: EntryName(parameter: "p")
    )

    private func write(_ store: DiskStore, _ byte: UInt8) throws {
        try store.write(
            Data(repeating: byte, count: 10),
            to: key,
            typeName: "t",
            parameter: "p",
            expiry: nil,
            durability: .none
        )
    }

    /// Opens a store, removes its root, writes once more (the root is made again at its path,
    /// with an `.archivist` folder as another process's store would make) and runs `body`.
    private func withRemadeRoot(_ body: (DiskStore, URL) throws -> Void) throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            let store = try DiskStore.open(at: rootURL)
            try #require(store.root != nil)
            try write(store, 1)
            store.waitForTrash()
            try FileManager.default.removeItem(at: rootURL)
            try write(store, 2)
            try FileManager.default.createDirectory(
                at: rootURL.appendingPathComponent(".archivist"),
                withIntermediateDirectories: true
            )
            try body(store, rootURL)
            store.waitForTrash()
        }
    }

    /// The removed folder is not the store's, whatever the path now holds.
    @Test func aRemovedRootIsNotTheStoresEvenWithAnInternalFolderAtItsPath() throws {
        try withRemadeRoot { store, _ throws in
            let root = try #require(store.root)
            #expect(!root.holdsStore(internalPath: store.rootPath + "/.archivist"))
            #expect(store.workingRoot == nil)
        }
    }

    @Test func aRemoveActsAtThePathOfARemovedRoot() throws {
        try withRemadeRoot { store, _ throws in
            #expect(FileManager.default.fileExists(atPath: store.path(of: key)))
            #expect(try store.remove(key))
            #expect(!FileManager.default.fileExists(atPath: store.path(of: key)))
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == nil)
        }
    }

    @Test func aClearActsAtThePathOfARemovedRoot() throws {
        try withRemadeRoot { store, rootURL throws in
            try store.clear([key.folder])
            store.waitForTrash()
            #expect(entryFiles(under: rootURL).isEmpty)
            #expect(try store.read(key, typeName: "t", parameter: "p") { $0.payload } == nil)
        }
    }
}
