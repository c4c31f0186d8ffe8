import Foundation

/// `Date`, `Data`, `URL` and `UUID` reach Codable containers through the generic
/// `encode<T>`/`decode<T>` (Codable has no overloads for them). These write and read them
/// inline, as the hand-written keyed overloads do, with the same bytes: a metatype compare
/// instead of a conditional cast to `any Archivable` (a conformance lookup), a value frame and,
/// when decoding, a cast of the result back to `T`. That was about a fifth of encoding a
/// Codable record with one `Date`.
enum CodablePrimitives {
    /// Writes `value` with its tag if it is one of the four types; false otherwise.
    @inline(__always)
    static func write<T>(_ value: T, to out: inout ByteBuffer) -> Bool {
        // Each cast below runs only once the metatypes agree, so it always succeeds.
        if T.self == Date.self {
            Date.write(unsafeBitCast(value, to: Date.self), to: &out)
        } else if T.self == UUID.self {
            UUID.write(unsafeBitCast(value, to: UUID.self), to: &out)
        } else if T.self == Data.self, let data = value as? Data {
            Data.write(data, to: &out)
        } else if T.self == URL.self, let url = value as? URL {
            URL.write(url, to: &out)
        } else {
            return false
        }
        return true
    }

    /// Whether values of `type` are one of the four types ``read(_:from:)`` reads inline.
    @inline(__always)
    static func isInline<T>(_ type: T.Type) -> Bool {
        T.self == Date.self || T.self == UUID.self || T.self == Data.self || T.self == URL.self
    }

    /// Reads a value of `type`, one of the four types (see ``isInline(_:)``), at the reader,
    /// tag included and checked. Returns `T` rather than `T?`: an optional of a generic type
    /// costs a runtime metadata lookup per call, paid by every Codable field that is not a
    /// primitive.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch` when the value has another tag.
    @inline(__always)
    static func read<T>(_ type: T.Type, from reader: inout ByteReader) throws -> T {
        if T.self == Date.self { return unsafeBitCast(try Date.read(from: &reader), to: T.self) }
        if T.self == UUID.self { return unsafeBitCast(try UUID.read(from: &reader), to: T.self) }
        if T.self == Data.self { return try Data.read(from: &reader) as! T }
        return try URL.read(from: &reader) as! T
    }
}
