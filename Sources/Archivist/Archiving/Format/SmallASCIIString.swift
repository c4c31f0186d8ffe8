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
                let made = bytes.withUnsafeBytes {
                    words($0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: count)
                }
                guard unsafeBitCast(expected, to: (UInt64, UInt64).self) == made else { return false }
            }
        }
        return true
    }()

    /// The two words of the small string holding `count` (at most ``capacity``) ASCII bytes.
    @inline(__always)
    static func words(_ source: UnsafeRawPointer, count: Int) -> (UInt64, UInt64) {
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) {
            $0.baseAddress.unsafelyUnwrapped.copyMemory(from: source, byteCount: count)
        }
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

    /// The string of the `count` (at most ``capacity``) bytes at `source`, or `nil` if they are
    /// not all ASCII; reads 16 bytes at `source` whatever `count` (the caller makes sure they
    /// are readable). Only when ``isAvailable`` (which also means a little-endian host).
    @inline(__always)
    static func make(loading16 source: UnsafeRawPointer, count: Int) -> String? {
        var low = source.loadUnaligned(as: UInt64.self)
        var high = source.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        // Keep the first `count` bytes: below 8 a part of `low`, else all of it and a part of
        // `high` (none at 8; the last byte, the discriminator's, is always cleared).
        if count < 8 {
            low &= (1 &<< UInt64(truncatingIfNeeded: count &* 8)) &- 1
            high = 0
        } else {
            high &= (1 &<< UInt64(truncatingIfNeeded: (count &- 8) &* 8)) &- 1
        }
        guard (low | high) & 0x8080_8080_8080_8080 == 0 else { return nil }
        high |= UInt64(0xE0 | count) << 56
        return unsafeBitCast((low, high), to: String.self)
    }

    /// The two words of the string holding the ASCII bytes `raw`, to compare a `String` with by
    /// its bits (`unsafeBitCast(string, to: (UInt64, UInt64).self)`), or `nil` when `raw` is
    /// longer than ``capacity`` or strings are not laid out so here.
    static func bits(_ raw: UnsafeRawBufferPointer) -> (UInt64, UInt64)? {
        guard raw.count <= capacity, isAvailable else { return nil }
        guard let source = raw.baseAddress else { return words(UnsafeRawPointer(bitPattern: 1)!, count: 0) }
        return words(source, count: raw.count)
    }
}
