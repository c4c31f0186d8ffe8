import Foundation

@testable import Archivist

/// A placement of a large `Data`'s archive that the format allows: the
/// prefix's varints lengthened so the value lands at a file offset congruent to its address
/// modulo 32. The cache writes the minimal layout; the tests build placed archives with
/// this to check that files written so read.
extension Archive.DataPieces {
    /// The alignment, in bytes, that placement gave the value's file offset relative to its
    /// address.
    static let copyAlignment = 32
    /// The smallest value placement placed.
    static let placedMinimumCount = 16 * 1024
    /// The prefix's bytes as an array (the cache writes them through `withPrefix`).
    var prefix: [UInt8] { withPrefix { Array($0) } }
}

extension Archive {
    /// The layout for `n` bytes whose prefix is `extra` bytes longer than the minimal one's:
    /// the byte count's varint grows first, then the body length's, then the total length's,
    /// each to at most 10 bytes; `nil` when they cannot grow by exactly that.
    static func placedLayout(count n: Int, extra: Int) -> DataLayout? {
        let minimal = DataLayout(count: n)
        var rest = extra
        let countSize = min(10, minimal.countSize + rest)
        rest -= countSize - minimal.countSize
        let bodyLength = 1 + countSize + n
        let bodyLengthMinimum = ByteBuffer.varintSize(UInt64(bodyLength))
        let bodyLengthSize = min(10, bodyLengthMinimum + rest)
        rest -= bodyLengthSize - bodyLengthMinimum
        let rest0 = ArchiveFormat.fixedHeaderSize + bodyLengthSize + bodyLength + DataPieces.suffix.count
        var totalMinimum = 1
        while ByteBuffer.varintSize(UInt64(rest0 + totalMinimum)) > totalMinimum { totalMinimum += 1 }
        let totalSize = totalMinimum + rest
        let layout = DataLayout(
            countSize: countSize,
            bodyLength: bodyLength,
            bodyLengthSize: bodyLengthSize,
            total: rest0 + totalSize,
            totalSize: totalSize
        )
        // A length that crossed a varint boundary on its own made the prefix longer still.
        guard totalSize <= 10, layout.prefixCount == minimal.prefixCount + extra else { return nil }
        return layout
    }

    /// The pieces of the archive of `bytes` as a root `Data`, placed
    /// at file offset `fileOffset`: a value of at least
    /// ``DataPieces/placedMinimumCount`` bytes placed when lengthening the varints can do it,
    /// otherwise (and for smaller values) ``dataPieces(of:options:)``'s minimal layout.
    static func dataPieces(
        of bytes: UnsafeRawBufferPointer,
        options: ArchiveOptions,
        placedAt fileOffset: Int
    ) -> DataPieces? {
        guard let minimalPieces = dataPieces(of: bytes, options: options) else { return nil }
        let n = bytes.count
        guard n >= DataPieces.placedMinimumCount, let address = bytes.baseAddress else { return minimalPieces }
        let minimal = DataLayout(count: n)
        let mask = DataPieces.copyAlignment - 1
        let extra = (Int(bitPattern: address) &- fileOffset &- minimal.prefixCount) & mask
        guard extra > 0, let placed = placedLayout(count: n, extra: extra), placed.total <= options.limits.maxTotalBytes
        else { return minimalPieces }
        return dataPieces(of: bytes, layout: placed)
    }
}
