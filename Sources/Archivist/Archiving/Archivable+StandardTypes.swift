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
    static func write(_ value: Bool, to out: inout ByteBuffer) { out.append(value ? ArchiveTag.trueValue : ArchiveTag.falseValue) }
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
