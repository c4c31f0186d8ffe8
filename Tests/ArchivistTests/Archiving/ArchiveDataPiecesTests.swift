import Foundation
import Testing

@testable import Archivist

/// A `Data` value written as the archive bytes around it plus the value itself, its prefix
/// lengthened so the value lands at a chosen file offset (`Archive.dataPieces`).
@Suite struct ArchiveDataPiecesTests {
    /// Every extra prefix length (0 ..< 32) at the sizes where a lengthened varint can cross a
    /// varint-size boundary on its own (body length and total length near 2^21, byte count
    /// near 2^14): each placed archive parses, checksums and reads back as the value.
    @Test func placedPiecesAtVarintBoundaries() throws {
        let sizes = Array(16_384...16_420) + Array((2_097_152 - 44)...(2_097_152 + 2))
        let buffer = Data(count: 2_097_152 + 64)
        try buffer.withUnsafeBytes { raw in
            let address = Int(bitPattern: raw.baseAddress!)
            for n in sizes {
                let value = UnsafeRawBufferPointer(rebasing: raw[0..<n])
                let minimal = try #require(Archive.dataPieces(of: value, options: ArchiveOptions()))
                for fileOffset in 48..<(48 + 32) {
                    let pieces = try #require(
                        Archive.dataPieces(of: value, options: ArchiveOptions(), placedAt: fileOffset)
                    )
                    let extra = pieces.prefix.count - minimal.prefix.count
                    #expect(extra >= 0 && extra < 32 && pieces.count == minimal.count + extra, "n \(n)")
                    let placed = (fileOffset + pieces.prefix.count - address) & 31 == 0
                    #expect(placed || extra == 0, "n \(n) offset \(fileOffset)")
                    var archive = Data(pieces.prefix)
                    archive.append(contentsOf: value)
                    archive.append(contentsOf: Archive.DataPieces.suffix)
                    #expect(archive.count == pieces.count)
                    #expect(pieces.checksum == CRC32C.checksum(archive), "n \(n) offset \(fileOffset)")
                    let root = Archive.rootData(of: archive, sharing: true, options: ArchiveOptions())
                    #expect(root?.count == n, "n \(n) offset \(fileOffset)")
                    if fileOffset == 48 || extra >= 20 {
                        #expect(try Archive.decode(Data.self, from: archive).count == n)
                    }
                }
            }
        }
    }
}
