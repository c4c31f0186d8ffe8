/// The package's one rule for comparing caller strings that name things on disk (cache type
/// names, parameters, root paths): two strings are the same key only when their UTF-8 bytes
/// are equal.
///
/// Swift's `String` equality is canonical equivalence ("é" precomposed equals "e" followed by
/// a combining accent), but file names, MD5 digests and entry headers see bytes: mixing the
/// two rules made one key two entries on disk but one slot in memory.
///
/// ```swift
/// Bytewise.equal("caf\u{E9}", "cafe\u{301}")   // false, though == says true
/// ```
@usableFromInline
enum Bytewise {
    /// Whether `a` and `b` have the same UTF-8 bytes.
    ///
    /// Lengths first (O(1) for native strings), then one pass over contiguous storage, eight
    /// bytes at a time (small strings are spilled to the stack for it). Written out in Swift
    /// and always inlined: an opaque call here (the generic `elementsEqual`, or `memcmp`)
    /// makes every probe of the memory tier's dictionary retain and release both keys'
    /// strings, a large share of a memory-tier hit (the `cache-memory` suite guards it).
    ///
    /// - Complexity: O(n).
    @inlinable
    static func equal(_ a: String, _ b: String) -> Bool {
        if sameRepresentation(a, b) { return true }
        let count = a.utf8.count
        guard count == b.utf8.count else { return false }
        let contiguous = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                equal(UnsafeRawPointer(x.baseAddress), UnsafeRawPointer(y.baseAddress), count: count)
            }
        }
        if let contiguous, let result = contiguous { return result }
        return slowEqual(a, b)
    }

    /// Whether `string`'s UTF-8 bytes are exactly `bytes` (a name recorded in a file, say):
    /// ``equal(_:_:count:)`` over the string's contiguous storage, without the generic
    /// `elementsEqual`, which steps element by element through the generic collection code on
    /// every cache read (the `cache-manager` suite's 1 KB get guards it).
    ///
    /// - Complexity: O(n).
    static func equal(_ string: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = string.utf8.count
        guard count == bytes.count else { return false }
        let contiguous = string.utf8.withContiguousStorageIfAvailable {
            equal(UnsafeRawPointer($0.baseAddress), bytes.baseAddress, count: count)
        }
        return contiguous ?? string.utf8.elementsEqual(bytes)
    }

    /// Whether `a` and `b` are bit for bit the same `String` value: the same small string
    /// (whose bits are its bytes and count), or the same storage object. Then their bytes are
    /// equal; when not, they may still be (two storage objects), so this is only a fast path.
    /// It is what a memory-tier hit usually sees (the caller's parameter and the stored one are
    /// one small string, or one object), and it reads no storage, so it retains nothing.
    ///
    /// Only where `String` is two 64-bit words with no padding; elsewhere it answers `false`.
    ///
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    static func sameRepresentation(_ a: String, _ b: String) -> Bool {
        #if arch(x86_64) || arch(arm64)
        unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)
        #else
        false
        #endif
    }

    /// ``sameRepresentation(_:_:)-(String,String)`` for a string read in place at `a`: its
    /// bits are loaded, not the string, so nothing is retained.
    ///
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    static func sameRepresentation(_ a: UnsafePointer<String>, _ b: String) -> Bool {
        #if arch(x86_64) || arch(arm64)
        UnsafeRawPointer(a).load(as: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)
        #else
        false
        #endif
    }

    /// The byte comparison of strings without contiguous UTF-8 (bridged ones), out of line.
    @usableFromInline @inline(never)
    static func slowEqual(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }

    /// Whether `count` bytes at `x` and `y` are equal (either may be `nil` when `count` is 0).
    ///
    /// Eight bytes at a time, the last eight overlapping the ones before; under eight bytes,
    /// two overlapping loads of four, two or one: a short key costs two compares, no loop.
    @inlinable @inline(__always)
    static func equal(_ x: UnsafeRawPointer?, _ y: UnsafeRawPointer?, count: Int) -> Bool {
        guard count > 0, let x, let y else { return true }
        @inline(__always) func same<Word: FixedWidthInteger>(_: Word.Type, at offset: Int) -> Bool {
            x.loadUnaligned(fromByteOffset: offset, as: Word.self)
                == y.loadUnaligned(fromByteOffset: offset, as: Word.self)
        }
        if count >= 8 {
            var offset = 0
            while offset + 8 < count {
                if !same(UInt64.self, at: offset) { return false }
                offset += 8
            }
            return same(UInt64.self, at: count - 8)
        }
        if count >= 4 { return same(UInt32.self, at: 0) && same(UInt32.self, at: count - 4) }
        if count >= 2 { return same(UInt16.self, at: 0) && same(UInt16.self, at: count - 2) }
        return same(UInt8.self, at: 0)
    }

    /// Feeds `string`'s UTF-8 bytes to `hasher`, consistent with ``equal(_:_:)-(String,String)``:
    /// the same bytes hash alike. Cheaper than `String`'s own hashing, which adds a terminator
    /// byte and, for a string not known to be NFC, normalizes it first.
    ///
    /// - Complexity: O(n).
    @inlinable
    static func hash(_ string: String, into hasher: inout Hasher) {
        let hashed: Void? = string.utf8.withContiguousStorageIfAvailable {
            hasher.combine(bytes: UnsafeRawBufferPointer($0))
        }
        if hashed == nil { slowHash(string, into: &hasher) }
    }

    /// ``hash(_:into:)`` for strings without contiguous UTF-8 (bridged ones), out of line.
    @usableFromInline @inline(never)
    static func slowHash(_ string: String, into hasher: inout Hasher) {
        Array(string.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// A seeded 64-bit hash of `string`'s UTF-8 bytes, consistent with
    /// ``equal(_:_:)-(String,String)`` (the same bytes and seed hash alike), for the memory
    /// tier's index: a short key takes a few loads and two multiplications, where `Hasher` runs
    /// SipHash-1-3 with its setup and finalization (the `cache-memory` suite's hits guard it).
    ///
    /// A multiply-mix in the manner of wyhash: 16 bytes per round, each round one 64 × 64 →
    /// 128-bit multiplication of the two words (xored with the seed and the running state)
    /// folded by xor, and the length mixed into a last multiplication. Keys of up to 16 bytes
    /// (most parameters) take no loop: their bytes are read as two zero-padded words.
    ///
    /// Not a cryptographic hash. Callers pick a random `seed` per table, so the values differ
    /// between processes and tables and an outsider cannot aim keys at one bucket by their
    /// hash values alone; see ``MemoryTier`` for why that suffices there.
    ///
    /// - Complexity: O(n).
    @inlinable
    static func seededHash(_ string: String, seed: UInt64) -> UInt64 {
        let hashed = string.utf8.withContiguousStorageIfAvailable {
            seededHash(UnsafeRawPointer($0.baseAddress), count: $0.count, seed: seed)
        }
        return hashed ?? slowSeededHash(string, seed: seed)
    }

    /// ``seededHash(_:seed:)`` for strings without contiguous UTF-8 (bridged ones), out of line.
    @usableFromInline @inline(never)
    static func slowSeededHash(_ string: String, seed: UInt64) -> UInt64 {
        Array(string.utf8).withUnsafeBytes { seededHash($0.baseAddress, count: $0.count, seed: seed) }
    }

    /// The hash of ``seededHash(_:seed:)`` over `count` bytes at `bytes` (`nil` only when
    /// `count` is 0).
    ///
    /// - Complexity: O(count).
    @inlinable @inline(__always)
    static func seededHash(_ bytes: UnsafeRawPointer?, count: Int, seed: UInt64) -> UInt64 {
        // Both factors of every product depend on the seed: with a public constant in one
        // (as in wyhash), a key whose word equals that constant zeroes the product whatever
        // the seed, so such keys would collide in every process.
        let key = seed ^ HashConstants.p1
        var state = seed ^ HashConstants.p0
        var a: UInt64 = 0
        var b: UInt64 = 0
        if count > 16 {
            let p = bytes.unsafelyUnwrapped
            var offset = 0
            var left = count
            repeat {
                state = mix(
                    p.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ key,
                    p.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self) ^ state
                )
                offset += 16
                left -= 16
            } while left > 16
            // The last 1 to 16 bytes, read as the 16 that end the key (overlapping the round
            // before when fewer).
            a = p.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self)
            b = p.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        } else if count > 0 {
            (a, b) = paddedWords(bytes.unsafelyUnwrapped, count: count)
        }
        return mix(HashConstants.p1 ^ UInt64(truncatingIfNeeded: count), mix(a ^ key, b ^ state))
    }

    /// `count` (1 to 16) bytes at `p` as two little-endian words, zero past the end: bytes
    /// 0–7 in the first, 8–15 in the second. Overlapping loads, no loop, nothing read past
    /// the end.
    ///
    /// - Complexity: O(1).
    @inlinable @inline(__always)
    static func paddedWords(_ p: UnsafeRawPointer, count: Int) -> (UInt64, UInt64) {
        @inline(__always) func load<Word: FixedWidthInteger>(_: Word.Type, _ offset: Int) -> UInt64 {
            UInt64(truncatingIfNeeded: Word(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: Word.self)))
        }
        if count >= 8 {
            // The last eight bytes shifted down so that the ones before byte 8 fall out.
            let tail = load(UInt64.self, count - 8)
            return (load(UInt64.self, 0), count == 8 ? 0 : tail &>> UInt64(8 * (16 - count)))
        }
        // Two loads that may overlap; the overlapping bytes are the same bytes, so `|` keeps them.
        if count >= 4 { return (load(UInt32.self, 0) | load(UInt32.self, count - 4) &<< UInt64(8 * (count - 4)), 0) }
        let middle = count >> 1
        return (
            load(UInt8.self, 0) | load(UInt8.self, middle) &<< UInt64(8 * middle)
                | load(UInt8.self, count - 1) &<< UInt64(8 * (count - 1)), 0
        )
    }

    /// The 128-bit product of `a` and `b`, its halves folded by xor.
    @inlinable @inline(__always)
    static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    /// wyhash's default secret: odd 64-bit constants with 32 bits set in each.
    @usableFromInline
    enum HashConstants {
        /// The first constant.
        @inlinable static var p0: UInt64 { 0xA076_1D64_78BD_642F }
        /// The second constant.
        @inlinable static var p1: UInt64 { 0xE703_7ED1_A0B4_28DB }
    }

    /// Whether `a` and `b` are both `nil` or have the same UTF-8 bytes.
    @inlinable
    static func equal(_ a: String?, _ b: String?) -> Bool {
        guard let a else { return b == nil }
        guard let b else { return false }
        return equal(a, b)
    }
}

/// A string that is `Hashable` by its UTF-8 bytes (see ``Bytewise``), for dictionary keys.
struct BytewiseString: Hashable, Sendable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (a: Self, b: Self) -> Bool { Bytewise.equal(a.string, b.string) }

    func hash(into hasher: inout Hasher) {
        // Canonically equivalent strings hash alike, so byte-equal ones certainly do.
        hasher.combine(string)
    }
}
