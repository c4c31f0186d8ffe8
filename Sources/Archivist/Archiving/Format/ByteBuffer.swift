import Foundation

/// A growable byte buffer over raw memory, the encoder's output.
///
/// It lives behind an `UnsafeMutablePointer` owned by the encoder so the hot append paths
/// skip the dynamic exclusivity checks a class's stored properties would need.
struct ByteBuffer {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = Swift.max(capacity, 64)
        base = .allocate(byteCount: self.capacity, alignment: 16)
    }

    /// Frees the memory; call once, unless ownership moved with ``takeData()``.
    func deallocate() { base.deallocate() }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if _slowPath(count &+ extra > capacity) { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        newBase.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count &+= 1
    }

    @inline(__always)
    mutating func append(_ byte0: UInt8, _ byte1: UInt8) {
        reserve(2)
        base.storeBytes(of: byte0, toByteOffset: count, as: UInt8.self)
        base.storeBytes(of: byte1, toByteOffset: count &+ 1, as: UInt8.self)
        count &+= 2
    }

    /// LEB128: seven bits a byte, low bits first, high bit set on every byte but the last.
    @inline(__always)
    mutating func appendVarint(_ value: UInt64) {
        if value < 0x80 {
            append(UInt8(truncatingIfNeeded: value))
            return
        }
        reserve(10)
        var v = value
        while v >= 0x80 {
            base.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: count, as: UInt8.self)
            count &+= 1
            v >>= 7
        }
        base.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: count, as: UInt8.self)
        count &+= 1
    }

    @inline(__always)
    mutating func appendVarint(_ value: Int) { appendVarint(UInt64(truncatingIfNeeded: value)) }

    @inline(__always)
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        reserve(MemoryLayout<T>.size)
        base.storeBytes(of: value.littleEndian, toByteOffset: count, as: T.self)
        count &+= MemoryLayout<T>.size
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).copyMemory(from: source, byteCount: bytes.count)
        count &+= bytes.count
    }

    /// Appends a length-prefixed UTF-8 string.
    @inline(__always)
    mutating func appendString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            appendVarint(utf8.count)
            append(UnsafeRawBufferPointer(utf8))
        }
    }

    /// Reserves a 4-byte slot to be filled later by ``patchUInt32(_:at:)``; returns its offset.
    @inline(__always)
    mutating func reserveUInt32() -> Int {
        reserve(4)
        let offset = count
        count &+= 4
        return offset
    }

    @inline(__always)
    func patchUInt32(_ value: UInt32, at offset: Int) {
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }

    func patchUInt64(_ value: UInt64, at offset: Int) {
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    }

    /// Hands the bytes to a `Data` without copying; the buffer must not be used afterwards.
    func takeData() -> Data {
        Data(bytesNoCopy: base, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }
}
