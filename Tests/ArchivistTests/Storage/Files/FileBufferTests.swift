import Foundation
import Testing

@testable import Archivist

/// The buffer an entry file is read into: read whole, shared by the `Data` made from it, alive
/// as long as any such `Data` is.
@Suite struct FileBufferTests {
    @Test func aFileIsReadWholeAndSharedDataOutlivesTheBuffer() throws {
        try withTemporaryDirectory { dir throws in
            let path = dir.path + "/file"
            let bytes = Data((0..<10_000).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 7) })
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
            shared?[0] ^= 0xFF  // a Data of its own: writing to it is allowed
            #expect(shared?.first == bytes[100] ^ 0xFF)
        }
    }

    /// Files of every size around the padding are read into memory that starts on a cache
    /// line, hold exactly the file's bytes, and free what was allocated (the `Data` keeps the
    /// buffer, not only its aligned start).
    @Test func theBytesStartOnACacheLine() throws {
        try withTemporaryDirectory { dir throws in
            var shared: [Data] = []
            for size in [1, 15, 16, 63, 64, 65, 4_096, 100_099] {
                let path = dir.path + "/file-\(size)"
                let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ size) })
                try bytes.write(to: URL(fileURLWithPath: path))
                var identity: FileIdentity?
                defer { identity?.unpin(.posix) }
                let buffer = try #require(try AtomicFile.readBuffer(path: path, identity: &identity))
                let start = try #require(buffer.bytes.baseAddress)
                #expect(UInt(bitPattern: start) % UInt(FileBuffer.alignment) == 0, "size \(size)")
                #expect(buffer.bytes.count == size)
                #expect(buffer.bytes.elementsEqual(bytes), "size \(size)")
                shared.append(buffer.data(0..<size))
            }
            for (data, size) in zip(shared, [1, 15, 16, 63, 64, 65, 4_096, 100_099]) {
                #expect(data == Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ size) }))
            }
        }
    }

    #if os(Linux)
    /// A large file is read into memory that starts on a huge-page boundary (memory the kernel
    /// can back with transparent huge pages), holds exactly the file's bytes with its checksum,
    /// and stays valid in a `Data` that outlives the buffer.
    @Test func aLargeFileIsReadIntoHugePageAlignedMemory() throws {
        try withTemporaryDirectory { dir throws in
            let size = FileBuffer.hugePageThreshold + 12_345
            let path = dir.path + "/large"
            let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ $0 >> 13) })
            try bytes.write(to: URL(fileURLWithPath: path))
            var identity: FileIdentity?
            defer { identity?.unpin(.posix) }
            var shared: Data?
            do {
                let buffer = try #require(try AtomicFile.readBuffer(path: path, identity: &identity))
                let start = try #require(buffer.bytes.baseAddress)
                #expect(UInt(bitPattern: start) % UInt(FileBuffer.hugePageSize) == 0)
                #expect(buffer.bytes.count == size)
                #expect(buffer.bytes.elementsEqual(bytes))
                shared = buffer.data(1..<size)
            }
            #expect(shared == bytes[1..<size])
        }
    }
    #endif

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
            let key = DiskKey(
                folder: FolderPath(["shared-caches", MD5.hexDigest(of: "t")]),
                name: EntryName(parameter: "p")
            )
            let payload = Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0) })
            try store.write(payload, to: key, typeName: "t", parameter: "p", expiry: nil, durability: .none)
            let read = try store.read(key, typeName: "t", parameter: "p", locking: false) {
                entry -> (Data, Data, Int) in
                (Data(entry.payloadBytes), entry.payload, entry.fileSize - entry.payloadStart)
            }
            #expect(read?.0 == payload)
            #expect(read?.1 == payload)
            #expect(read?.2 == payload.count)
        }
    }
}
