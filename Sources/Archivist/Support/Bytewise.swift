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
    /// - Complexity: O(n); one `memcmp`-like pass over contiguous storage when both strings
    ///   are native.
    @inlinable
    static func equal(_ a: String, _ b: String) -> Bool {
        let contiguous = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in x.elementsEqual(y) }
        }
        if let contiguous, let result = contiguous { return result }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// Whether `a` and `b` are both `nil` or have the same UTF-8 bytes.
    @inlinable
    static func equal(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (a?, b?): equal(a, b)
        default: false
        }
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
