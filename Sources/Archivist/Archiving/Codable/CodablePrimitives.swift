import Foundation

/// `Date`, `Data`, `URL`, `UUID` and `Decimal` reach Codable containers through the generic
/// `encode<T>`/`decode<T>` (Codable has no overloads for them). These write and read them
/// inline, as the hand-written keyed overloads do, with the same bytes (each type's
/// ``ArchivePrimitive`` conformance): a metatype compare instead of a conditional cast to
/// `any Archivable` (a conformance lookup), a value frame and, when decoding, a cast of the
/// result back to `T`. That was about a fifth of encoding a Codable record with one `Date`.
///
/// Without this, `Decimal` would be written through Foundation's own `Codable` conformance: a
/// record of five fields and an eight-element mantissa (42 bytes for `1.5`, 4 inline), which
/// `archivist inspect` could only show as that record. Archives written that way still read
/// (``isInline(_:at:)``).
enum CodablePrimitives {
    /// Writes `value` with its tag if it is one of the five types; false otherwise.
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
        } else if T.self == Decimal.self {
            Decimal.write(unsafeBitCast(value, to: Decimal.self), to: &out)
        } else {
            return false
        }
        return true
    }

    /// Whether the value of `type` at `reader` is one of the five types written inline, which
    /// ``read(_:from:)`` reads: every value of the first four, and a `Decimal` unless it is the
    /// record Foundation's `Codable` conformance writes (an archive from before `Decimal` had
    /// a tag of its own; its `Archivable` conformance reads that).
    @inline(__always)
    static func isInline<T>(_ type: T.Type, at reader: ByteReader) -> Bool {
        if T.self == Date.self || T.self == UUID.self || T.self == Data.self || T.self == URL.self { return true }
        return T.self == Decimal.self && (try? reader.peekByte()) != ArchiveTag.record
    }

    /// Reads a value of `type`, one of the five types (see ``isInline(_:at:)``), at the reader,
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
        if T.self == Decimal.self { return unsafeBitCast(try Decimal.read(from: &reader), to: T.self) }
        return try URL.read(from: &reader) as! T
    }
}
