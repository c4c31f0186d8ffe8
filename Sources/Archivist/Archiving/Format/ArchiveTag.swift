/// The first byte of every encoded value. See `docs/ArchiveFormat.md`.
enum ArchiveTag {
    static let null: UInt8 = 0x00
    static let falseValue: UInt8 = 0x01
    static let trueValue: UInt8 = 0x02
    /// Zigzag LEB128 varint.
    static let signed: UInt8 = 0x03
    /// LEB128 varint.
    static let unsigned: UInt8 = 0x04
    /// 4 bytes, IEEE 754 binary32, little-endian.
    static let float32: UInt8 = 0x05
    /// 8 bytes, IEEE 754 binary64, little-endian.
    static let float64: UInt8 = 0x06
    /// Varint byte count, then UTF-8.
    static let string: UInt8 = 0x07
    /// Varint byte count, then the bytes.
    static let data: UInt8 = 0x08
    /// 8 bytes, binary64 seconds since 2001-01-01T00:00:00Z, little-endian.
    static let date: UInt8 = 0x09
    /// Varint byte count, then the URL's absolute string in UTF-8.
    static let url: UInt8 = 0x0A
    /// 16 bytes, the UUID in RFC 4122 byte order.
    static let uuid: UInt8 = 0x0B
    /// u32 body length, u32 count, then `count` values.
    static let array: UInt8 = 0x0C
    /// u32 body length, u32 count, then `count` key/value pairs of values.
    static let dictionary: UInt8 = 0x0D
    /// u32 body length, varint type reference (0 = anonymous, n = type table entry n-1),
    /// then fields (varint key index, value) until the body ends.
    static let record: UInt8 = 0x0E
    /// Varint object id, then the object's value (normally a record, with its own tag).
    static let object: UInt8 = 0x0F
    /// Varint object id of an object defined elsewhere in the archive (or never, for a
    /// conditional reference).
    static let reference: UInt8 = 0x10
    /// A `Decimal`: 1 byte exponent (two's complement), 1 byte flags (bit 0 negative, bits
    /// 1–7 the mantissa's byte count, at most 16), then the mantissa little-endian in that many
    /// bytes. A negative zero is Decimal's NaN.
    static let decimal: UInt8 = 0x11

    /// A name for error messages.
    static func name(_ tag: UInt8) -> String {
        switch tag {
        case null: "nil"
        case falseValue, trueValue: "bool"
        case signed, unsigned: "integer"
        case float32, float64: "floating point"
        case string: "string"
        case data: "data"
        case date: "date"
        case url: "url"
        case uuid: "uuid"
        case array: "array"
        case dictionary: "dictionary"
        case record: "keyed record"
        case object: "object"
        case reference: "object reference"
        case decimal: "decimal"
        default: "unknown tag 0x\(String(tag, radix: 16))"
        }
    }
}

/// Fixed facts of the native format.
enum ArchiveFormat {
    /// `0x89 'A' 'R' 'V'`: the high byte catches 7-bit transports, the letters name the format.
    static let magic: (UInt8, UInt8, UInt8, UInt8) = (0x89, 0x41, 0x52, 0x56)
    /// The version this code writes for an archive without a `Decimal`; it also reads version
    /// 1 (``ArchiveHeader``).
    static let version: UInt16 = 2
    /// The version of an archive holding a `Decimal` (tag ``ArchiveTag/decimal``): laid out
    /// as version 2, with that one tag more. Written only when needed, so every other archive
    /// stays readable by readers that know versions 1 and 2.
    static let decimalVersion: UInt16 = 3
    /// Version 1's fixed header: magic 4 + version 2 + flags 2 + total length 8 + tables
    /// offset 8 + CRC32C 4.
    static let version1HeaderSize = 28
    /// Version 2's fixed part: magic 4 + version 2 + CRC32C 4; varint total length and
    /// varint tables offset follow.
    static let fixedHeaderSize = 10
    /// Room the encoder keeps for the header before the body: the fixed part and two
    /// varints of at most 9 bytes each (lengths below 2^63).
    static let reservedHeaderSize = fixedHeaderSize + 18

    /// The size of the header before a body whose tables start `bodyLength` bytes in and
    /// which `payload` bytes follow: the total length the header stores counts the header
    /// itself, whose size depends on that varint.
    static func headerSize(bodyLength: Int, payload: Int) -> Int {
        let fixedPart = fixedHeaderSize + ByteBuffer.varintSize(UInt64(bodyLength))
        var headerSize = fixedPart + 1
        while fixedPart + ByteBuffer.varintSize(UInt64(headerSize + payload)) != headerSize { headerSize += 1 }
        return headerSize
    }

    /// Writes the header at `base` (magic, `version`, total length, tables offset) leaving the
    /// CRC32C at offset 6 for the caller, who knows the checked bytes; returns the offset
    /// after the header.
    static func storeHeader(
        at base: UnsafeMutableRawPointer,
        total: Int,
        bodyLength: Int,
        version: UInt16 = version
    ) -> Int {
        storeMagicAndVersion(at: base, version: version)
        var offset = fixedHeaderSize
        ByteBuffer.storeVarint(UInt64(total), at: base, offset: &offset)
        ByteBuffer.storeVarint(UInt64(bodyLength), at: base, offset: &offset)
        return offset
    }

    /// ``storeHeader(at:total:bodyLength:)`` with the two varints written in `totalSize` and
    /// `bodyLengthSize` bytes (at least their minimal sizes, at most 10): a longer header that
    /// every reader parses alike, used to place the body at a chosen offset.
    static func storeHeader(
        at base: UnsafeMutableRawPointer,
        total: Int,
        totalSize: Int,
        bodyLength: Int,
        bodyLengthSize: Int
    ) -> Int {
        storeMagicAndVersion(at: base)
        var offset = fixedHeaderSize
        ByteBuffer.storeVarint(UInt64(total), size: totalSize, at: base, offset: &offset)
        ByteBuffer.storeVarint(UInt64(bodyLength), size: bodyLengthSize, at: base, offset: &offset)
        return offset
    }

    private static func storeMagicAndVersion(at base: UnsafeMutableRawPointer, version: UInt16 = version) {
        base.storeBytes(of: magic.0, toByteOffset: 0, as: UInt8.self)
        base.storeBytes(of: magic.1, toByteOffset: 1, as: UInt8.self)
        base.storeBytes(of: magic.2, toByteOffset: 2, as: UInt8.self)
        base.storeBytes(of: magic.3, toByteOffset: 3, as: UInt8.self)
        base.storeBytes(of: version.littleEndian, toByteOffset: 4, as: UInt16.self)
    }
}
