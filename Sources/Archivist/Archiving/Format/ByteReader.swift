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
        let utf8 = raw.bindMemory(to: UInt8.self)
        // ASCII is valid UTF-8 as it is; `String(decoding:as:)` is the specialized fast path,
        // while the generic `String(validating:as:)` instantiates metadata on every call.
        if Self.isASCII(raw) {
            if raw.count <= SmallASCIIString.capacity, SmallASCIIString.isAvailable, let source = raw.baseAddress {
                return SmallASCIIString.make(source, count: raw.count)
            }
            return String(decoding: utf8, as: UTF8.self)
        }
        guard let s = String(validating: utf8, as: UTF8.self) else {
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
            case ArchiveTag.signed, ArchiveTag.unsigned, ArchiveTag.reference: _ = try varint(); return
            case ArchiveTag.float32: _ = try bytes(4); return
            case ArchiveTag.float64, ArchiveTag.date: _ = try bytes(8); return
            case ArchiveTag.uuid: _ = try bytes(16); return
            case ArchiveTag.string, ArchiveTag.data, ArchiveTag.url: _ = try lengthPrefixed(); return
            case ArchiveTag.array, ArchiveTag.dictionary, ArchiveTag.record:
                let length = try fixed(UInt32.self)
                _ = try bytes(Int(length))
                return
            case ArchiveTag.object:
                _ = try varint()  // the id; the object's value follows
            default:
                throw ArchiveError(.corrupt, "unknown value tag 0x\(String(tag, radix: 16))", offset: tagOffset)
            }
        }
    }
}

/// Short ASCII strings built the way the standard library stores them, without validating the
/// bytes again: `String(decoding:as:)` re-checks bytes already known to be ASCII and copies
/// them through a generic path, about 160 instructions for a short field value (the most
/// frequent kind: names, identifiers, dates), where this takes about 20.
///
/// On 64-bit platforms a `String` of up to 15 UTF-8 bytes is two words: the bytes, then a
/// discriminator in the last byte (small, immortal, ASCII, and the count). That layout is part
/// of the standard library's ABI (inlined into every client), but the decoder does not take
/// it on trust: ``isAvailable`` compares the bits this builds with the standard library's own
/// strings of every length first, and the decoder uses `String(decoding:as:)` if any differs.
enum SmallASCIIString {
    /// The longest string built here.
    static let capacity = 15

    /// Whether ``make(_:count:)`` builds exactly the strings the standard library does.
    static let isAvailable: Bool = {
        guard MemoryLayout<String>.size == 16, 1.littleEndian == 1 else { return false }
        var bytes: [UInt8] = []
        for count in 0...capacity {
            for seed in [0, 37, 90] {
                bytes = (0..<count).map { UInt8(truncatingIfNeeded: 0x20 &+ ($0 &* 7 &+ seed) % 0x5F) }
                let expected = bytes.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
                let made = bytes.withUnsafeBytes { words($0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: count) }
                guard unsafeBitCast(expected, to: (UInt64, UInt64).self) == made else { return false }
            }
        }
        return true
    }()

    /// The two words of the small string holding `count` (at most ``capacity``) ASCII bytes.
    @inline(__always)
    private static func words(_ source: UnsafeRawPointer, count: Int) -> (UInt64, UInt64) {
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { $0.baseAddress.unsafelyUnwrapped.copyMemory(from: source, byteCount: count) }
        // Small (0x20), ASCII (0x40) and immortal (0x80), with the count in the low nibble.
        words.1 |= UInt64(0xE0 | count) << 56
        return words
    }

    /// The string of `count` bytes at `source`, which must be ASCII, `count` at most
    /// ``capacity``, and only when ``isAvailable``.
    @inline(__always)
    static func make(_ source: UnsafeRawPointer, count: Int) -> String {
        unsafeBitCast(words(source, count: count), to: String.self)
    }
}
