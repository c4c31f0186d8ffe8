import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

/// A `Data` value is written as the bytes of its archive around the caller's bytes (no copy
/// into an archive buffer) and read back sharing the entry's buffer: the files must stay what
/// the encoder writes (byte for byte, or with lengthened varints that place a large value)
/// and damage must still be caught.
@Suite struct CacheDataPayloadTests {
    /// Bytes that are not all alike, so a misplaced or dropped byte shows.
    static func sample(_ count: Int, seed: Int = 7) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131) ^ ($0 >> 7) &+ seed) })
    }

    /// Sizes around every length whose varint (value count, body length, total) grows a byte.
    static let sizes: [Int] =
        [0, 1, 14, 15, 100, 121, 122, 123, 124, 125, 126, 127, 128, 4095, 4096]
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

    /// Placed pieces lengthen the prefix's varints so the value lands at a file offset
    /// congruent to its address modulo 32; every reader reads them as the encoder's archive.
    @Test func placedPiecesDecodeAsTheEncodersArchive() throws {
        let alignment = Archive.DataPieces.copyAlignment
        let sizes = [
            Archive.DataPieces.placedMinimumCount - 1, Archive.DataPieces.placedMinimumCount,
            100_000, 2_097_140, 2_097_150, 2_097_151, 2_097_152,
        ]
        var aligned = 0
        var tried = 0
        for size in sizes {
            // A buffer with room to start the value at any address modulo 32.
            let buffer = Self.sample(size + alignment, seed: size % 251)
            let expectedAt = buffer.withUnsafeBytes { Int(bitPattern: $0.baseAddress!) }
            for shift in [0, 1, 7, 16, 31] {
                let data = buffer[(buffer.startIndex + shift)..<(buffer.startIndex + shift + size)]
                let archive = try Archive.encode(Data(data))
                for fileOffset in [0, 48, 59, 63, 64, 79, 200] {
                    let (pieces, address) = try data.withUnsafeBytes { raw in
                        (
                            try #require(Archive.dataPieces(of: raw, options: ArchiveOptions(), placedAt: fileOffset)),
                            Int(bitPattern: raw.baseAddress!)
                        )
                    }
                    #expect(address == expectedAt + shift)
                    let placed = Data(pieces.prefix) + data + Data(Archive.DataPieces.suffix)
                    let extra = pieces.prefix.count - (archive.count - size - Archive.DataPieces.suffix.count)
                    #expect(extra >= 0 && extra < alignment, "size \(size)")
                    #expect(pieces.count == placed.count)
                    #expect(pieces.checksum == CRC32C.checksum(placed), "size \(size) offset \(fileOffset)")
                    #expect(pieces.checksum == Archive.checksumOfEncoded(placed))
                    #expect(try Archive.decode(Data.self, from: placed) == data, "size \(size) offset \(fileOffset)")
                    for sharing in [false, true] {
                        #expect(Archive.rootData(of: placed, sharing: sharing, options: ArchiveOptions()) == data)
                    }
                    if size < Archive.DataPieces.placedMinimumCount {
                        #expect(placed == archive, "a small value is not placed")
                        continue
                    }
                    tried += 1
                    if (fileOffset + pieces.prefix.count - address) % alignment == 0 {
                        aligned += 1
                    } else {
                        #expect(placed == archive, "a value that cannot be placed is written as the encoder does")
                    }
                }
            }
        }
        // The varints of these sizes have 18 to 21 bytes to spare: 19 to 22 of the 32 offsets
        // modulo 32 can be reached.
        #expect(aligned * 2 >= tried, "\(aligned) of \(tried) placed")
    }

    /// The cache's own case, 100 KB: its three varints take 3 bytes and may take 10, so a
    /// value is placed exactly when it needs 0 to 21 more bytes of prefix — after an entry
    /// header of any length and at any address.
    @Test func aValueIsPlacedWheneverTheVarintsHaveRoom() throws {
        let size = 100_000
        let minimalPrefix = try Archive.encode(Self.sample(size)).count - size - Archive.DataPieces.suffix.count
        let buffer = Self.sample(size + 64)
        try buffer.withUnsafeBytes { raw in
            for shift in 0..<32 {
                let value = UnsafeRawBufferPointer(rebasing: raw[shift..<(shift + size)])
                let address = Int(bitPattern: value.baseAddress!)
                for headerLength in 48..<(48 + 64) {
                    let pieces = try #require(
                        Archive.dataPieces(of: value, options: ArchiveOptions(), placedAt: headerLength)
                    )
                    let needed = (address - headerLength - minimalPrefix) & 31
                    let placed = (headerLength + pieces.prefix.count - address) & 31 == 0
                    #expect(placed == (needed <= 21), "header \(headerLength) shift \(shift)")
                    #expect(pieces.prefix.count == minimalPrefix + (placed ? needed : 0))
                }
            }
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
        #expect(
            Archive.rootData(of: try Archive.encode([UInt8](repeating: 1, count: 10)), sharing: true, options: verified)
                == nil
        )
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
            let values = sizes.enumerated().map { Self.sample($0.element, seed: $0.offset) }
            for (i, value) in values.enumerated() {
                try writer.store(value, for: .hots, parameter: "blob-\(i)")
            }
            let reader = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
            for (i, size) in sizes.enumerated() {
                let expected = Self.sample(size, seed: i)
                #expect(try reader.value(Data.self, for: .hots, parameter: "blob-\(i)") == expected)
                // The file: the entry header, then the encoder's archive byte for byte (the
                // cache writes minimal varints; files with lengthened ones, which the format
                // allows, read too, see `placedPiecesDecodeAsTheEncodersArchive`).
                let url = try #require(try reader.info(for: .hots, parameter: "blob-\(i)")).fileURL
                let file = try Data(contentsOf: url)
                let (header, length) = try file.withUnsafeBytes {
                    try EntryHeader.decode($0, payloadIncluded: true, path: url.path)
                }
                let archive = Data(file.dropFirst(length))
                #expect(try Archive.decode(Data.self, from: archive) == expected)
                #expect(header.payloadChecksum == CRC32C.checksum(archive))
                #expect(archive == (try Archive.encode(expected)), "size \(size)")
            }
            #expect(writer.totalSize == entryFiles(under: dir).values.reduce(0, +))
        }
    }

    /// Entries written before the cache stopped placing large values (their archive's varints
    /// lengthened) are still read, shared or copied, by a manager of today.
    @Test func aPlacedEntryOfAnEarlierVersionIsStillRead() throws {
        try withTemporaryDirectory { dir throws in
            let root = CacheRoot(directory: dir)
            let writer = try CacheManager<ShopCache>(root: root, configuration: .init(memoryCountLimit: 0))
            let value = Self.sample(100_000, seed: 3)
            try writer.store(value, for: .hots, parameter: "old")
            let url = try #require(try writer.info(for: .hots, parameter: "old")).fileURL
            // A file with the varints lengthened so the value is placed for the header's length.
            let headerLength = EntryHeader.encodedCount(typeName: ShopCache.hots.name, parameter: "old")
            let placed = try value.withUnsafeBytes { raw -> Data in
                var shift = 0
                var pieces = try #require(Archive.dataPieces(of: raw, options: ArchiveOptions()))
                while shift < Archive.DataPieces.copyAlignment {
                    let candidate = try #require(
                        Archive.dataPieces(of: raw, options: ArchiveOptions(), placedAt: headerLength + shift)
                    )
                    if candidate.count != pieces.count {
                        pieces = candidate
                        break
                    }
                    shift += 1
                }
                return Data(pieces.prefix) + value + Data(Archive.DataPieces.suffix)
            }
            #expect(placed.count > (try Archive.encode(value)).count, "the file's varints are lengthened")
            let header = EntryHeader(
                typeName: ShopCache.hots.name,
                parameter: "old",
                writeDate: Date(),
                expiry: nil,
                payloadLength: placed.count,
                payloadChecksum: CRC32C.checksum(placed)
            )
            try (Data(header.encoded()) + placed).write(to: url)
            for memoryCountLimit in [0, 10] {
                let reader = try CacheManager<ShopCache>(
                    root: CacheRoot(directory: dir),
                    configuration: .init(memoryCountLimit: memoryCountLimit)
                )
                #expect(try reader.value(Data.self, for: .hots, parameter: "old") == value)
            }
        }
    }

    /// A placed archive as fixed bytes, not rebuilt by the tests' copy of the placement: the
    /// five bytes "abcde" with the byte count (`85 80 … 00`, 10 bytes) and the total length
    /// (`90 80 80 00`) lengthened. Decoded, read as a root, and read from a cache entry.
    @Test func aPlacedArchiveInFixedBytesIsRead() throws {
        let placed = Data([
            0x89, 0x41, 0x52, 0x56, 0x02, 0x00, 0x15, 0x35, 0x35, 0x9c, 0x22, 0x90, 0x80, 0x80, 0x00,
            0x08, 0x85, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
            0x61, 0x62, 0x63, 0x64, 0x65, 0x00, 0x00, 0x00,
        ])
        let value = Data("abcde".utf8)
        #expect(try Archive.decode(Data.self, from: placed) == value)
        for sharing in [false, true] {
            #expect(Archive.rootData(of: placed, sharing: sharing, options: ArchiveOptions()) == value)
        }
        #expect(CRC32C.checksum(placed) == 0xE1AC_AE11)
        var damaged = placed
        damaged[27] ^= 0x01
        #expect(Archive.rootData(of: damaged, sharing: true, options: ArchiveOptions()) == nil)
        try withTemporaryDirectory { dir throws in
            let writer = try CacheManager<ShopCache>(
                root: CacheRoot(directory: dir),
                configuration: .init(memoryCountLimit: 0)
            )
            try writer.store(Data([1]), for: .hots, parameter: "old")
            let url = try #require(try writer.info(for: .hots, parameter: "old")).fileURL
            let header = EntryHeader(
                typeName: ShopCache.hots.name,
                parameter: "old",
                writeDate: Date(),
                expiry: nil,
                payloadLength: placed.count,
                payloadChecksum: CRC32C.checksum(placed)
            )
            try (Data(header.encoded()) + placed).write(to: url)
            let reader = try CacheManager<ShopCache>(
                root: CacheRoot(directory: dir),
                configuration: .init(memoryCountLimit: 0)
            )
            #expect(try reader.value(Data.self, for: .hots, parameter: "old") == value)
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
            bytes[bytes.count - 50_000] ^= 0x04  // inside the value's bytes
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
                let cache = try CacheManager<ShopCache>(
                    root: CacheRoot(directory: dir.appendingPathComponent("\(memoryCountLimit)")),
                    configuration: .init(memoryCountLimit: memoryCountLimit)
                )
                try cache.store(data, for: .hots)
                cache.memory?.removeAll()  // the next read decodes from disk
                var first = try #require(try cache.value(Data.self, for: .hots))
                first[0] ^= 0xFF
                first.append(contentsOf: [1, 2, 3])
                #expect(try cache.value(Data.self, for: .hots) == data)
                #expect(first.count == data.count + 3)
            }
        }
    }

    /// Limits apply: an archive over `maxTotalBytes` fails to encode.
    @Test func aDataOverTheArchiveLimitIsNotStored() throws {
        try withTemporaryDirectory { dir throws in
            var options = ArchiveOptions()
            options.limits.maxTotalBytes = 1_000
            let cache = try CacheManager<ShopCache>(
                root: CacheRoot(directory: dir),
                configuration: .init(memoryCountLimit: 0, archiveOptions: options)
            )
            try cache.store(Self.sample(900), for: .hots, parameter: "small")
            #expect(try cache.value(Data.self, for: .hots, parameter: "small") == Self.sample(900))
            let error = #expect(throws: CacheError.self) {
                try cache.store(Self.sample(2_000), for: .hots, parameter: "large")
            }
            #expect(error?.code == .encodingFailed)
            #expect(!cache.contains(.hots, parameter: "large"))
        }
    }
}
