import Foundation

/// A native archive read into a tree of its values, for tools that show what an archive holds
/// (`archivist inspect`): records with their type names and keys, objects with their ids,
/// references as ids. No `Archivable` type is needed and nothing is instantiated.
///
/// Reading is bounded as ``Archive/decode(_:from:options:)`` is: every length and count is
/// checked against the bytes left, depth stays within ``ArchiveLimits/maxDepth`` (a level
/// weighs 2, as in decoding) and object ids within the object table, so any byte string gives
/// an outline or an ``ArchiveError``. Large data values keep only their first bytes.
///
/// ```swift
/// let outline = try ArchiveOutline(bytes: data)
/// if case .record(let type, let fields) = outline.root { print(type?.name ?? "-", fields.map(\.key)) }
/// ```
package struct ArchiveOutline: Sendable {
    /// A type table entry: the name a record was written under and its version.
    package struct TypeEntry: Sendable, Hashable {
        package var name: String
        package var version: Int64
    }

    /// One value of the archive.
    package indirect enum Value: Sendable {
        case null
        case bool(Bool)
        case signed(Int64)
        case unsigned(UInt64)
        case float(Float)
        case double(Double)
        case string(String)
        /// Bytes: how many, and the first ``ArchiveOutline/dataPrefixLimit`` of them.
        case data(count: Int, prefix: [UInt8])
        /// Seconds since 2001-01-01 00:00:00 UTC.
        case date(Double)
        case url(String)
        case uuid(UUID)
        /// A `Decimal`, exactly as written.
        case decimal(Decimal)
        case array([Value])
        case dictionary([(key: Value, value: Value)])
        /// A keyed record: its type entry (`nil` for an anonymous record, as Codable writes)
        /// and its fields in the order they were written.
        case record(type: TypeEntry?, fields: [(key: String, value: Value)])
        /// The definition of the object `id`.
        case object(id: Int, value: Value)
        /// A reference to the object `id`, defined elsewhere in the archive (or never, for a
        /// conditional reference).
        case reference(id: Int)
    }

    /// How many leading bytes of a data value the outline keeps.
    package static let dataPrefixLimit = 64

    /// The format version, 1, 2 or 3.
    package var version: Int
    /// The archive's length in bytes.
    package var byteCount: Int
    /// The CRC32C the header stores.
    package var storedChecksum: UInt32
    /// Whether the bytes match ``storedChecksum``.
    package var checksumMatches: Bool
    /// The type table.
    package var types: [TypeEntry]
    /// The key table.
    package var keys: [String]
    /// How many objects the object table lists.
    package var objectCount: Int
    /// The objects the table lists but the archive never defines (conditional references).
    package var undefinedObjects: [Int]
    /// The root value.
    package var root: Value

    /// Reads the archive `bytes`. A checksum mismatch is reported in ``checksumMatches``
    /// rather than thrown, so a damaged archive can still be looked at; everything else a
    /// reader checks throws.
    ///
    /// - Throws: ``ArchiveError`` (`badMagic`, `unsupportedVersion`, `truncated`, `corrupt`,
    ///   `limitExceeded`) for bytes that are not a readable native archive.
    /// - Complexity: O(n) in the archive's length; memory O(n).
    package init(bytes: Data, limits: ArchiveLimits = ArchiveLimits()) throws {
        guard bytes.count <= limits.maxTotalBytes else {
            throw ArchiveError(.limitExceeded(.totalBytes), "\(bytes.count) bytes, limit \(limits.maxTotalBytes)")
        }
        self = try bytes.withUnsafeBytes { raw in try Self.read(raw, limits: limits) }
    }

    private init(
        version: Int,
        byteCount: Int,
        storedChecksum: UInt32,
        checksumMatches: Bool,
        types: [TypeEntry],
        keys: [String],
        objectCount: Int,
        undefinedObjects: [Int],
        root: Value
    ) {
        self.version = version
        self.byteCount = byteCount
        self.storedChecksum = storedChecksum
        self.checksumMatches = checksumMatches
        self.types = types
        self.keys = keys
        self.objectCount = objectCount
        self.undefinedObjects = undefinedObjects
        self.root = root
    }

    private static func read(_ raw: UnsafeRawBufferPointer, limits: ArchiveLimits) throws -> ArchiveOutline {
        let header = try ArchiveHeader(parsing: raw)
        guard let base = raw.baseAddress else { throw ArchiveError(.truncated, "empty input", offset: 0) }
        let matches = header.checksum(of: raw) == header.storedChecksum
        var tables = ByteReader(base: base, start: header.tablesOffset, end: raw.count)
        let typeCount = try tables.index(below: tables.remaining + 1, "type count")
        var types: [TypeEntry] = []
        for _ in 0..<typeCount {
            let name = try tables.string()
            types.append(TypeEntry(name: name, version: Int64(bitPattern: try tables.varint())))
        }
        let keyCount = try tables.index(below: tables.remaining + 1, "key count")
        var keys: [String] = []
        for _ in 0..<keyCount { keys.append(try tables.string()) }
        let objectCount = try tables.index(below: tables.remaining + 1, "object count")
        guard objectCount <= limits.maxObjectCount else {
            throw ArchiveError(.limitExceeded(.objectCount), "\(objectCount) objects, limit \(limits.maxObjectCount)")
        }
        var undefined: [Int] = []
        let offsetBase = header.version == 1 ? 0 : header.bodyStart
        for id in 0..<objectCount {
            let stored = try tables.index(below: header.tablesOffset - offsetBase + 1, "object offset")
            if stored == 0 { undefined.append(id) }
        }
        guard tables.pos == raw.count else {
            throw ArchiveError(.corrupt, "\(raw.count - tables.pos) unread bytes after the tables", offset: tables.pos)
        }
        var walker = Walker(
            reader: ByteReader(base: base, start: header.bodyStart, end: header.tablesOffset),
            types: types,
            keys: keys,
            objectCount: objectCount,
            limits: limits
        )
        let root = try walker.value(depth: 0)
        guard walker.reader.pos == header.tablesOffset else {
            throw ArchiveError(.corrupt, "the root value ends before the tables", offset: walker.reader.pos)
        }
        return ArchiveOutline(
            version: Int(header.version),
            byteCount: raw.count,
            storedChecksum: header.storedChecksum,
            checksumMatches: matches,
            types: types,
            keys: keys,
            objectCount: objectCount,
            undefinedObjects: undefined,
            root: root
        )
    }

    /// The recursive reader of values; its depth is bounded by the limits.
    private struct Walker {
        var reader: ByteReader
        let types: [TypeEntry]
        let keys: [String]
        let objectCount: Int
        let limits: ArchiveLimits

        mutating func value(depth: Int) throws -> Value {
            guard depth <= limits.maxDepth else {
                throw ArchiveError(
                    .limitExceeded(.depth),
                    "values nest deeper than \(limits.maxDepth)",
                    offset: reader.pos
                )
            }
            let tagOffset = reader.pos
            let tag = try reader.byte()
            switch tag {
            case ArchiveTag.null: return .null
            case ArchiveTag.falseValue: return .bool(false)
            case ArchiveTag.trueValue: return .bool(true)
            case ArchiveTag.signed:
                let raw = try reader.varint()
                return .signed(Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))))
            case ArchiveTag.unsigned: return .unsigned(try reader.varint())
            case ArchiveTag.float32: return .float(Float(bitPattern: try reader.fixed(UInt32.self)))
            case ArchiveTag.float64: return .double(Double(bitPattern: try reader.fixed(UInt64.self)))
            case ArchiveTag.date: return .date(Double(bitPattern: try reader.fixed(UInt64.self)))
            case ArchiveTag.string: return .string(try reader.string())
            case ArchiveTag.url: return .url(try reader.string())
            case ArchiveTag.data:
                let bytes = try reader.lengthPrefixed()
                return .data(count: bytes.count, prefix: Array(bytes.prefix(ArchiveOutline.dataPrefixLimit)))
            case ArchiveTag.decimal: return .decimal(try Decimal.readBody(from: &reader))
            case ArchiveTag.uuid:
                let bytes = try reader.bytes(16)
                var uuid = UUID().uuid
                withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
                return .uuid(UUID(uuid: uuid))
            case ArchiveTag.array, ArchiveTag.dictionary:
                let length = Int(clamping: try reader.fixed(UInt32.self))
                guard length >= 4, length <= reader.remaining else {
                    throw ArchiveError(.corrupt, "container length \(length) outside its parent", offset: tagOffset)
                }
                let end = reader.pos + length
                let count = Int(clamping: try reader.fixed(UInt32.self))
                let perElement = tag == ArchiveTag.array ? 1 : 2
                guard count <= (end - reader.pos) / perElement, count <= limits.maxElementCount else {
                    throw ArchiveError(.corrupt, "\(count) elements cannot fit in \(length) bytes", offset: tagOffset)
                }
                let outer = reader.end
                reader.end = end
                defer { reader.end = outer }
                let result: Value
                if tag == ArchiveTag.array {
                    var elements: [Value] = []
                    for _ in 0..<count { elements.append(try value(depth: depth + ArchiveLimits.levelWeight)) }
                    result = .array(elements)
                } else {
                    var pairs: [(key: Value, value: Value)] = []
                    for _ in 0..<count {
                        let key = try value(depth: depth + ArchiveLimits.levelWeight)
                        pairs.append((key, try value(depth: depth + ArchiveLimits.levelWeight)))
                    }
                    result = .dictionary(pairs)
                }
                guard reader.pos == end else {
                    throw ArchiveError(
                        .corrupt,
                        "container ends \(end - reader.pos) bytes after its last element",
                        offset: reader.pos
                    )
                }
                return result
            case ArchiveTag.record:
                let length = Int(clamping: try reader.fixed(UInt32.self))
                guard length <= reader.remaining else {
                    throw ArchiveError(.corrupt, "record length \(length) outside its parent", offset: tagOffset)
                }
                let end = reader.pos + length
                let outer = reader.end
                reader.end = end
                defer { reader.end = outer }
                let typeIndex = try reader.index(below: types.count + 1, "type reference")
                var fields: [(key: String, value: Value)] = []
                while reader.pos < end {
                    let key = try reader.index(below: keys.count, "key index")
                    fields.append((keys[key], try value(depth: depth + ArchiveLimits.levelWeight)))
                }
                return .record(type: typeIndex == 0 ? nil : types[typeIndex - 1], fields: fields)
            case ArchiveTag.object:
                let id = try reader.index(below: objectCount, "object id")
                return .object(id: id, value: try value(depth: depth + ArchiveLimits.levelWeight))
            case ArchiveTag.reference:
                return .reference(id: try reader.index(below: objectCount, "object id"))
            default:
                throw ArchiveError(.corrupt, "unknown value tag 0x\(String(tag, radix: 16))", offset: tagOffset)
            }
        }
    }

    /// Whether `bytes` start like a native archive (its magic number).
    package static func hasMagic(_ bytes: Data) -> Bool {
        bytes.count >= 4
            && bytes.prefix(4).elementsEqual([
                ArchiveFormat.magic.0, ArchiveFormat.magic.1,
                ArchiveFormat.magic.2, ArchiveFormat.magic.3,
            ])
    }
}
