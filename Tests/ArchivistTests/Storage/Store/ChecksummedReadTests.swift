import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Large entry files are checksummed piece by piece as they are read
/// (``AtomicFile/checksummedReadThreshold``), and the payload's checksum is derived from the
/// whole file's and the header's: the same entries read, the same damage caught.
@Suite struct ChecksummedReadTests {
    private static let threshold = AtomicFile.checksummedReadThreshold

    private static func value(_ count: Int) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
            for i in stride(from: 0, to: count, by: 509) { raw[i] = UInt8(truncatingIfNeeded: i >> 9) }
        }
        return data
    }

    private func key(_ parameter: String) -> DiskKey {
        DiskKey(folder: FolderPath([MD5.hexDigest(of: "f")]), name: EntryName(parameter: parameter))
    }

    /// The payload's checksum derived from the file's equals the direct one, and a damaged
    /// payload fails either way.
    @Test(arguments: [0, 1, 100, 70_000])
    func theDerivedPayloadChecksumIsTheDirectOne(count: Int) throws {
        let payload = Self.value(count) + Data([1, 2, 3])
        let header = EntryHeader(
            typeName: "t",
            parameter: "p",
            writeDate: Date(timeIntervalSince1970: 1),
            expiry: nil,
            payloadLength: payload.count,
            payloadChecksum: payload.withUnsafeBytes { CRC32C.checksum($0) }
        )
        var file = Data(header.encoded()) + payload
        func decode(_ file: Data, derived: Bool) throws {
            _ = try file.withUnsafeBytes { bytes in
                try EntryHeader.decode(
                    bytes,
                    payloadIncluded: true,
                    path: "/x",
                    fileChecksum: derived ? CRC32C.checksum(bytes) : nil
                )
            }
        }
        try decode(file, derived: true)
        try decode(file, derived: false)
        file[file.count - 2] ^= 0x10
        for derived in [true, false] {
            let error = #expect(throws: StorageError.self) { try decode(file, derived: derived) }
            #expect(error?.message.contains("payload checksum") == true)
        }
    }

    /// A file from the threshold on is read with its checksum, by pieces, short reads and
    /// `EINTR` included; a smaller one without.
    @Test func aLargeFileIsReadWithItsChecksum() throws {
        try withTemporaryDirectory { dir throws in
            let calls = Locked(0)
            var stingy = FileSystem.posix
            stingy.read = { fd, buffer, count in
                let n = calls.withLock {
                    $0 += 1
                    return $0
                }
                if n % 5 == 0 {
                    errno = EINTR
                    return -1
                }
                return FileSystem.posix.read(fd, buffer, min(count, 300_007))
            }
            for size in [Self.threshold - 1, Self.threshold, Self.threshold + AtomicFile.checksummedReadChunk + 3] {
                let path = dir.path + "/f\(size)"
                let bytes = Self.value(size)
                try AtomicFile.write(bytes, to: URL(fileURLWithPath: path), durability: .none)
                var identity: FileIdentity?
                defer { identity?.unpin(stingy) }
                let file = try #require(try AtomicFile.readBuffer(path: path, fileSystem: stingy, identity: &identity))
                #expect(file.bytes.count == size)
                #expect(Data(file.bytes) == bytes)
                let expected: UInt32? = size >= Self.threshold ? bytes.withUnsafeBytes { CRC32C.checksum($0) } : nil
                #expect(file.checksum == expected, "size \(size)")
            }
        }
    }

    /// A failed read of any piece of a large entry throws its typed error and leaves the
    /// entry in place (it is not judged corrupt).
    @Test(arguments: [(EIO, StorageError.Code.fileSystem), (EACCES, .permissionDenied)])
    func aFailedPieceReadThrowsAndKeepsTheEntry(failure: (Int32, StorageError.Code)) throws {
        let value = Self.value(Self.threshold + 5)
        for failing in [1, 2, 9] {  // the first piece, the second, the last (with the header's extra bytes)
            try withTemporaryDirectory { dir throws in
                let calls = Locked(0)
                let armed = Locked(false)
                var faulty = FileSystem.posix
                faulty.read = { fd, buffer, count in
                    if armed.withLock({ $0 })
                        && calls.withLock({
                            $0 += 1
                            return $0 == failing
                        })
                    {
                        errno = failure.0
                        return -1
                    }
                    return FileSystem.posix.read(fd, buffer, count)
                }
                let store = try DiskStore.open(at: dir, fileSystem: faulty)
                try store.write(value, to: key("p"), typeName: "t", parameter: "p", expiry: nil, durability: .none)
                armed.withLock { $0 = true }
                let error = #expect(throws: StorageError.self) {
                    try store.read(key("p"), typeName: "t", parameter: "p") { _ in () }
                }
                armed.withLock { $0 = false }
                #expect(error?.code == failure.1, "read \(failing)")
                #expect(error?.errno == failure.0)
                #expect(try store.read(key("p"), typeName: "t", parameter: "p") { $0.payload } == value)
            }
        }
    }

    /// A large entry reads back whole; one damaged byte in it is caught, and the entry removed.
    @Test func aDamagedByteInALargeEntryIsCaught() throws {
        try withTemporaryDirectory { dir throws in
            let store = try DiskStore.open(at: dir)
            let value = Self.value(Self.threshold + 12_345)
            try store.write(value, to: key("p"), typeName: "t", parameter: "p", expiry: nil, durability: .none)
            #expect(try store.read(key("p"), typeName: "t", parameter: "p") { $0.payload } == value)
            let path = store.path(of: key("p"))
            let fd = open(path, O_RDWR)
            try #require(fd >= 0)
            var byte: UInt8 = 0
            #expect(pread(fd, &byte, 1, off_t(Self.threshold / 2)) == 1)
            byte ^= 0x01
            #expect(pwrite(fd, &byte, 1, off_t(Self.threshold / 2)) == 1)
            close(fd)
            let error = #expect(throws: StorageError.self) {
                try store.read(key("p"), typeName: "t", parameter: "p") { _ in () }
            }
            #expect(error?.code == .corruptEntry)
            #expect(try store.read(key("p"), typeName: "t", parameter: "p") { _ in () } == nil)
        }
    }
}
