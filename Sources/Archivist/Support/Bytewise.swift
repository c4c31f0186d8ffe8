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
    /// made every probe of the memory tier's dictionary retain and release both keys'
    /// strings, and cost about a quarter of a memory-tier hit.
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
            x.loadUnaligned(fromByteOffset: offset, as: Word.self) == y.loadUnaligned(fromByteOffset: offset, as: Word.self)
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
        let hashed: Void? = string.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil { slowHash(string, into: &hasher) }
    }

    /// ``hash(_:into:)`` for strings without contiguous UTF-8 (bridged ones), out of line.
    @usableFromInline @inline(never)
    static func slowHash(_ string: String, into hasher: inout Hasher) {
        Array(string.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
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
