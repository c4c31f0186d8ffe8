import Foundation

/// The bytes of a file read whole, in memory of their own that is freed with the buffer.
///
/// A cache read checks and decodes straight from ``bytes``; only a value that keeps the bytes
/// (a large root `Data`) wraps them, through ``data(_:)``, which shares them. Reading into a
/// `Data` instead costs a second storage object per read (with its exclusivity checks), and
/// its slice another, a sizable share of a small get (the `cache-manager` suite's 1 KB get
/// guards it).
package final class FileBuffer: @unchecked Sendable {
    // Safety: the memory is written by the read before the buffer is handed out, and after
    // that only by a `Data` from `data(_:)` that is its sole owner (writing in place), which
    // `data(_:)` asks of its callers; the pointer itself never changes.
    /// The file's bytes (fewer than its size when it shrank while being read).
    package let bytes: UnsafeRawBufferPointer
    /// What `malloc` returned, which ``bytes`` start in, freed with the buffer.
    private let allocation: UnsafeMutableRawPointer?
    /// The CRC32C of all of ``bytes`` when it was computed as they were read (a large file, see
    /// ``AtomicFile/checksummedReadThreshold``), else `nil`.
    package let checksum: UInt32?
    /// Whether the file was read without an `fstat`, in one `read` of the size its reader
    /// expected (``AtomicFile/readBuffer(path:fileSystem:below:identity:sizeHint:)``): a
    /// reader that finds the bytes bad examines the file before judging it.
    package let sizeWasAssumed: Bool

    /// The alignment of ``bytes``: a cache line. The kernel copies a file from its page cache
    /// (page aligned) into them with `rep movsb`, which is slower into memory 16 bytes past a
    /// line, where `malloc` puts it, than into a whole line (the `cache-shapes` suite's 100 KB
    /// gets guard it).
    static let alignment = 64

    /// Memory for `count` bytes, starting at a multiple of ``alignment``, or `nil` when
    /// `malloc` fails. `malloc` with room to move the start costs what plain `malloc` does,
    /// where `posix_memalign` costs more on every call (the `cache-shapes` suite's 100 KB gets
    /// guard it).
    static func allocate(count: Int) -> (memory: UnsafeMutableRawPointer, allocation: UnsafeMutableRawPointer)? {
        #if os(Linux)
        if count >= hugePageThreshold { return allocateInHugePages(count: count) }
        #endif
        let (padded, overflow) = count.addingReportingOverflow(alignment - 1)
        guard !overflow, let allocation = malloc(padded) else { return nil }
        let address = UInt(bitPattern: allocation)
        let aligned = (address + UInt(alignment - 1)) & ~UInt(alignment - 1)
        return (allocation + Int(aligned - address), allocation)
    }

    #if os(Linux)
    /// The smallest buffer ``allocate(count:)`` asks transparent huge pages for.
    static let hugePageThreshold = 4 << 20
    /// The size of a transparent huge page on x86-64 and of the usual arm64 kernels.
    static let hugePageSize = 2 << 20

    /// Memory for `count` bytes starting on a huge-page boundary, marked `MADV_HUGEPAGE`;
    /// `nil` when it cannot be had.
    ///
    /// Reading a large file into fresh memory costs a page fault for every 4 KiB page the
    /// kernel's copy touches, a good part of the read: 25,000 faults for 100 MB. In huge pages
    /// the same buffer takes one fault per 2 MiB, and the copy and the checksum run over
    /// fewer TLB entries. Where the system grants huge pages only on request (`madvise`, the
    /// usual default) nothing else asks for them; where it grants none the advice changes
    /// nothing. The memory is still `free`d (glibc maps an allocation this large on its own).
    /// The `cache-blobs` suite's 100 MB read guards it.
    private static func allocateInHugePages(
        count: Int
    ) -> (memory: UnsafeMutableRawPointer, allocation: UnsafeMutableRawPointer)? {
        var allocation: UnsafeMutableRawPointer?
        guard posix_memalign(&allocation, hugePageSize, count) == 0, let allocation else { return nil }
        // Advice only: a refusal (a kernel without THP) leaves ordinary pages, as `malloc` gives.
        _ = madvise(allocation, count, MADV_HUGEPAGE)
        return (allocation, allocation)
    }
    #endif

    /// Takes over `count` bytes at `memory`, inside `allocation`, which `malloc` returned (or
    /// `nil` for none), whose CRC32C is `checksum` if it was computed as they were read.
    init(
        taking memory: UnsafeMutableRawPointer?,
        count: Int,
        allocation: UnsafeMutableRawPointer?,
        checksum: UInt32? = nil,
        sizeWasAssumed: Bool = false
    ) {
        bytes = UnsafeRawBufferPointer(start: memory, count: memory == nil ? 0 : count)
        self.allocation = allocation
        self.checksum = checksum
        self.sizeWasAssumed = sizeWasAssumed
    }

    deinit { free(allocation) }

    /// `range` of the bytes as a `Data` that shares them (no copy) and keeps the buffer alive.
    /// The `Data` copies before any mutation only if it is not the buffer's sole reader, so
    /// share a range only when nothing else reads the buffer afterwards.
    ///
    /// - Complexity: O(1).
    package func data(_ range: Range<Int>) -> Data {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        guard !range.isEmpty, let base = bytes.baseAddress else { return Data() }
        return Data(
            bytesNoCopy: UnsafeMutableRawPointer(mutating: base + range.lowerBound),
            count: range.count,
            deallocator: .custom { _, _ in withExtendedLifetime(self) {} }
        )
    }
}
