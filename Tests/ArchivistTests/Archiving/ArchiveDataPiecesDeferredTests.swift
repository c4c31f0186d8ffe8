import Foundation
import Testing
@testable import Archivist

/// A root `Data`'s archive pieces made without the pass over the value, then completed from the
/// value's checksum as a writer computes it chunk by chunk, are byte for byte the pieces
/// ``Archive/dataPieces(of:options:)`` makes, and their checksum the same.
@Suite struct ArchiveDataPiecesDeferredTests {
    @Test(arguments: [0, 1, 127, 128, 16_383, 16_384, 1 << 20, (1 << 20) + 5])
    func completedPiecesAreTheEagerOnes(count: Int) throws {
        let value = Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
        try value.withUnsafeBytes { bytes in
            let eager = try #require(Archive.dataPieces(of: bytes, options: ArchiveOptions()))
            let deferred = try #require(Archive.dataPieces(deferringChecksumOfCount: count, options: ArchiveOptions()))
            #expect(deferred.count == eager.count)
            var prefix = deferred.withPrefix { Array($0) }
            let checksum = prefix.withUnsafeMutableBytes { prefix in
                // In uneven chunks, as a writer would.
                var sum = Archive.DataPieces.checksumSeed(ofPrefix: UnsafeRawBufferPointer(prefix))
                var offset = 0
                while offset < count {
                    let end = min(count, offset + 1 + offset / 3)
                    sum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]), seed: sum)
                    offset = end
                }
                return Archive.DataPieces.complete(prefix: prefix, valueChecksum: sum, valueCount: count)
            }
            #expect(prefix == eager.withPrefix { Array($0) })
            #expect(checksum == eager.checksum)
            let archive = try Archive.encode(value)
            #expect(Data(prefix) + value + Data(Archive.DataPieces.suffix) == archive)
            #expect(checksum == archive.withUnsafeBytes { CRC32C.checksum($0) })
        }
    }

    /// Completing twice (a write done again after a clear moved its temporary) stores the same.
    @Test func completingAgainStoresTheSameBytes() throws {
        let count = 3_000
        let deferred = try #require(Archive.dataPieces(deferringChecksumOfCount: count, options: ArchiveOptions()))
        var prefix = deferred.withPrefix { Array($0) }
        let sums = prefix.withUnsafeMutableBytes { prefix in
            (0..<2).map { _ in Archive.DataPieces.complete(prefix: prefix, valueChecksum: 0xDEAD_BEEF, valueCount: count) }
        }
        #expect(sums[0] == sums[1])
        let once = prefix
        _ = prefix.withUnsafeMutableBytes { Archive.DataPieces.complete(prefix: $0, valueChecksum: 0xDEAD_BEEF, valueCount: count) }
        #expect(prefix == once)
    }

    /// Too little depth or a value near the size limit: no pieces, as for the eager form.
    @Test func optionsTheFastPathCannotHonourGiveNoPieces() {
        var shallow = ArchiveOptions()
        shallow.limits.maxDepth = 0
        #expect(Archive.dataPieces(deferringChecksumOfCount: 10, options: shallow) == nil)
        var small = ArchiveOptions()
        small.limits.maxTotalBytes = 100
        #expect(Archive.dataPieces(deferringChecksumOfCount: 1_000, options: small) == nil)
    }
}
