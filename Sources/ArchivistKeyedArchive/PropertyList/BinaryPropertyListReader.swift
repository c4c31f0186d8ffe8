import Archivist

/// Reads Apple's binary property list format (`bplist00`) without trusting a single byte.
///
/// Every offset, count and object reference is checked against the input before use; counts
/// are bounded by the bytes that could hold them, so nothing is allocated beyond a small
/// multiple of the input size. Objects are read one by one from the offset table, never by
/// recursion, into a flat ``PropertyListDocument``. Nesting cycles and depth are checked later by
/// ``KeyedArchiveValidator``.
///
/// Layout: the 8-byte magic, objects, an offset table (one big-endian offset per object), and a
/// 32-byte trailer: 6 unused bytes, offset size, object-reference size, object count, top
/// object, offset-table offset (the last three 8-byte big-endian).
struct BinaryPropertyListReader {
    private let bytes: [UInt8]
    private let limits: ArchiveLimits

    /// Whether `bytes` start with the binary plist magic.
    static func hasMagic(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer(hasMagic)
    }

    /// Whether `bytes` start with the binary plist magic.
    static func hasMagic(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.count >= 8 && bytes[0..<8].elementsEqual("bplist00".utf8)
    }

    init(bytes: [UInt8], limits: ArchiveLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    /// Parses the whole object table.
    ///
    /// - Throws: `ArchiveError` `.truncated`, `.badMagic`, `.corrupt` or
    ///   `.limitExceeded(.objectCount / .elementCount)`.
    /// - Complexity: O(*n*) in the input size.
    mutating func read() throws -> PropertyListDocument {
        try bytes.withUnsafeBufferPointer { try Self.read($0, limits: limits) }
    }

    /// Parses the whole object table of `bytes` (read in place: callers holding `Data` need
    /// not copy it into an array first).
    static func read(_ bytes: UnsafeBufferPointer<UInt8>, limits: ArchiveLimits) throws -> PropertyListDocument {
        guard bytes.count >= 8 + 32 else {
            throw ArchiveError(
                .truncated,
                "binary property list shorter than its header and trailer",
                offset: bytes.count
            )
        }
        guard hasMagic(bytes) else { throw ArchiveError(.badMagic, "missing bplist00 magic", offset: 0) }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        guard [1, 2, 4, 8].contains(offsetSize), [1, 2, 4, 8].contains(referenceSize) else {
            throw ArchiveError(.corrupt, "bad offset or reference size in trailer", offset: trailer + 6)
        }
        let count = readUInt(bytes, at: trailer + 8, size: 8)
        let top = readUInt(bytes, at: trailer + 16, size: 8)
        let table = readUInt(bytes, at: trailer + 24, size: 8)
        guard count >= 1, top < count, table >= 8, table <= UInt64(trailer) else {
            throw ArchiveError(.corrupt, "trailer counts or offsets out of range", offset: trailer + 8)
        }
        // The offset table must fit between its start and the trailer; this also bounds `count`.
        let (tableBytes, overflow) = count.multipliedReportingOverflow(by: UInt64(offsetSize))
        // Subtract, never add: `table + tableBytes` overflows for a count near 2^64.
        guard !overflow, tableBytes <= UInt64(trailer) - table else {
            throw ArchiveError(.truncated, "offset table runs past the trailer", offset: Int(table))
        }
        guard count <= UInt64(limits.maxObjectCount) else {
            throw ArchiveError(.limitExceeded(.objectCount), "\(count) plist objects exceed maxObjectCount")
        }
        let objectCount = Int(count)
        let tableOffset = Int(table)
        let storage = PropertyListDocument.ReferenceStorage([])
        let notes = BinaryPropertyListNotes()
        let objects = BinaryPropertyListObjects(
            bytes: bytes,
            tableOffset: tableOffset,
            referenceSize: referenceSize,
            objectCount: objectCount,
            limits: limits,
            storage: storage,
            notes: notes
        )
        var strings = SmallStringCache()
        // Every container's references, in one array the nodes' `References` are runs of (an
        // archive's containers hold about one reference per object).
        var references: [Int] = []
        references.reserveCapacity(objectCount)
        // Each node is written in place (appending copies it in and checks the capacity for
        // every node; the `keyed` suite's decodes guard it). `objectCount` is at least 1, so
        // this never writes the shared empty-array storage; on a throw the array deinitializes
        // the `initialized` first nodes.
        let nodes = try [PropertyListDocument.Node](unsafeUninitializedCapacity: objectCount) { buffer, initialized in
            for index in 0..<objectCount {
                let offset = objects.readUInt(at: tableOffset + index * offsetSize, size: offsetSize)
                guard offset >= 8, offset < UInt64(tableOffset) else {
                    throw ArchiveError(
                        .corrupt,
                        "object \(index) offset out of range",
                        offset: tableOffset + index * offsetSize
                    )
                }
                buffer.initializeElement(
                    at: index,
                    to: try objects.readObject(
                        at: Int(offset),
                        strings: &strings,
                        references: &references
                    )
                )
                initialized = index + 1
            }
        }
        storage.values = references
        // The first NaN date, found again by its offset (only when there is one).
        let firstNaNDate = notes.firstNaNDateOffset.flatMap { nanOffset in
            (0..<objectCount).first {
                objects.readUInt(at: tableOffset + $0 * offsetSize, size: offsetSize) == UInt64(nanOffset)
            }
        }
        return PropertyListDocument(nodes: nodes, root: Int(top), format: .binary, firstNaNDate: firstNaNDate)
    }

    private static func readUInt(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, size: Int) -> UInt64 {
        precondition(offset >= 0 && size <= bytes.count - offset)
        var value: UInt64 = 0
        for byte in bytes[offset..<(offset + size)] { value = value << 8 | UInt64(byte) }
        return value
    }

    /// Decodes UTF-16 code units, failing on unpaired surrogates instead of repairing them.
    static func decodeUTF16(_ units: [UInt16]) -> String? {
        var scalars = String.UnicodeScalarView()
        var iterator = units.makeIterator()
        var decoder = UTF16()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: return String(scalars)
            case .error: return nil
            }
        }
    }
}

/// The object area of a binary plist whose trailer was checked, read through a pointer (this
/// runs once per object, and array slices cost a retain and bounds checks per read).
private struct BinaryPropertyListObjects {
    let bytes: UnsafeBufferPointer<UInt8>
    /// Where the offset table starts: objects lie in `8..<tableOffset`.
    let tableOffset: Int
    let referenceSize: Int
    let objectCount: Int
    let limits: ArchiveLimits
    /// The storage every container's ``PropertyListDocument/References`` point into; it gets its
    /// values once the whole table is read.
    let storage: PropertyListDocument.ReferenceStorage
    /// What reading found on the way (held by reference: the reader is not mutated per object).
    let notes: BinaryPropertyListNotes

    init(
        bytes: UnsafeBufferPointer<UInt8>,
        tableOffset: Int,
        referenceSize: Int,
        objectCount: Int,
        limits: ArchiveLimits,
        storage: PropertyListDocument.ReferenceStorage,
        notes: BinaryPropertyListNotes
    ) {
        self.storage = storage
        self.notes = notes
        self.bytes = bytes
        self.tableOffset = tableOffset
        self.referenceSize = referenceSize
        self.objectCount = objectCount
        self.limits = limits
    }

    /// Whether every byte is below 0x80, checked eight bytes at a time.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let raw = UnsafeRawBufferPointer(bytes)
        var position = 0
        var high: UInt64 = 0
        while position + 8 <= raw.count {
            high |= raw.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            position += 8
        }
        while position < raw.count {
            high |= UInt64(raw[position])
            position += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }

    /// A big-endian unsigned integer of `size` bytes; callers have checked the range.
    ///
    /// The usual sizes are one unaligned load each: this runs for every offset-table entry and
    /// every reference, where a loop over the bytes is a visible share of the parse (the
    /// `keyed` suite's decodes guard it).
    @inline(__always)
    func readUInt(at offset: Int, size: Int) -> UInt64 {
        precondition(offset >= 0 && size >= 0 && size <= bytes.count - offset)
        let raw = UnsafeRawPointer(bytes.baseAddress!) + offset
        switch size {
        case 1: return UInt64(raw.load(as: UInt8.self))
        case 2: return UInt64(UInt16(bigEndian: raw.loadUnaligned(as: UInt16.self)))
        case 4: return UInt64(UInt32(bigEndian: raw.loadUnaligned(as: UInt32.self)))
        case 8: return UInt64(bigEndian: raw.loadUnaligned(as: UInt64.self))
        default:
            var value: UInt64 = 0
            for position in offset..<(offset + size) { value = value << 8 | UInt64(bytes[position]) }
            return value
        }
    }

    /// Checks that `length` bytes from `offset` lie inside the object area.
    @inline(__always)
    func requireBytes(_ offset: Int, _ length: Int) throws {
        guard length >= 0, offset <= tableOffset, length <= tableOffset - offset else {
            throw ArchiveError(.truncated, "object runs past the object area", offset: offset)
        }
    }

    /// Reads the element count of a marker whose low nibble may say "count follows as an int".
    @inline(__always)
    func readCount(marker: UInt8, at offset: Int) throws -> (count: Int, start: Int) {
        let nibble = Int(marker & 0x0F)
        if nibble != 0x0F { return (nibble, offset + 1) }
        try requireBytes(offset + 1, 1)
        let intMarker = bytes[offset + 1]
        guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else {
            throw ArchiveError(.corrupt, "bad count marker", offset: offset + 1)
        }
        let size = 1 << Int(intMarker & 0x0F)
        try requireBytes(offset + 2, size)
        let value = readUInt(at: offset + 2, size: size)
        guard value <= UInt64(tableOffset) else {
            throw ArchiveError(.truncated, "count \(value) exceeds the input", offset: offset + 2)
        }
        return (Int(value), offset + 2 + size)
    }

    /// Checks that a container of `count` references fits the limits and the input.
    @inline(__always)
    func checkReferences(count: Int, at start: Int) throws {
        guard count <= limits.maxElementCount else {
            throw ArchiveError(.limitExceeded(.elementCount), "container of \(count) elements", offset: start)
        }
        guard count <= tableOffset / referenceSize else {
            throw ArchiveError(.truncated, "container count exceeds the input", offset: start)
        }
        try requireBytes(start, count * referenceSize)
    }

    /// Appends `count` checked references from `start` to `references`, and returns their run.
    func readReferences(
        count: Int,
        at start: Int,
        into references: inout [Int]
    ) throws -> PropertyListDocument.References {
        try checkReferences(count: count, at: start)
        // In bounds: `checkReferences` checked that `count` references from `start` lie in the
        // object area. One loop per width, so each reference is one load and one compare.
        let raw = UnsafeRawPointer(bytes.baseAddress!) + start
        let limit = UInt64(objectCount)
        let first = references.count
        func append(_ reference: UInt64, _ position: Int) throws {
            guard reference < limit else {
                throw ArchiveError(
                    .corrupt,
                    "object reference \(reference) out of range",
                    offset: start + position * referenceSize
                )
            }
            references.append(Int(reference))
        }
        switch referenceSize {
        case 1:
            for position in 0..<count {
                try append(UInt64(raw.load(fromByteOffset: position, as: UInt8.self)), position)
            }
        case 2:
            for position in 0..<count {
                try append(
                    UInt64(UInt16(bigEndian: raw.loadUnaligned(fromByteOffset: 2 * position, as: UInt16.self))),
                    position
                )
            }
        case 4:
            for position in 0..<count {
                try append(
                    UInt64(UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: 4 * position, as: UInt32.self))),
                    position
                )
            }
        default:
            for position in 0..<count {
                try append(readUInt(at: start + position * referenceSize, size: referenceSize), position)
            }
        }
        return PropertyListDocument.References(storage: storage, start: first, count: count)
    }

    /// Reads the object at `offset`. A date of NaN seconds is read as it is, and the first
    /// one's offset noted (the readers refuse it, ``KeyedArchiveDateRule``).
    func readObject(
        at offset: Int,
        strings: inout SmallStringCache,
        references: inout [Int]
    ) throws -> PropertyListDocument.Node {
        try requireBytes(offset, 1)
        let marker = bytes[offset]
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            default: throw ArchiveError(.corrupt, "unsupported plist marker \(marker)", offset: offset)
            }
        case 0x1:
            let exponent = Int(marker & 0x0F)
            guard exponent <= 4 else { throw ArchiveError(.corrupt, "bad integer size", offset: offset) }
            let size = 1 << exponent
            try requireBytes(offset + 1, size)
            if size == 16 {
                // 128-bit form: only values that fit in 64 unsigned bits are written by Apple.
                guard readUInt(at: offset + 1, size: 8) == 0 else {
                    throw ArchiveError(.corrupt, "integer wider than 64 bits", offset: offset)
                }
                let value = readUInt(at: offset + 9, size: 8)
                return value > UInt64(Int64.max) ? .unsignedInteger(value) : .integer(Int64(value))
            }
            let raw = readUInt(at: offset + 1, size: size)
            // 1, 2 and 4-byte integers are unsigned; 8-byte integers are signed.
            return .integer(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
        case 0x2:
            switch marker & 0x0F {
            case 2:
                try requireBytes(offset + 1, 4)
                return .real(Double(Float(bitPattern: UInt32(readUInt(at: offset + 1, size: 4)))))
            case 3:
                try requireBytes(offset + 1, 8)
                return .real(Double(bitPattern: readUInt(at: offset + 1, size: 8)))
            default: throw ArchiveError(.corrupt, "bad real size", offset: offset)
            }
        case 0x3:
            guard marker == 0x33 else { throw ArchiveError(.corrupt, "bad date marker", offset: offset) }
            try requireBytes(offset + 1, 8)
            let seconds = Double(bitPattern: readUInt(at: offset + 1, size: 8))
            if !KeyedArchiveDateRule.allows(seconds), notes.firstNaNDateOffset == nil {
                notes.firstNaNDateOffset = offset
            }
            return .date(seconds)
        case 0x4:
            let (count, start) = try readCount(marker: marker, at: offset)
            try requireBytes(start, count)
            return .data(Array(UnsafeBufferPointer(rebasing: bytes[start..<(start + count)])))
        case 0x5:
            let (count, start) = try readCount(marker: marker, at: offset)
            try requireBytes(start, count)
            if count <= SmallStringCache.maxCount, let string = strings.string(bytes, start: start, count: count) {
                return .string(string)
            }
            let slice = UnsafeBufferPointer(rebasing: bytes[start..<(start + count)])
            guard Self.isASCII(slice) else {
                throw ArchiveError(.corrupt, "non-ASCII byte in ASCII string", offset: start)
            }
            return .string(String(decoding: slice, as: UTF8.self))
        case 0x6:
            let (count, start) = try readCount(marker: marker, at: offset)
            guard count <= tableOffset / 2 else { throw ArchiveError(.truncated, "string too long", offset: offset) }
            try requireBytes(start, count * 2)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            for position in 0..<count { units.append(UInt16(readUInt(at: start + 2 * position, size: 2))) }
            guard let string = BinaryPropertyListReader.decodeUTF16(units) else {
                throw ArchiveError(.corrupt, "invalid UTF-16 string", offset: start)
            }
            return .string(string)
        case 0x8:
            let size = Int(marker & 0x0F) + 1
            guard size <= 8 else { throw ArchiveError(.corrupt, "UID wider than 64 bits", offset: offset) }
            try requireBytes(offset + 1, size)
            return .uid(readUInt(at: offset + 1, size: size))
        case 0xA:
            let (count, start) = try readCount(marker: marker, at: offset)
            return .array(try readReferences(count: count, at: start, into: &references))
        case 0xD:
            let (count, start) = try readCount(marker: marker, at: offset)
            guard count <= tableOffset / 2 else {
                throw ArchiveError(.truncated, "dictionary too long", offset: offset)
            }
            try checkReferences(count: count * 2, at: start)
            return .dictionary(
                keys: try readReferences(count: count, at: start, into: &references),
                values: try readReferences(count: count, at: start + count * referenceSize, into: &references)
            )
        default:
            throw ArchiveError(.corrupt, "unsupported plist marker \(marker)", offset: offset)
        }
    }

}

/// The short ASCII strings a binary plist parse made last, by content, so that a string the plist
/// holds many times becomes a `String` once.
///
/// NSKeyedArchiver archives repeat their short strings many times over: corelibs writes every
/// instance's field names anew (20,000 letters hold 140,000 key strings with 7 distinct names),
/// and values such as names and dates repeat too. Making a `String` validates its bytes and
/// builds it; a hit here is two loads, a hash and three compares (the `keyed` suite's
/// decodes guard it). Direct-mapped over 256 slots: constant memory, whatever the input; a
/// miss (a new string, or a collision) only makes the string the usual way.
struct SmallStringCache {
    /// The longest string kept: a small `String` holds up to 15 UTF-8 bytes inline (no allocation).
    static var maxCount: Int { 15 }
    private static var slotCount: Int { 256 }

    private struct Entry {
        var low: UInt64
        var high: UInt64
        /// The byte count, or -1 for an empty slot.
        var count: Int
        var string: String
    }

    private var entries = [Entry](repeating: Entry(low: 0, high: 0, count: -1, string: ""), count: 256)

    /// The string of the `count` (at most ``maxCount``) bytes at `start`, or `nil` when they are
    /// not all ASCII (the caller reports that). The caller has checked that the bytes lie in the
    /// object area, which the 32-byte trailer follows, so 16 bytes from `start` are in the input.
    @inline(__always)
    mutating func string(_ bytes: UnsafeBufferPointer<UInt8>, start: Int, count: Int) -> String? {
        guard start >= 0, bytes.count - start >= 16 else { return nil }
        let raw = UnsafeRawPointer(bytes.baseAddress!) + start
        var low = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
        var high = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        // Keep only the string's own bytes (byte i of the input is bits 8i..<8i+8 of the pair).
        if count < 8 {
            low &= (1 &<< UInt64(8 * count)) &- 1
            high = 0
        } else {
            high &= (1 &<< UInt64(8 * (count - 8))) &- 1
        }
        guard (low | high) & 0x8080_8080_8080_8080 == 0 else { return nil }
        let hash = (low &* 0x9E37_79B9_7F4A_7C15) ^ (high &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(count)
        let slot = Int(truncatingIfNeeded: (hash ^ (hash >> 29)) >> 56) & (Self.slotCount - 1)
        if entries[slot].count == count, entries[slot].low == low, entries[slot].high == high {
            return entries[slot].string
        }
        let string = String(
            decoding: UnsafeBufferPointer(start: bytes.baseAddress! + start, count: count),
            as: UTF8.self
        )
        entries[slot] = Entry(low: low, high: high, count: count, string: string)
        return string
    }
}

/// What reading a binary plist notes besides the nodes.
final class BinaryPropertyListNotes {
    /// The offset of the first date of NaN seconds, if any.
    var firstNaNDateOffset: Int?
}
