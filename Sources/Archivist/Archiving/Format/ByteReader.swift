/// A bounds-checked cursor over the archive's bytes; every read throws instead of trapping.
struct ByteReader {
    let base: UnsafeRawPointer
    /// One past the last byte the current container may use.
    var end: Int
    var pos: Int

    init(base: UnsafeRawPointer, start: Int, end: Int) {
        self.base = base
        self.pos = start
        self.end = end
    }

    var remaining: Int { end - pos }

    func truncated(_ what: String) -> ArchiveError {
        ArchiveError(.truncated, "input ends inside \(what)", offset: pos)
    }

    @inline(__always)
    mutating func byte() throws -> UInt8 {
        guard pos < end else { throw truncated("a value") }
        let b = base.load(fromByteOffset: pos, as: UInt8.self)
        pos &+= 1
        return b
    }

    @inline(__always)
    func peekByte() throws -> UInt8 {
        guard pos < end else { throw truncated("a value") }
        return base.load(fromByteOffset: pos, as: UInt8.self)
    }

    @inline(__always)
    mutating func varint() throws -> UInt64 {
        if pos < end {
            let first = base.load(fromByteOffset: pos, as: UInt8.self)
            if first < 0x80 {
                pos &+= 1
                return UInt64(first)
            }
            // Two bytes (128 ..< 16,384: the object ids of a graph of a few thousand objects).
            if pos &+ 1 < end {
                let second = base.load(fromByteOffset: pos &+ 1, as: UInt8.self)
                if second < 0x80 {
                    pos &+= 2
                    return UInt64(first & 0x7F) | UInt64(second) &<< 7
                }
            }
        }
        return try varintSlow()
    }

    private mutating func varintSlow() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            if shift == 63 && b > 1 {
                throw ArchiveError(.corrupt, "varint overflows 64 bits", offset: pos - 1)
            }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
            if shift > 63 { throw ArchiveError(.corrupt, "varint longer than 10 bytes", offset: pos) }
        }
    }

    /// A varint that must fit in `0...limit` (a count, an index or a length).
    @inline(__always)
    mutating func index(below limit: Int, _ what: @autoclosure () -> String) throws -> Int {
        let start = pos
        let v = try varint()
        guard v < UInt64(limit) else {
            throw ArchiveError(.corrupt, "\(what()) \(v) out of range (limit \(limit))", offset: start)
        }
        return Int(v)
    }

    @inline(__always)
    mutating func fixed<T: FixedWidthInteger>(_: T.Type) throws -> T {
        guard end - pos >= MemoryLayout<T>.size else { throw truncated("a fixed-width number") }
        let v = T(littleEndian: base.loadUnaligned(fromByteOffset: pos, as: T.self))
        pos &+= MemoryLayout<T>.size
        return v
    }

    @inline(__always)
    mutating func bytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, end - pos >= count else { throw truncated("\(count) bytes") }
        let buffer = UnsafeRawBufferPointer(start: base + pos, count: count)
        pos &+= count
        return buffer
    }

    /// A varint byte count followed by that many bytes.
    @inline(__always)
    mutating func lengthPrefixed() throws -> UnsafeRawBufferPointer {
        let start = pos
        let length = try varint()
        guard length <= UInt64(end - pos) else {
            pos = start
            throw truncated("a \(length)-byte string or data")
        }
        return try bytes(Int(length))
    }

    /// A length-prefixed UTF-8 string, validated.
    @inline(__always)
    mutating func string() throws -> String {
        let start = pos
        let raw = try lengthPrefixed()
        // A short string with 16 bytes of the container left from its first byte: two loads,
        // no copy call and no byte loop (the bytes past the string are read, never used).
        if raw.count <= SmallASCIIString.capacity, end &- pos &+ raw.count >= 16, let source = raw.baseAddress,
            SmallASCIIString.isAvailable, let small = SmallASCIIString.make(loading16: source, count: raw.count)
        {
            return small
        }
        let utf8 = raw.bindMemory(to: UInt8.self)
        // ASCII is valid UTF-8 as it is: `String(decoding:as:)` with no check.
        if Self.isASCII(raw) {
            if raw.count <= SmallASCIIString.capacity, SmallASCIIString.isAvailable, let source = raw.baseAddress {
                return SmallASCIIString.make(source, count: raw.count)
            }
            return String(decoding: utf8, as: UTF8.self)
        }
        guard let s = String(validatingUTF8Bytes: utf8) else {
            throw ArchiveError(.corrupt, "invalid UTF-8 in a string", offset: start)
        }
        return s
    }

    /// Whether every byte is below 0x80, eight bytes at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var offset = 0
        var high: UInt64 = 0
        while offset &+ 8 <= count {
            high |= base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset &+= 8
        }
        while offset < count {
            high |= UInt64(base.load(fromByteOffset: offset, as: UInt8.self))
            offset &+= 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// Skips one value without decoding it (iteratively: object headers can't nest the stack).
    mutating func skipValue() throws {
        while true {
            let tagOffset = pos
            let tag = try byte()
            switch tag {
            case ArchiveTag.null, ArchiveTag.falseValue, ArchiveTag.trueValue: return
            case ArchiveTag.signed, ArchiveTag.unsigned, ArchiveTag.reference:
                _ = try varint()
                return
            case ArchiveTag.float32:
                _ = try bytes(4)
                return
            case ArchiveTag.float64, ArchiveTag.date:
                _ = try bytes(8)
                return
            case ArchiveTag.uuid:
                _ = try bytes(16)
                return
            case ArchiveTag.decimal:
                try skipDecimal()
                return
            case ArchiveTag.string, ArchiveTag.data, ArchiveTag.url:
                _ = try lengthPrefixed()
                return
            case ArchiveTag.array, ArchiveTag.dictionary, ArchiveTag.record:
                let length = try fixed(UInt32.self)
                _ = try bytes(Int(clamping: length))
                return
            case ArchiveTag.object:
                _ = try varint()  // the id; the object's value follows
            default:
                throw ArchiveError(.corrupt, "unknown value tag 0x\(String(tag, radix: 16))", offset: tagOffset)
            }
        }
    }
}
