import Foundation

/// The bytes of a file read whole, in memory of their own that is freed with the buffer.
///
/// A cache read checks and decodes straight from ``bytes``; only a value that keeps the bytes
/// (a large root `Data`) wraps them, through ``data(_:)``, which shares them. Reading into a
/// `Data` instead cost a second storage object per read (with its exclusivity checks), and
/// its slice another: about 1,500 instructions of a 1 KB get.
package final class FileBuffer: @unchecked Sendable {
    // Safety: the memory is written by the read before the buffer is handed out, and after
    // that only by a `Data` from `data(_:)` that is its sole owner (writing in place), which
    // `data(_:)` asks of its callers; the pointer itself never changes.
    /// The file's bytes (fewer than its size when it shrank while being read).
    package let bytes: UnsafeRawBufferPointer

    /// Takes over `count` bytes at `memory`, which `malloc` returned (or `nil` for none).
    init(taking memory: UnsafeMutableRawPointer?, count: Int) {
        bytes = UnsafeRawBufferPointer(start: memory, count: memory == nil ? 0 : count)
    }

    deinit { free(UnsafeMutableRawPointer(mutating: bytes.baseAddress)) }

    /// `range` of the bytes as a `Data` that shares them (no copy) and keeps the buffer alive.
    /// The `Data` copies before any mutation only if it is not the buffer's sole reader, so
    /// share a range only when nothing else reads the buffer afterwards.
    ///
    /// - Complexity: O(1).
    package func data(_ range: Range<Int>) -> Data {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count)
        guard !range.isEmpty, let base = bytes.baseAddress else { return Data() }
        return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base + range.lowerBound), count: range.count,
                    deallocator: .custom { _, _ in withExtendedLifetime(self) {} })
    }
}
