import Foundation
import Testing
@testable import Archivist

/// The buffer an entry file is read into: read whole, shared by the `Data` made from it, alive
/// as long as any such `Data` is.
@Suite struct FileBufferTests {
    @Test func aFileIsReadWholeAndSharedDataOutlivesTheBuffer() throws {
        try withTemporaryDirectory { dir throws in
            let path = dir.path + "/file"
            let bytes = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            try bytes.write(to: URL(fileURLWithPath: path))
            var identity: FileIdentity?
            defer { identity?.unpin(.posix) }
            var shared: Data?
            do {
                let buffer = try #require(try AtomicFile.readBuffer(path: path, identity: &identity))
                #expect(buffer.bytes.elementsEqual(bytes))
                shared = buffer.data(100..<9_000)
                #expect(buffer.data(5..<5).isEmpty)
            }
            // The buffer is only referenced by the Data now; its bytes are still there.
            #expect(shared == bytes[100..<9_000])
            shared?[0] ^= 0xFF   // a Data of its own: writing to it is allowed
            #expect(shared?.first == bytes[100] ^ 0xFF)
        }
    }

    @Test func emptyAndMissingFiles() throws {
        try withTemporaryDirectory { dir throws in
            let path = dir.path + "/empty"
            try Data().write(to: URL(fileURLWithPath: path))
            var identity: FileIdentity?
            defer { identity?.unpin(.posix) }
            let empty = try #require(try AtomicFile.readBuffer(path: path, identity: &identity))
            #expect(empty.bytes.isEmpty)
            #expect(empty.data(0..<0).isEmpty)
            var none: FileIdentity?
            #expect(try AtomicFile.readBuffer(path: dir.path + "/missing", identity: &none) == nil)
            #expect(none == nil)
        }
    }

    /// An entry's payload, as bytes and as a `Data`, is what was written after the header.
    @Test func anEntrysPayloadIsTheBytesAfterItsHeader() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let key = DiskKey(folder: FolderPath(["shared-caches", MD5.hexDigest(of: "t")]), name: EntryName(parameter: "p"))
            let payload = Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0) })
            try store.write(payload, to: key, typeName: "t", parameter: "p", expiry: nil, durability: .none)
            let read = try store.read(key, typeName: "t", parameter: "p", locking: false) { entry -> (Data, Data, Int) in
                (Data(entry.payloadBytes), entry.payload, entry.fileSize - entry.payloadStart)
            }
            #expect(read?.0 == payload)
            #expect(read?.1 == payload)
            #expect(read?.2 == payload.count)
        }
    }
}
