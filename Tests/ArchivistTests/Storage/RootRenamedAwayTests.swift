import ArchivistTestSupport
import Foundation
import Testing
@testable import Archivist

/// A store whose root is renamed away while it is open. Its reads open entry files through the
/// root's descriptor (the renamed folder; a miss there is final while the folder is linked),
/// but a write whose folder the renamed root lacks makes the folder and the file by the path,
/// and a remove unlinks by the path: so the store does not read what it wrote or removed.
/// Known (review5); mending it means removes, clears and folder creation relative to the
/// root's descriptor too, or a check that the root is still at its path. When it is mended,
/// these known issues stop being recorded and the tests fail: turn them into plain expectations.
@Suite struct RootRenamedAwayTests {
    private let key = DiskKey(folder: FolderPath(["shared-caches", MD5.hexDigest(of: "t")]), name: EntryName(parameter: "p"))

    @Test func aWriteToAFolderTheRenamedRootLacksIsNotRead() throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            let store = try DiskStore.open(at: rootURL)
            try #require(store.root != nil)
            try FileManager.default.moveItem(at: rootURL, to: dir.appendingPathComponent("moved"))
            try store.write(Data(repeating: 3, count: 30), to: key, typeName: "t", parameter: "p", expiry: nil, durability: .none)
            let read = try store.read(key, typeName: "t", parameter: "p") { $0.payload }
            #if os(Linux)
            withKnownIssue("the write went by the path, the read's miss through the descriptor is final") {
                #expect(read == Data(repeating: 3, count: 30))
            }
            #else
            #expect(read == Data(repeating: 3, count: 30))
            #endif
        }
    }

    @Test func aRemovedEntryOfTheRenamedRootIsStillRead() throws {
        try withTemporaryDirectory { dir throws in
            let rootURL = dir.appendingPathComponent("root")
            let store = try DiskStore.open(at: rootURL)
            try #require(store.root != nil)
            try store.write(Data(repeating: 1, count: 10), to: key, typeName: "t", parameter: "p", expiry: nil, durability: .none)
            try FileManager.default.moveItem(at: rootURL, to: dir.appendingPathComponent("moved"))
            _ = try store.remove(key)
            let read = try store.read(key, typeName: "t", parameter: "p") { $0.payload }
            withKnownIssue("the remove went by the path, the read through the descriptor finds the file") {
                #expect(read == nil)
            }
        }
    }
}
