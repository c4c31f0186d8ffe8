import Archivist
import Foundation

/// Maps instances of the Foundation value classes to Swift values by the fields their
/// `encode(with:)` writes (`NS.string`, `NS.objects`, `NS.keys`, `NS.time`, `NS.uuidbytes`, …).
/// `NSURL` is mapped once the whole table is read (its `NS.relative` is another object).
enum KeyedArchiveFoundationValues {
    /// Which Foundation value class an instance is, decided once per class description.
    enum Kind {
        case string, number, data, date, uuid, null, array, set, orderedSet, dictionary
        /// `NSURL`: an instance until the whole table is read (its `NS.relative` is another object).
        case url
        /// Any other class: the instance itself.
        case other

        /// The kind of the most derived class `className`.
        init(className: String) {
            switch className {
            case "NSString", "NSMutableString": self = .string
            case "NSNumber": self = .number
            case "NSData", "NSMutableData": self = .data
            case "NSDate": self = .date
            case "NSUUID": self = .uuid
            case "NSNull": self = .null
            case "NSArray", "NSMutableArray": self = .array
            case "NSSet", "NSMutableSet": self = .set
            case "NSOrderedSet", "NSMutableOrderedSet": self = .orderedSet
            case "NSDictionary", "NSMutableDictionary": self = .dictionary
            case "NSURL": self = .url
            default: self = .other
            }
        }
    }

    /// The object an instance stands for: a typed Foundation value, or the instance itself.
    ///
    /// - Parameters:
    ///   - kind: `Kind(className: instance.className)`, computed once per class by the caller.
    ///   - path: The instance's coding path, built only for an error.
    /// - Throws: `.corrupt` naming the field when a Foundation value class has a field of the
    ///   wrong type (a missing collection field reads as empty, as Foundation does).
    static func object(
        for instance: KeyedArchiveInstance,
        kind: Kind,
        path: () -> [String]
    ) throws -> KeyedArchiveObject {
        if kind == .other || kind == .url { return .instance(instance) }
        return try object(kind, className: instance.className, fields: instance.table, path: path)
    }

    /// The value of a Foundation value class (`kind`, neither `.other` nor `.url`) whose fields
    /// `fields` holds: its field table, or its plist nodes read in place.
    static func object(
        _ kind: Kind,
        className: String,
        fields: some KeyedArchiveFieldSource,
        path: () -> [String]
    ) throws -> KeyedArchiveObject {
        func fail(_ key: String, _ expectation: String) -> ArchiveError {
            ArchiveError(
                .corrupt,
                "\(className).\(key) must be \(expectation)",
                codingPath: path() + [key],
                typeName: className
            )
        }
        func references(_ key: String) throws -> [KeyedArchiveReference] {
            if let references = try fields.references(key) { return references }
            guard try fields.field(key) == nil else { throw fail(key, "an array of references") }
            return []
        }
        switch kind {
        case .string:
            guard case .string(let value)? = try fields.field("NS.string") else { throw fail("NS.string", "a string") }
            return .string(value)
        case .number:
            switch try fields.field("NS.number") {
            case .integer(let value)?: return .integer(value)
            case .unsignedInteger(let value)?: return .unsignedInteger(value)
            case .real(let value)?: return .real(value)
            case .bool(let value)?: return .bool(value)
            default: throw fail("NS.number", "a number")
            }
        case .data:
            guard case .data(let bytes)? = try fields.field("NS.data") else { throw fail("NS.data", "data") }
            return .data(bytes)
        case .date:
            switch try fields.field("NS.time") {
            case nil: return .date(Date(timeIntervalSinceReferenceDate: 0))
            case .real(let seconds)? where !KeyedArchiveDateRule.allows(seconds):
                throw fail("NS.time", "a number, not NaN")
            case .real(let seconds)?: return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case .integer(let seconds)?: return .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
            default: throw fail("NS.time", "a number")
            }
        case .uuid:
            guard case .data(let bytes)? = try fields.field("NS.uuidbytes"), bytes.count == 16 else {
                throw fail("NS.uuidbytes", "16 bytes")
            }
            let b = Array(bytes)
            return .uuid(
                UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]
                    )
                )
            )
        case .null:
            return .nsNull
        case .array:
            return .array(try references("NS.objects"))
        case .set:
            return .set(try references("NS.objects"))
        case .orderedSet:
            if try fields.field("NS.objects") != nil { return .orderedSet(try references("NS.objects")) }
            // Older archives: NS.object.0, NS.object.1, …
            var elements: [KeyedArchiveReference] = []
            while let element = try fields.field("NS.object.\(elements.count)") {
                guard case .reference(let target) = element else {
                    throw fail("NS.object.\(elements.count)", "a reference")
                }
                elements.append(target)
            }
            return .orderedSet(elements)
        case .dictionary:
            let keys = try references("NS.keys")
            let values = try references("NS.objects")
            guard keys.count == values.count else { throw fail("NS.keys", "as long as NS.objects") }
            return .dictionary(keys: keys, values: values)
        case .url, .other:
            preconditionFailure("\(className) is not a Foundation value class read here")
        }
    }
}

/// Where the fields of a Foundation value class's instance are read from.
protocol KeyedArchiveFieldSource {
    /// The field under `key`, or `nil` when absent. A field that is a plist array or
    /// dictionary may come back as an empty one: only its kind is looked at.
    func field(_ key: String) throws -> KeyedArchiveField?
    /// The references in the field under `key`, or `nil` when it is absent or not an array of
    /// references.
    func references(_ key: String) throws -> [KeyedArchiveReference]?
}

extension KeyedArchiveFieldTable: KeyedArchiveFieldSource {
    func field(_ key: String) -> KeyedArchiveField? { self[key] }

    func references(_ key: String) -> [KeyedArchiveReference]? {
        guard case .array(let elements)? = self[key] else { return nil }
        var references: [KeyedArchiveReference] = []
        references.reserveCapacity(elements.count)
        for element in elements {
            guard case .reference(let target) = element else { return nil }
            references.append(target)
        }
        return references
    }
}

/// The fields of an instance read in place from its plist nodes: its values, by the positions
/// its keys have in its class's shape. Saves building a field table (and its arrays of
/// references) for every `NSString`, `NSNumber`, `NSArray`, `NSDictionary`, … of an archive.
struct KeyedArchiveNodeFields: KeyedArchiveFieldSource {
    let nodes: [PropertyListDocument.Node]
    let shape: KeyedArchiveFieldKeys
    let values: PropertyListDocument.References
    /// The position in `values` of each of the shape's names.
    let positions: UnsafeMutableBufferPointer<Int>
    let objectCount: Int
    /// The instance's coding path, built only for an error.
    let path: () -> [String]

    private func node(_ key: String) -> Int? {
        shape.position(of: key).map { values[positions[$0]] }
    }

    private func reference(_ value: UInt64, _ key: String) throws -> KeyedArchiveReference {
        guard value < UInt64(objectCount) else {
            throw ArchiveError(
                .corrupt,
                "reference \(value) out of bounds (\(objectCount) objects)",
                codingPath: path() + [key]
            )
        }
        return KeyedArchiveReference(Int(value))
    }

    func field(_ key: String) throws -> KeyedArchiveField? {
        guard let node = node(key) else { return nil }
        switch nodes[node] {
        case .string(let value): return .string(value)
        case .integer(let value): return .integer(value)
        case .unsignedInteger(let value): return .unsignedInteger(value)
        case .real(let value): return .real(value)
        case .bool(let value): return .bool(value)
        case .data(let bytes): return .data(Data(bytes))
        case .date(let seconds): return .date(try KeyedArchiveDateRule.date(seconds, codingPath: path() + [key]))
        case .uid(let value): return .reference(try reference(value, key))
        case .array: return .array([])
        case .dictionary: return .dictionary([:])
        }
    }

    func references(_ key: String) throws -> [KeyedArchiveReference]? {
        guard let node = node(key), case .array(let elements) = nodes[node] else { return nil }
        var references: [KeyedArchiveReference] = []
        references.reserveCapacity(elements.count)
        for element in elements {
            guard case .uid(let value) = nodes[element] else { return nil }
            references.append(try reference(value, key))
        }
        return references
    }
}
