/// Writes a ``PropertyListDocument`` as a canonical `bplist00`.
///
/// The bridge hands Foundation only bytes this writer produced from a validated document, so
/// NSKeyedUnarchiver never parses the caller's original bytes: whatever CoreFoundation's parser
/// would have made of odd but accepted input (a parser differential), it now sees one plain
/// encoding of exactly the tree that was validated.
enum BinaryPropertyListWriter {
    /// Encodes every node of `document`, keeping its table order and sharing.
    ///
    /// - Complexity: O(*n*) in the size of the document.
    static func write(_ document: PropertyListDocument) -> [UInt8] {
        let count = document.nodes.count
        let referenceSize = byteWidth(UInt64(count))
        var out = Array("bplist00".utf8)
        // Most nodes are a marker and a few bytes; growing the buffer from empty copies it at
        // every doubling (the `keyed` suite's writes guard it).
        out.reserveCapacity(count * 12 + 64)
        var offsets: [Int] = []
        offsets.reserveCapacity(count)
        for node in document.nodes {
            offsets.append(out.count)
            switch node {
            case .bool(let value): out.append(value ? 0x09 : 0x08)
            case .integer(let value): appendInteger(value, to: &out)
            case .unsignedInteger(let value):
                out.append(0x14)
                append(0, size: 8, to: &out)
                append(value, size: 8, to: &out)
            case .real(let value):
                out.append(0x23)
                append(value.bitPattern, size: 8, to: &out)
            case .date(let value):
                out.append(0x33)
                append(value.bitPattern, size: 8, to: &out)
            case .data(let bytes):
                appendHeader(0x40, count: bytes.count, to: &out)
                out += bytes
            case .string(let string):
                if string.utf8.allSatisfy({ $0 < 0x80 }) {
                    appendHeader(0x50, count: string.utf8.count, to: &out)
                    out += string.utf8
                } else {
                    let units = Array(string.utf16)
                    appendHeader(0x60, count: units.count, to: &out)
                    for unit in units { append(UInt64(unit), size: 2, to: &out) }
                }
            case .uid(let value):
                let size = byteWidth(value)
                out.append(0x80 | UInt8(size - 1))
                append(value, size: size, to: &out)
            case .array(let elements):
                appendHeader(0xA0, count: elements.count, to: &out)
                for element in elements { append(UInt64(element), size: referenceSize, to: &out) }
            case .dictionary(let keys, let values):
                appendHeader(0xD0, count: keys.count, to: &out)
                for reference in keys { append(UInt64(reference), size: referenceSize, to: &out) }
                for reference in values { append(UInt64(reference), size: referenceSize, to: &out) }
            }
        }
        let tableOffset = out.count
        let offsetSize = byteWidth(UInt64(tableOffset))
        for offset in offsets { append(UInt64(offset), size: offsetSize, to: &out) }
        out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        append(UInt64(count), size: 8, to: &out)
        append(UInt64(document.root), size: 8, to: &out)
        append(UInt64(tableOffset), size: 8, to: &out)
        return out
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    private static func byteWidth(_ value: UInt64) -> Int {
        switch value {
        case ..<0x100: 1
        case ..<0x1_0000: 2
        case ..<0x1_0000_0000: 4
        default: 8
        }
    }

    /// Appends the low `size` bytes of `value`, big-endian.
    private static func append(_ value: UInt64, size: Int, to out: inout [UInt8]) {
        switch size {
        case 1:
            out.append(UInt8(truncatingIfNeeded: value))
        case 2:
            out.append(UInt8(truncatingIfNeeded: value >> 8))
            out.append(UInt8(truncatingIfNeeded: value))
        default:
            var shift = (size - 1) * 8
            while shift >= 0 {
                out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
                shift -= 8
            }
        }
    }

    private static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 {
            out.append(0x13)
            append(UInt64(bitPattern: value), size: 8, to: &out)
            return
        }
        let size = byteWidth(UInt64(value))
        // 8-byte integers are signed; non-negative values below 2^32 use the short unsigned forms.
        out.append(0x10 | UInt8(size.trailingZeroBitCount))
        append(UInt64(value), size: size, to: &out)
    }

    private static func appendHeader(_ marker: UInt8, count: Int, to out: inout [UInt8]) {
        if count < 15 {
            out.append(marker | UInt8(count))
        } else {
            out.append(marker | 0x0F)
            appendInteger(Int64(count), to: &out)
        }
    }
}
