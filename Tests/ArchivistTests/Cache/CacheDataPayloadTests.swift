import ArchivistTestSupport
import Foundation
import Testing
@testable import Archivist

/// A `Data` value is written as the bytes of its archive around the caller's bytes (no copy
/// into an archive buffer) and read back sharing the entry's buffer: the files must stay byte
/// for byte what the encoder writes, and damage must still be caught.
@Suite struct CacheDataPayloadTests {
    /// Bytes that are not all alike, so a misplaced or dropped byte shows.
    static func sample(_ count: Int, seed: Int = 7) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131) ^ ($0 >> 7) &+ seed) })
    }

    /// Sizes around every length whose varint (value count, body length, total) grows a byte.
    static let sizes: [Int] = [0, 1, 14, 15, 100, 121, 122, 123, 124, 125, 126, 127, 128, 4095, 4096]
        + Array(16_360...16_390) + [100_000] + Array(2_097_130...2_097_155).filter { $0 % 5 == 0 }

    @Test func thePiecesAreTheEncodersArchive() throws {
        for size in Self.sizes {
            let data = Self.sample(size)
            let archive = try Archive.encode(data)
            let pieces = try #require(data.withUnsafeBytes { Archive.dataPieces(of: $0, options: ArchiveOptions()) })
            #expect(pieces.prefix + data + Archive.DataPieces.suffix == archive, "size \(size)")
            #expect(pieces.count == archive.count, "size \(size)")
            #expect(pieces.checksum == CRC32C.checksum(archive), "size \(size)")
            #expect(pieces.checksum == Archive.checksumOfEncoded(archive), "size \(size)")
        }
    }

    @Test func rootDataReadsTheEncodersArchive() throws {
        var verified = ArchiveOptions()
        var unverified = ArchiveOptions()
        unverified.verifiesChecksum = false
        for size in Self.sizes {
            let data = Self.sample(size)
            let archive = try Archive.encode(data)
            for sharing in [false, true] {
                #expect(Archive.rootData(of: archive, sharing: sharing, options: verified) == data, "size \(size)")
                #expect(Archive.rootData(of: archive, sharing: sharing, options: unverified) == data, "size \(size)")
            }
            // A slice of a larger buffer, as the cache hands over an entry's payload.
            let framed = Data([1, 2, 3]) + archive
            #expect(Archive.rootData(of: framed[(framed.startIndex + 3)...], sharing: true, options: verified) == data)
        }
        // Other roots, a damaged checksum and too small limits are left to the decoder.
        #expect(Archive.rootData(of: try Archive.encode("text"), sharing: true, options: verified) == nil)
        #expect(Archive.rootData(of: try Archive.encode([UInt8](repeating: 1, count: 10)), sharing: true, options: verified) == nil)
        var damaged = try Archive.encode(Self.sample(10_000))
        damaged[damaged.count / 2] ^= 0x01
        #expect(Archive.rootData(of: damaged, sharing: true, options: verified) == nil)
        verified.limits.maxTotalBytes = 1_000
        #expect(Archive.rootData(of: try Archive.encode(Self.sample(2_000)), sharing: true, options: verified) == nil)
    }

    @Test func aLargeDataRoundTripsAndItsFileIsTheEncodersFormat() throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            let writer = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
            let sizes = [100_000, 1 << 20, 5]
            for (i, size) in sizes.enumerated() {
                try writer.store(Self.sample(size, seed: i), for: .hots, parameter: "blob-\(i)")
            }
            let reader = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
            for (i, size) in sizes.enumerated() {
                let expected = Self.sample(size, seed: i)
                #expect(try reader.value(Data.self, for: .hots, parameter: "blob-\(i)") == expected)
                // The file: the entry header, then exactly what `Archive.encode` returns.
                let url = try #require(try reader.info(for: .hots, parameter: "blob-\(i)")).fileURL
                let file = try Data(contentsOf: url)
                let (header, length) = try file.withUnsafeBytes {
                    try EntryHeader.decode($0, payloadIncluded: true, path: url.path)
                }
                #expect(file.dropFirst(length) == (try Archive.encode(expected)))
                #expect(header.payloadChecksum == CRC32C.checksum(try Archive.encode(expected)))
            }
            #expect(writer.totalSize == entryFiles(under: dir).values.reduce(0, +))
        }
    }

    /// A `Data` read from disk shares the file's buffer, so the memory tier counts the buffer.
    @Test func theMemoryTierCountsTheFileBufferASharedDataKeepsAlive() throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            let writer = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
            let data = Self.sample(100_000)
            try writer.store(data, for: .hots, parameter: "blob")
            let reader = try CacheManager<ShopCache>(root: root)
            #expect(try reader.value(Data.self, for: .hots, parameter: "blob") == data)
            let fileSize = try #require(entryFiles(under: dir).values.first)
            #expect(try #require(reader.memory).cache.totalCost == fileSize)
        }
    }

    @Test func aCorruptedByteInALargeDatasPayloadIsDetected() throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            let writer = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
            let data = Self.sample(100_000)
            try writer.store(data, for: .hots, parameter: "blob")
            try writer.store(Self.sample(200_000), for: .hots, parameter: "other")
            let url = try #require(try writer.info(for: .hots, parameter: "blob")).fileURL
            var bytes = try Data(contentsOf: url)
            bytes[bytes.count - 50_000] ^= 0x04   // inside the value's bytes
            try bytes.write(to: url)

            let reader = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
            let error = #expect(throws: CacheError.self) { try reader.value(Data.self, for: .hots, parameter: "blob") }
            #expect(error?.code == .corruptEntry)
            #expect(try reader.value(Data.self, for: .hots, parameter: "blob") == nil)
            #expect(!FileManager.default.fileExists(atPath: url.path))
            #expect(try reader.value(Data.self, for: .hots, parameter: "other") == Self.sample(200_000))
            #expect(reader.totalSize == entryFiles(under: dir).values.reduce(0, +))
        }
    }

    /// A `Data` read back shares the buffer its file was read into; changing it must change
    /// nothing else: not the memory tier's copy, not the next read.
    @Test func aDataReadBackIsAValueOfItsOwn() throws {
        try withTemporaryDirectory { dir throws in
            let data = Self.sample(50_000)
            for memoryCountLimit in [0, 10] {
                let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir.appendingPathComponent("\(memoryCountLimit)")),
                                                        configuration: .init(memoryCountLimit: memoryCountLimit))
                try cache.store(data, for: .hots)
                cache.memory?.removeAll()   // the next read decodes from disk
                var first = try #require(try cache.value(Data.self, for: .hots))
                first[0] ^= 0xFF
                first.append(contentsOf: [1, 2, 3])
                #expect(try cache.value(Data.self, for: .hots) == data)
                #expect(first.count == data.count + 3)
            }
        }
    }

    /// Limits still apply: an archive over `maxTotalBytes` fails to encode as before.
    @Test func aDataOverTheArchiveLimitIsNotStored() throws {
        try withTemporaryDirectory { dir throws in
            var options = ArchiveOptions()
            options.limits.maxTotalBytes = 1_000
            let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: dir),
                                                    configuration: .init(memoryCountLimit: 0, archiveOptions: options))
            try cache.store(Self.sample(900), for: .hots, parameter: "small")
            #expect(try cache.value(Data.self, for: .hots, parameter: "small") == Self.sample(900))
            let error = #expect(throws: CacheError.self) { try cache.store(Self.sample(2_000), for: .hots, parameter: "large") }
            #expect(error?.code == .encodingFailed)
            #expect(!cache.contains(.hots, parameter: "large"))
        }
    }
}
