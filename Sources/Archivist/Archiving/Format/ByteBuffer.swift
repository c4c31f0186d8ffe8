import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable byte buffer over raw memory, the encoder's output.
///
/// It lives behind an `UnsafeMutablePointer` owned by the encoder so the hot append paths
/// skip the dynamic exclusivity checks a class's stored properties would need.
///
/// The memory comes from `malloc` and grows with `realloc`, so a large buffer (which the C
/// library maps on its own) grows by remapping its pages instead of allocating a second
/// block and copying into it: encoding a 100 MB `Data` after other values never holds two
/// copies of what was written so far. The finished bytes become the `Data` as they are,
/// except a small archive's, which is copied out so that it does not hold the whole first block.
struct ByteBuffer {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var count = 0
    private var capacity: Int
    /// False once ``takeData(droppingFirst:)`` gave the memory to a `Data`.
    private var owned = true
    /// Set by a write of a value whose tag version 2 of the format lacks (a `Decimal`): the
    /// archive's header then names ``ArchiveFormat/decimalVersion``, so that a reader knowing
    /// only versions 1 and 2 refuses it as a newer version rather than as corrupt.
    var holdsDecimal = false

    /// The default first capacity: room for a small model's archive, and small enough that
    /// `malloc` serves it from its per-thread cache (blocks up to about 1 KiB), which 4 KiB
    /// was not. Larger archives grow by doubling.
    static let initialCapacity = 1_024

    init(capacity: Int = ByteBuffer.initialCapacity) {
        self.capacity = Swift.max(capacity, 64)
        guard let memory = malloc(self.capacity) else { fatalError("out of memory allocating \(self.capacity) bytes") }
        base = memory
    }

    /// Frees the memory; call once. After ``takeData(droppingFirst:)`` there is nothing left to free.
    func deallocate() { if owned { free(base) } }

    /// Empties the buffer for another archive, keeping its memory unless it was handed over
    /// or grew past ``initialCapacity`` (a reused encoder should not hold a large archive's
    /// worth of memory).
    mutating func removeAll() {
        if owned, capacity <= Self.initialCapacity {
            count = 0
            holdsDecimal = false
        } else {
            deallocate()
            self = ByteBuffer()
        }
    }

    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if _slowPath(count &+ extra > capacity) { grow(to: count + extra) }
    }

    /// Grows to at least twice the capacity, or to `needed` and a little room for the values
    /// and tables after it when one append (a large `Data`) needs more than that.
    private mutating func grow(to needed: Int) {
        let newCapacity = Swift.max(capacity * 2, needed + 1024)
        guard let memory = owned ? realloc(base, newCapacity) : malloc(newCapacity) else {
            fatalError("out of memory growing to \(newCapacity) bytes")
        }
        base = memory
        capacity = newCapacity
        owned = true
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

    /// The number of bytes ``appendVarint(_:)-(UInt64)`` writes for `value`.
    static func varintSize(_ value: UInt64) -> Int {
        var size = 1
        var v = value >> 7
        while v != 0 {
            size += 1
            v >>= 7
        }
        return size
    }

    /// Writes `value` as a varint at `base + offset` (within the written bytes) and advances
    /// `offset` past it.
    static func storeVarint(_ value: UInt64, at base: UnsafeMutableRawPointer, offset: inout Int) {
        var v = value
        while v >= 0x80 {
            base.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: offset, as: UInt8.self)
            offset += 1
            v >>= 7
        }
        base.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: offset, as: UInt8.self)
        offset += 1
    }

    /// Writes `value` as a varint of exactly `size` bytes (at least ``varintSize(_:)`` of it, at
    /// most 10): the minimal encoding when `size` is that, otherwise with high-order groups of
    /// zero bits carrying the continuation bit (`0x80`) and a last byte of 0 — the same value
    /// to every LEB128 reader, this one's included. Advances `offset` past it.
    static func storeVarint(_ value: UInt64, size: Int, at base: UnsafeMutableRawPointer, offset: inout Int) {
        precondition(size >= varintSize(value) && size <= 10, "a varint of \(size) bytes cannot hold \(value)")
        var v = value
        for _ in 1..<size {
            base.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: offset, as: UInt8.self)
            offset += 1
            v >>= 7
        }
        base.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: offset, as: UInt8.self)
        offset += 1
    }

    /// Hands the bytes from `offset` on to a `Data`; the buffer is left empty.
    ///
    /// A buffer that never grew past ``initialCapacity`` (a small model's archive) is copied
    /// into a `Data` of its own size and keeps its memory for the next archive (the rule
    /// ``removeAll()`` keeps it by): the copy costs less than the `Data` taking over memory with a
    /// deallocator and the next archive allocating again, and a few hundred bytes do not hold
    /// a whole block. Otherwise (appending again allocates new memory) a result up to
    /// ``moveLimit`` is moved to the start of the memory so the `Data` frees it as it is; a
    /// larger one is not copied: the `Data` points into the memory and frees it from its
    /// start. More than 64 KiB of unused capacity (left by doubling) is given back first,
    /// which for a large buffer only unmaps pages.
    mutating func takeData(droppingFirst offset: Int) -> Data {
        let length = count - offset
        if owned, capacity <= Self.initialCapacity {
            count = 0
            holdsDecimal = false
            return Data(bytes: base + offset, count: length)
        }
        if offset > 0, length <= Self.moveLimit {
            memmove(base, base + offset, length)
            count = length
            return takeData(droppingFirst: 0)
        }
        if capacity - count > 65_536, let memory = realloc(base, Swift.max(count, 1)) {
            base = memory
            capacity = Swift.max(count, 1)
        }
        owned = false
        count = 0
        capacity = 0
        if offset == 0 { return Data(bytesNoCopy: base, count: length, deallocator: .free) }
        return Data(
            bytesNoCopy: base + offset,
            count: length,
            deallocator: .custom { bytes, _ in free(bytes - offset) }
        )
    }

    /// Results up to this size are moved rather than handed over with a custom deallocator
    /// (which costs an allocation): moving 64 KiB takes a few microseconds, far less than
    /// encoding it did.
    static let moveLimit = 65_536
}
