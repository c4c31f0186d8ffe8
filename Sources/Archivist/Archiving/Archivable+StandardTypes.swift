import Foundation

// Archivable conformances of the standard value types. Each is written inline with its own
// tag (see docs/ArchiveFormat.md); integers of every width share one zigzag/varint encoding,
// so a field can widen from Int32 to Int64 without a migration.

extension Int: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(Int.self) }
    static func write(_ value: Int, to out: inout ByteBuffer) { out.appendInteger(value) }
    static func read(from reader: inout ByteReader) throws -> Int { try reader.integer(Int.self) }
}

extension Int8: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(Int8.self) }
    static func write(_ value: Int8, to out: inout ByteBuffer) { out.appendInteger(value) }
    static func read(from reader: inout ByteReader) throws -> Int8 { try reader.integer(Int8.self) }
}

extension Int16: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(Int16.self) }
    static func write(_ value: Int16, to out: inout ByteBuffer) { out.appendInteger(value) }
    static func read(from reader: inout ByteReader) throws -> Int16 { try reader.integer(Int16.self) }
}

extension Int32: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(Int32.self) }
    static func write(_ value: Int32, to out: inout ByteBuffer) { out.appendInteger(value) }
    static func read(from reader: inout ByteReader) throws -> Int32 { try reader.integer(Int32.self) }
}

extension Int64: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(Int64.self) }
    static func write(_ value: Int64, to out: inout ByteBuffer) { out.appendInteger(value) }
    static func read(from reader: inout ByteReader) throws -> Int64 { try reader.integer(Int64.self) }
}

extension UInt: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(UInt.self) }
    static func write(_ value: UInt, to out: inout ByteBuffer) { out.appendInteger(value) }
    static func read(from reader: inout ByteReader) throws -> UInt { try reader.integer(UInt.self) }
}

extension UInt8: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(UInt8.self) }
    static func write(_ value: UInt8, to out: inout ByteBuffer) { out.appendInteger(value) }
    static func read(from reader: inout ByteReader) throws -> UInt8 { try reader.integer(UInt8.self) }
}

extension UInt16: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(UInt16.self) }
    static func write(_ value: UInt16, to out: inout ByteBuffer) { out.appendInteger(value) }
    static func read(from reader: inout ByteReader) throws -> UInt16 { try reader.integer(UInt16.self) }
}

extension UInt32: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(UInt32.self) }
    static func write(_ value: UInt32, to out: inout ByteBuffer) { out.appendInteger(value) }
    static func read(from reader: inout ByteReader) throws -> UInt32 { try reader.integer(UInt32.self) }
}

extension UInt64: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(UInt64.self) }
    static func write(_ value: UInt64, to out: inout ByteBuffer) { out.appendInteger(value) }
    static func read(from reader: inout ByteReader) throws -> UInt64 { try reader.integer(UInt64.self) }
}

extension Bool: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(Bool.self) }
    static func write(_ value: Bool, to out: inout ByteBuffer) {
        out.append(value ? ArchiveTag.trueValue : ArchiveTag.falseValue)
    }
    static func read(from reader: inout ByteReader) throws -> Bool {
        let tag = try reader.byte()
        switch tag {
        case ArchiveTag.trueValue: return true
        case ArchiveTag.falseValue: return false
        default: throw reader.mismatch(tag, "a bool")
        }
    }
}

extension Double: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(Double.self) }
    static func write(_ value: Double, to out: inout ByteBuffer) {
        out.append(ArchiveTag.float64)
        out.appendLittleEndian(value.bitPattern)
    }
    static func read(from reader: inout ByteReader) throws -> Double { try reader.double() }
}

extension Float: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(Float.self) }
    static func write(_ value: Float, to out: inout ByteBuffer) {
        out.append(ArchiveTag.float32)
        out.appendLittleEndian(value.bitPattern)
    }
    static func read(from reader: inout ByteReader) throws -> Float {
        let start = reader.pos
        let tag = try reader.peekByte()
        if tag == ArchiveTag.float32 {
            reader.pos += 1
            return Float(bitPattern: try reader.fixed(UInt32.self))
        }
        let wide = try reader.double()
        let narrow = Float(wide)
        guard narrow.isFinite || !wide.isFinite else {
            throw ArchiveError(.typeMismatch, "\(wide) does not fit in Float", offset: start)
        }
        return narrow
    }
}

extension String: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(String.self) }
    static func write(_ value: String, to out: inout ByteBuffer) {
        out.append(ArchiveTag.string)
        out.appendString(value)
    }
    static func read(from reader: inout ByteReader) throws -> String {
        try reader.expect(ArchiveTag.string, "a string")
        return try reader.string()
    }
}

extension Data: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(Data.self) }
    static func write(_ value: Data, to out: inout ByteBuffer) {
        out.append(ArchiveTag.data)
        out.appendVarint(value.count)
        value.withUnsafeBytes { out.append($0) }
    }
    static func read(from reader: inout ByteReader) throws -> Data {
        try reader.expect(ArchiveTag.data, "data")
        return Data(try reader.lengthPrefixed())
    }
}

extension Date: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(Date.self) }
    static func write(_ value: Date, to out: inout ByteBuffer) {
        out.append(ArchiveTag.date)
        out.appendLittleEndian(value.timeIntervalSinceReferenceDate.bitPattern)
    }
    static func read(from reader: inout ByteReader) throws -> Date {
        try reader.expect(ArchiveTag.date, "a date")
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed(UInt64.self)))
    }
}

extension URL: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(URL.self) }
    static func write(_ value: URL, to out: inout ByteBuffer) {
        out.append(ArchiveTag.url)
        out.appendString(value.absoluteString)
    }
    static func read(from reader: inout ByteReader) throws -> URL {
        try reader.expect(ArchiveTag.url, "a URL")
        let start = reader.pos
        let string = try reader.string()
        guard let url = URL(string: string) else {
            throw ArchiveError(.corrupt, "\"\(string)\" is not a URL", offset: start)
        }
        return url
    }
}

extension UUID: Archivable, ArchivePrimitive {
    /// Writes the value inline.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }
    /// Reads the value.
    public init(from archive: ArchiveDecoder) throws { self = try archive.decodePrimitive(UUID.self) }
    static func write(_ value: UUID, to out: inout ByteBuffer) {
        out.append(ArchiveTag.uuid)
        withUnsafeBytes(of: value.uuid) { out.append($0) }
    }
    static func read(from reader: inout ByteReader) throws -> UUID {
        try reader.expect(ArchiveTag.uuid, "a UUID")
        let raw = try reader.bytes(16)
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
        return UUID(uuid: uuid)
    }
}

extension Decimal: Archivable, ArchivePrimitive {
    /// Writes the value inline, exactly: its exponent, sign and the mantissa's significant
    /// bytes (4 bytes for `1.5`, where Foundation's `Codable` form is a record of five fields
    /// with an eight-element mantissa). Also how the `Codable` coder writes a `Decimal`.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodePrimitive(self) }

    /// Reads the value; also the record Foundation's `Codable` conformance writes (archives
    /// written before `Decimal` had a tag of its own).
    public init(from archive: ArchiveDecoder) throws {
        if archive.storage.pointee.pendingValueTag() == ArchiveTag.record {
            try archive.storage.pointee.chargeCodableLevel()
            try self.init(from: CodableArchiveDecoder(archive: archive))
            return
        }
        self = try archive.decodePrimitive(Decimal.self)
    }

    /// The most mantissa bytes a `Decimal` has: 128 bits.
    static let maximumMantissaBytes = 16

    static func write(_ value: Decimal, to out: inout ByteBuffer) {
        out.holdsDecimal = true
        out.append(ArchiveTag.decimal)
        guard !value.isNaN else {
            out.append(0, 1)  // exponent 0; negative, no mantissa
            return
        }
        // Only public API, on every platform: the exponent, and the significand (the mantissa
        // as an integer) in decimal digits. Trailing zeros move into the exponent, as far as
        // it goes, so that the reader's parse of the digits, which moves them so, adds nothing.
        var exponent = value.exponent
        var digits = Array(value.significand.description.utf8)
        while digits.count > 1, digits.last == UInt8(ascii: "0"), exponent < Int(Int8.max) {
            digits.removeLast()
            exponent += 1
        }
        var (high, low): (UInt64, UInt64) = (0, 0)
        for digit in digits where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) {  // at most 39: below 2^128
            let product = low.multipliedFullWidth(by: 10)
            high = high &* 10 &+ product.high
            let (sum, carry) = product.low.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            low = sum
            if carry { high &+= 1 }
        }
        var count = 16
        while count > 0 && (count > 8 ? high >> (8 * (count - 9)) : low >> (8 * (count - 1))) & 0xFF == 0 { count -= 1 }
        out.append(UInt8(bitPattern: Int8(truncatingIfNeeded: exponent)))
        out.append((value.sign == .minus && count > 0 ? 1 : 0) | UInt8(count) << 1)
        for i in 0..<count { out.append(UInt8(truncatingIfNeeded: i < 8 ? low >> (8 * i) : high >> (8 * (i - 8)))) }
    }

    static func read(from reader: inout ByteReader) throws -> Decimal {
        try reader.expect(ArchiveTag.decimal, "a decimal")
        return try readBody(from: &reader)
    }

    /// Reads what follows the tag.
    ///
    /// - Throws: ``ArchiveError`` `corrupt` for flags outside the format or a value `Decimal`
    ///   cannot hold; `truncated`.
    static func readBody(from reader: inout ByteReader) throws -> Decimal {
        let start = reader.pos
        let exponent = Int(Int8(bitPattern: try reader.byte()))
        let flags = try reader.byte()
        let count = Int(flags >> 1)
        guard count <= maximumMantissaBytes else {
            throw ArchiveError(
                .corrupt,
                "decimal flags 0x\(String(flags, radix: 16)) outside the format",
                offset: start + 1
            )
        }
        let bytes = try reader.bytes(count)
        let negative = flags & 1 != 0
        if count == 0 { return negative ? .nan : Decimal(sign: .plus, exponent: exponent, significand: 0) }
        var (high, low): (UInt64, UInt64) = (0, 0)
        for i in 0..<count {
            if i < 8 { low |= UInt64(bytes[i]) << (8 * i) } else { high |= UInt64(bytes[i]) << (8 * (i - 8)) }
        }
        var digits: [UInt8] = []
        repeat {
            let (highQuotient, highRemainder) = high.quotientAndRemainder(dividingBy: 10)
            let (lowQuotient, remainder) = UInt64(10).dividingFullWidth((high: highRemainder, low: low))
            (high, low) = (highQuotient, lowQuotient)
            digits.append(UInt8(ascii: "0") + UInt8(remainder))
        } while high != 0 || low != 0
        guard let significand = Decimal(string: String(decoding: digits.reversed(), as: UTF8.self)) else {
            throw ArchiveError(.corrupt, "decimal mantissa does not parse", offset: start + 2)
        }
        let value = Decimal(sign: negative ? .minus : .plus, exponent: exponent, significand: significand)
        // Past what a `Decimal` holds (its parse moved the mantissa's trailing zeros into the
        // exponent, beyond 127): `Decimal` answers NaN.
        guard !value.isNaN else {
            throw ArchiveError(.corrupt, "decimal outside the range of Decimal", offset: start)
        }
        return value
    }
}

extension ByteReader {
    /// Skips what follows a decimal's tag, checked as ``Decimal/readBody(from:)`` checks it.
    mutating func skipDecimal() throws { _ = try Decimal.readBody(from: &self) }
}
