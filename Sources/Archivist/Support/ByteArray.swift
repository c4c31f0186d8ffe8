extension Array where Element == UInt8 {
    /// Up to `capacity` bytes that `fill` writes into uninitialised memory, returning how many
    /// it wrote (no zero-fill before a read).
    ///
    /// An empty result is `[]`, never `init(unsafeUninitializedCapacity: 0)`: that writes the
    /// count into the standard library's shared empty-array storage, a race (ThreadSanitizer
    /// reports it) with every thread reading an empty array.
    ///
    /// - Complexity: O(`capacity`) plus `fill`.
    static func uninitialized(
        capacity: Int,
        _ fill: (UnsafeMutableBufferPointer<UInt8>) throws -> Int
    ) rethrows -> [UInt8] {
        guard capacity > 0 else { return [] }
        return try [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = try fill(buffer)
        }
    }
}

extension UnsafeMutableBufferPointer where Element == UInt8 {
    /// Copies `bytes` here from `offset` on and moves `offset` past them (nothing for an empty
    /// `bytes`): how a path is assembled in one buffer (``DiskStore/path(of:)``,
    /// ``TemporaryName/path(inFolder:)``). The caller sized the buffer.
    @inline(__always)
    func put(_ bytes: UnsafeBufferPointer<UInt8>, at offset: inout Int) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        UnsafeMutableRawPointer(baseAddress.unsafelyUnwrapped + offset).copyMemory(from: source, byteCount: bytes.count)
        offset += bytes.count
    }
}
