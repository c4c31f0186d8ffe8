import ArchivistTestSupport
import Foundation
import Testing
@testable import Archivist
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Large payloads checksummed chunk by chunk as they are written, the header last
/// (`DiskStore+ChecksumWhileWriting.swift`): the same file byte for byte as one `writev` of a
/// payload whose checksum was known, the same errors, nothing left behind on failure; small
/// payloads still one `writev`.
@Suite struct ChecksumWhileWritingTests {
    private static let chunk = DiskStore.checksumChunkSize
    private static let typeName = "blobs"
    private static let date = Date(timeIntervalSince1970: 1_800_000_000)

    private func key(_ parameter: String) -> DiskKey {
        DiskKey(folder: FolderPath([MD5.hexDigest(of: "f")]), name: EntryName(parameter: parameter))
    }

    private static func value(_ count: Int, salt: UInt8 = 0) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt8.self)
            for i in 0..<count { words[i] = UInt8(truncatingIfNeeded: i &* 31 &+ i >> 9) &+ salt }
        }
        return data
    }

    /// Writes `value` at `key` with its checksum known (the one-`writev` path) or computed
    /// while writing; returns the entry file's bytes.
    @discardableResult
    private func write(_ store: DiskStore, _ value: Data, at parameter: String, whileWriting: Bool) throws -> Data {
        let key = key(parameter)
        _ = try value.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let none = UnsafeRawBufferPointer(start: nil, count: 0)
            let checksum: DiskStore.PayloadChecksum = whileWriting ? .ofValue : .known(CRC32C.checksum(raw))
            try store.write(pieces: (none, raw, none), to: key, typeName: Self.typeName, parameter: parameter,
                            writeDate: Self.date, expiry: nil, durability: .file, checksum: checksum)
        }
        return try Data(contentsOf: URL(fileURLWithPath: store.path(of: key)))
    }

    /// Sizes at and around the chunk boundaries, which fall at file offsets that are multiples
    /// of the chunk size (after the header): the first chunk is shorter.
    static var boundarySizes: [Int] {
        let header = EntryHeader.encodedCount(typeName: typeName, parameter: "p")
        return [0, 1, chunk - header - 1, chunk - header, chunk - header + 1, chunk - 1, chunk, chunk + 1,
                2 * chunk - header, 2 * chunk - 1, 2 * chunk + 1, 3 * chunk + 7]
    }

    @Test(arguments: boundarySizes)
    func theFileIsTheOneAKnownChecksumWrites(count: Int) throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let value = Self.value(count)
            let streamed = try write(store, value, at: "p", whileWriting: true)
            let known = try write(store, value, at: "q", whileWriting: false)
            // The names differ by one byte ("p", "q"), so the header's own checksum does too.
            let header = EntryHeader.encodedCount(typeName: Self.typeName, parameter: "p")
            #expect(streamed.count == known.count)
            #expect(streamed[40..<44] == known[40..<44])   // the payload's checksum
            #expect(streamed[header...] == known[header...])
            let expected = EntryHeader(typeName: Self.typeName, parameter: "p", writeDate: Self.date, expiry: nil,
                                       payloadLength: count, payloadChecksum: value.withUnsafeBytes { CRC32C.checksum($0) })
            #expect(streamed == Data(expected.encoded()) + value)
            #expect(try store.read(key("p"), typeName: Self.typeName, parameter: "p") { $0.payload } == value)
            #expect(temporaries(under: dir).isEmpty)
        }
    }

    /// A root `Data` archive's prefix completed by the write (as `CacheManager` hands it over)
    /// gives the file of the prefix computed first.
    @Test func anArchivePrefixCompletedByTheWriteIsTheEagerOne() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let value = Self.value(2 * Self.chunk + 3)
            let archive = try Archive.encode(value)
            let deferred = try #require(Archive.dataPieces(deferringChecksumOfCount: value.count, options: ArchiveOptions()))
            var prefix = deferred.withPrefix { Array($0) }
            _ = try prefix.withUnsafeMutableBytes { prefix in
                try value.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
                    try Archive.DataPieces.suffix.withUnsafeBytes { suffix in
                        try store.write(pieces: (UnsafeRawBufferPointer(prefix), raw, suffix), to: key("p"), typeName: Self.typeName,
                                        parameter: "p", writeDate: Self.date, expiry: nil, durability: .none, checksum: .ofRootDataArchive(prefix: prefix))
                    }
                }
            }
            let file = try Data(contentsOf: URL(fileURLWithPath: store.path(of: key("p"))))
            let header = EntryHeader(typeName: Self.typeName, parameter: "p", writeDate: Self.date, expiry: nil,
                                     payloadLength: archive.count, payloadChecksum: archive.withUnsafeBytes { CRC32C.checksum($0) })
            #expect(file == Data(header.encoded()) + archive)
        }
    }

    /// The `Data` form takes the chunked path from the threshold on, one `writev` below it.
    @Test(arguments: [DiskStore.checksumWhileWritingThreshold - 1, DiskStore.checksumWhileWritingThreshold])
    func theDataFormSwitchesAtTheThreshold(count: Int) throws {
        try withTemporaryDirectory { dir throws in
            let calls = Locked((writev: 0, pwritev: 0))
            var counting = FileSystem.posix
            counting.writev = { fd, vectors, n in calls.withLock { $0.writev += 1 }; return FileSystem.posix.writev(fd, vectors, n) }
            counting.pwritev = { fd, vectors, n, at in calls.withLock { $0.pwritev += 1 }; return FileSystem.posix.pwritev(fd, vectors, n, at) }
            let store = try DiskStore.open(at: dir, fileSystem: counting)
            let value = Self.value(count)
            try store.write(value, to: key("p"), typeName: Self.typeName, parameter: "p", writeDate: Self.date, expiry: nil, durability: .none)
            let streamed = count >= DiskStore.checksumWhileWritingThreshold
            let seen = calls.withLock { $0 }
            #expect(seen.writev == (streamed ? 0 : 1))
            #expect(seen.pwritev == (streamed ? 2 : 0))   // the last chunk with nothing after it, the header
            let header = EntryHeader(typeName: Self.typeName, parameter: "p", writeDate: Self.date, expiry: nil,
                                     payloadLength: count, payloadChecksum: value.withUnsafeBytes { CRC32C.checksum($0) })
            #expect(try Data(contentsOf: URL(fileURLWithPath: store.path(of: key("p")))) == Data(header.encoded()) + value)
        }
    }

    /// Short positioned writes and `EINTR` are retried to the same file.
    @Test func shortAndInterruptedPositionedWritesComplete() throws {
        try withTemporaryDirectory { dir throws in
            let calls = Locked(0)
            var stingy = FileSystem.posix
            stingy.pwrite = { fd, buffer, count, offset in
                let n = calls.withLock { $0 += 1; return $0 }
                if n % 3 == 0 { errno = EINTR; return -1 }
                return FileSystem.posix.pwrite(fd, buffer, min(count, 100_003), offset)
            }
            stingy.pwritev = { fd, vectors, count, offset in
                let n = calls.withLock { $0 += 1; return $0 }
                if n % 3 == 0 { errno = EINTR; return -1 }
                let first = UnsafeBufferPointer(start: vectors, count: Int(count)).first { $0.iov_len > 0 }!
                return FileSystem.posix.pwrite(fd, first.iov_base!, min(first.iov_len, 5), offset)
            }
            let store = try DiskStore.open(at: dir, fileSystem: stingy)
            let value = Self.value(Self.chunk + 5_000)
            let file = try write(store, value, at: "p", whileWriting: true)
            let header = EntryHeader(typeName: Self.typeName, parameter: "p", writeDate: Self.date, expiry: nil,
                                     payloadLength: value.count, payloadChecksum: value.withUnsafeBytes { CRC32C.checksum($0) })
            #expect(file == Data(header.encoded()) + value)
            #expect(calls.withLock { $0 } > 20)
        }
    }

    /// Any failed positioned write — a chunk's or the header's — throws the typed error, keeps
    /// the previous entry and leaves no temporary.
    @Test(arguments: [(ENOSPC, CacheError.Code.diskFull), (EIO, .fileSystem), (EACCES, .permissionDenied)])
    func aFailedPositionedWriteKeepsThePreviousEntry(failure: (Int32, CacheError.Code)) throws {
        let value = Self.value(2 * Self.chunk + 10)
        for failing in 1...4 {   // the first chunk, the second, the last (with nothing after it), the header
            try withTemporaryDirectory { dir throws in
                let calls = Locked(0), armed = Locked(false)
                var faulty = FileSystem.posix
                @Sendable func fails() -> Bool { armed.withLock { $0 } && calls.withLock { $0 += 1; return $0 == failing } }
                faulty.pwrite = { fd, buffer, count, offset in
                    fails() ? { errno = failure.0; return -1 }() : FileSystem.posix.pwrite(fd, buffer, count, offset)
                }
                faulty.pwritev = { fd, vectors, count, offset in
                    fails() ? { errno = failure.0; return -1 }() : FileSystem.posix.pwritev(fd, vectors, count, offset)
                }
                let store = try DiskStore.open(at: dir, fileSystem: faulty)
                let old = try write(store, Self.value(100, salt: 1), at: "p", whileWriting: false)
                armed.withLock { $0 = true }
                let error = #expect(throws: CacheError.self) { try write(store, value, at: "p", whileWriting: true) }
                armed.withLock { $0 = false }
                #expect(error?.code == failure.1, "call \(failing)")
                #expect(error?.errno == failure.0)
                #expect(try Data(contentsOf: URL(fileURLWithPath: store.path(of: key("p")))) == old)
                #expect(temporaries(under: dir).isEmpty)
                #expect(store.sizes(of: key("p"))?.logical == Int64(old.count))
            }
        }
    }
}
