import Foundation

/// A value written inline with its own tag (numbers, strings, data, dates, URLs, UUIDs).
/// Internal: the public face is each type's `Archivable` conformance and the keyed overloads.
protocol ArchivePrimitive: Archivable {
    static func write(_ value: Self, to out: inout ByteBuffer)
    /// Reads the value, tag included.
    static func read(from reader: inout ByteReader) throws -> Self
}

extension ArchiveEncoder {
    @inline(__always)
    func encodePrimitive<P: ArchivePrimitive>(_ value: P) throws {
        try storage.pointee.beginSingleValue()
        P.write(value, to: &storage.pointee.out)
    }

    @inline(__always)
    func encodePrimitive<P: ArchivePrimitive>(_ value: P, forKey key: String) throws {
        try storage.pointee.beginField(key)
        P.write(value, to: &storage.pointee.out)
    }
}

extension ArchiveDecoder {
    @inline(__always)
    func decodePrimitive<P: ArchivePrimitive>(_ type: P.Type) throws -> P {
        try storage.pointee.beginSingleValue()
        return try P.read(from: &storage.pointee.reader)
    }

    @inline(__always)
    func decodePrimitive<P: ArchivePrimitive>(_ type: P.Type, forKey key: String) throws -> P {
        guard try storage.pointee.seek(key) else { throw keyNotFound(key) }
        do {
            let value = try P.read(from: &storage.pointee.reader)
            storage.pointee.fieldDone()
            return value
        } catch let error as ArchiveError {
            throw error.prefixed(by: key)
        }
    }

    @inline(__always)
    func decodePrimitiveIfPresent<P: ArchivePrimitive>(_ type: P.Type, forKey key: String) throws -> P? {
        guard try storage.pointee.seek(key) else { return nil }
        if try storage.pointee.reader.peekByte() == ArchiveTag.null {
            storage.pointee.reader.pos += 1
            storage.pointee.fieldDone()
            return nil
        }
        return try decodePrimitive(P.self, forKey: key)
    }
}

extension ByteReader {
    /// Reads a tag and throws a type mismatch naming what was expected if it isn't `tag`.
    @inline(__always)
    mutating func expect(_ tag: UInt8, _ what: @autoclosure () -> String) throws {
        let found = try byte()
        guard found == tag else { throw mismatch(found, what()) }
    }

    func mismatch(_ found: UInt8, _ what: String) -> ArchiveError {
        ArchiveError(.typeMismatch, "expected \(what), found \(ArchiveTag.name(found))", offset: pos - 1)
    }

    /// An integer of any width, range-checked.
    mutating func integer<I: FixedWidthInteger>(_: I.Type) throws -> I {
        let tag = try byte()
        let start = pos - 1
        switch tag {
        case ArchiveTag.signed:
            let raw = try varint()
            let value = Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
            if let exact = I(exactly: value) { return exact }
            throw ArchiveError(.typeMismatch, "\(value) does not fit in \(I.self)", offset: start)
        case ArchiveTag.unsigned:
            let value = try varint()
            if let exact = I(exactly: value) { return exact }
            throw ArchiveError(.typeMismatch, "\(value) does not fit in \(I.self)", offset: start)
        default:
            throw mismatch(tag, "an integer")
        }
    }

    /// A floating-point number; integers widen to it.
    mutating func double() throws -> Double {
        let tag = try byte()
        switch tag {
        case ArchiveTag.float64: return Double(bitPattern: try fixed(UInt64.self))
        case ArchiveTag.float32: return Double(Float(bitPattern: try fixed(UInt32.self)))
        case ArchiveTag.signed, ArchiveTag.unsigned:
            pos -= 1
            return Double(try integer(Int64.self))
        default: throw mismatch(tag, "a floating-point number")
        }
    }
}

extension ByteBuffer {
    @inline(__always)
    mutating func appendInteger<I: FixedWidthInteger>(_ value: I) {
        if I.isSigned {
            let v = Int64(truncatingIfNeeded: value)
            append(ArchiveTag.signed)
            appendVarint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
        } else {
            append(ArchiveTag.unsigned)
            appendVarint(UInt64(truncatingIfNeeded: value))
        }
    }
}
