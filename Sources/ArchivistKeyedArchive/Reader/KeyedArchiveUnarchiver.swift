import Archivist
import Foundation

/// A type that reads itself from a keyed archive through an `NSCoder`-shaped API, the pure-Swift
/// counterpart of `init?(coder:)`.
///
/// ```swift
/// struct Note: KeyedArchiveDecodable {
///     var title: String
///     var pinned: Bool
///     init(from unarchiver: KeyedArchiveUnarchiver) throws {
///         title = try unarchiver.decodeObject(of: String.self, forKey: "title") ?? ""
///         pinned = try unarchiver.decodeBool(forKey: "pinned")
///     }
/// }
/// let note = try KeyedArchive(data: data).unarchive(Note.self)
/// ```
public protocol KeyedArchiveDecodable {
    /// Reads the value from the object `unarchiver` is positioned on.
    init(from unarchiver: KeyedArchiveUnarchiver) throws
}

/// Reads one object of a ``KeyedArchive``: its fields by key, like `NSCoder`'s keyed methods.
///
/// Scalars follow `NSCoder`: an absent key reads as `0`/`false`; any number reads into any
/// numeric type that holds its value (see each method); a present value of another kind, or a
/// number that does not fit, throws `.typeMismatch`. Objects read as `nil` when absent or `$null`. Every error is an
/// `ArchiveError` whose `codingPath` runs from the root to the failing key. Nesting is
/// bounded by `ArchiveLimits/maxDepth` and the values decoded (a shared object copied into
/// each value type that holds it counts each time) by `ArchiveLimits/maxObjectCount`; a
/// class instance reached twice is decoded once (the
/// same Swift object), and a class reached again while it is still being decoded (a cycle) throws
/// `.unresolvedReference`.
public struct KeyedArchiveUnarchiver {
    /// The archive being read.
    public var archive: KeyedArchive { context.archive }
    /// The object this unarchiver reads (its ``KeyedArchiveObject``).
    public var object: KeyedArchiveObject { archive[reference] }
    /// The object's class chain, most derived first; empty for a plain value.
    public var classChain: [String] { archive.classChain(of: reference) }
    /// The keys from the root to this object.
    public let codingPath: [String]

    let reference: KeyedArchiveReference
    let context: KeyedArchiveDecodingContext

    /// The fields of an instance (empty for other objects).
    private var fields: KeyedArchiveFieldTable {
        if case .instance(let instance) = archive[reference] { return instance.table }
        return KeyedArchiveFieldTable()
    }

    /// Whether the object has a field `key` (`NSCoder.containsValue(forKey:)`).
    public func containsValue(forKey key: String) -> Bool { fields[key] != nil }

    /// The raw field `key`, or `nil`.
    public func field(forKey key: String) -> KeyedArchiveField? { fields[key] }

    /// Reads a Boolean; `false` when absent. A number equal to 0 or 1 reads as a Boolean
    /// (corelibs archives Booleans as integers, and stores an `NSNumber` equal to `true` once,
    /// whatever its kind).
    ///
    /// - Throws: `.typeMismatch` for another value, or another number.
    public func decodeBool(forKey key: String) throws -> Bool {
        guard let number = try scalar(forKey: key) else { return false }
        guard let value = number.bool else { throw mismatch(key, "a Boolean") }
        return value
    }

    /// Reads a 64-bit integer; `0` when absent. Any number whose value is an `Int64` reads
    /// (`true` as 1, `2.0` as 2).
    ///
    /// - Throws: `.typeMismatch` for another value, or a number that is not an `Int64`.
    public func decodeInt64(forKey key: String) throws -> Int64 { try integer(forKey: key, "a 64-bit integer") }

    /// Reads an `Int`; `0` when absent.
    ///
    /// - Throws: `.typeMismatch` for another value, or a number that is not an `Int`.
    public func decodeInteger(forKey key: String) throws -> Int { try integer(forKey: key, "an Int") }

    /// Reads a 32-bit integer; `0` when absent.
    ///
    /// - Throws: `.typeMismatch` for another value, or a number that is not an `Int32`.
    public func decodeInt32(forKey key: String) throws -> Int32 { try integer(forKey: key, "a 32-bit integer") }

    /// Reads a `Double`; `0` when absent. Any number `Double` holds exactly reads (`true` as 1).
    ///
    /// - Throws: `.typeMismatch` for another value, or an integer `Double` cannot hold exactly.
    public func decodeDouble(forKey key: String) throws -> Double {
        guard let number = try scalar(forKey: key) else { return 0 }
        guard let value = number.double else { throw mismatch(key, "a Double") }
        return value
    }

    /// Reads a `Float`; `0` when absent. The nearest `Float`, as `NSCoder` reads it.
    ///
    /// - Throws: `.typeMismatch` for another value, or a finite number beyond `Float`'s range.
    public func decodeFloat(forKey key: String) throws -> Float {
        guard let number = try scalar(forKey: key) else { return 0 }
        guard let value = number.float else { throw mismatch(key, "a Float") }
        return value
    }

    private func integer<T: FixedWidthInteger>(forKey key: String, _ expectation: String) throws -> T {
        guard let number = try scalar(forKey: key) else { return 0 }
        guard let value = number.exactly(T.self) else { throw mismatch(key, expectation) }
        return value
    }

    /// Reads bytes written by `encodeBytes(_:length:forKey:)` (or an `NSData` object); `nil` when absent.
    public func decodeBytes(forKey key: String) throws -> Data? {
        switch fields[key] {
        case nil: return nil
        case .data(let bytes)?: return bytes
        case .reference(let target)?:
            if target.isNull { return nil }
            guard case .data(let bytes) = archive[target] else { throw mismatch(key, "data") }
            return bytes
        default: throw mismatch(key, "data")
        }
    }

    /// Reads the object under `key` as a `T`; `nil` when absent or `$null`
    /// (`NSCoder.decodeObject(of:forKey:)`).
    ///
    /// - Throws: `.typeMismatch` when the object is not a `T`; whatever `T`'s initializer throws,
    ///   with `key` in the coding path.
    public func decodeObject<T: KeyedArchiveDecodable>(of type: T.Type, forKey key: String) throws -> T? {
        switch fields[key] {
        case nil: return nil
        case .reference(let target)?:
            if target.isNull { return nil }
            return try context.decode(type, at: target, codingPath: codingPath + [key])
        case .string(let value)? where T.self == String.self: return value as? T
        default: throw mismatch(key, "a reference to an object")
        }
    }

    /// Reads the object under `key` as a `T`, throwing `.valueNotFound` when it is absent or `$null`.
    public func decodeRequiredObject<T: KeyedArchiveDecodable>(of type: T.Type, forKey key: String) throws -> T {
        guard let value = try decodeObject(of: type, forKey: key) else {
            throw ArchiveError(
                .valueNotFound,
                "no \(T.self) under \(key)",
                codingPath: codingPath + [key],
                typeName: classChain.first
            )
        }
        return value
    }

    /// Reads the elements of the array, set or ordered set this unarchiver is on, as `T`s.
    ///
    /// - Throws: `.typeMismatch` when the object is not a collection.
    public func decodeElements<T: KeyedArchiveDecodable>(of type: T.Type) throws -> [T] {
        let elements: [KeyedArchiveReference]
        switch object {
        case .array(let references), .set(let references), .orderedSet(let references): elements = references
        default:
            throw ArchiveError(
                .typeMismatch,
                "expected an array, set or ordered set",
                codingPath: codingPath,
                typeName: classChain.first
            )
        }
        return try elements.enumerated().map { position, element in
            try context.decode(type, at: element, codingPath: codingPath + ["[\(position)]"])
        }
    }

    /// The inline number under `key`, or the number object it refers to; `nil` when absent.
    private func scalar(forKey key: String) throws -> KeyedArchiveNumber? {
        guard let field = fields[key] else { return nil }
        let number: KeyedArchiveNumber?
        if case .reference(let target) = field {
            number = KeyedArchiveNumber(archive[target])
        } else {
            number = KeyedArchiveNumber(field)
        }
        guard let number else { throw mismatch(key, "a number") }
        return number
    }

    private func mismatch(_ key: String, _ expectation: String) -> ArchiveError {
        ArchiveError(
            .typeMismatch,
            "\(key) is not \(expectation)",
            codingPath: codingPath + [key],
            typeName: classChain.first
        )
    }
}

/// State shared by every unarchiver of one decode: depth, instances decoded so far.
final class KeyedArchiveDecodingContext {
    let archive: KeyedArchive
    private var depth = 0
    /// Class instances already decoded, by object index and type, so sharing is kept.
    private var decoded: [Int: [ObjectIdentifier: AnyObject]] = [:]
    /// Object indexes whose class instance is being decoded now.
    private var inProgress = Set<Int>()

    /// Values still allowed: value types copy a shared object once per path (see ``KeyedArchiveDecodingBudget``).
    private let budget: KeyedArchiveDecodingBudget

    init(archive: KeyedArchive) {
        self.archive = archive
        budget = KeyedArchiveDecodingBudget(archive.limits.maxObjectCount)
    }

    func decode<T: KeyedArchiveDecodable>(
        _ type: T.Type,
        at reference: KeyedArchiveReference,
        codingPath: [String]
    ) throws -> T {
        let isClass = T.self is AnyClass
        if isClass, let shared = decoded[reference.index]?[ObjectIdentifier(T.self)] as? T { return shared }
        if isClass {
            guard inProgress.insert(reference.index).inserted else {
                throw ArchiveError(
                    .unresolvedReference,
                    "a cycle back to object \(reference) while it is being decoded",
                    codingPath: codingPath,
                    typeName: "\(T.self)"
                )
            }
        }
        defer { if isClass { inProgress.remove(reference.index) } }
        guard depth < archive.limits.maxDepth else {
            throw ArchiveError(
                .limitExceeded(.depth),
                "objects nest deeper than maxDepth (\(archive.limits.maxDepth))",
                codingPath: codingPath
            )
        }
        guard budget.spend() else {
            throw ArchiveError(
                .limitExceeded(.objectCount),
                "decoding unfolds to more than maxObjectCount (\(archive.limits.maxObjectCount)) values",
                codingPath: codingPath
            )
        }
        depth += 1
        defer { depth -= 1 }
        let value: T
        do {
            value = try T(from: KeyedArchiveUnarchiver(codingPath: codingPath, reference: reference, context: self))
        } catch let error as ArchiveError {
            throw error
        } catch {
            throw ArchiveError(
                .invalidValue,
                "\(T.self) failed to decode: \(error)",
                codingPath: codingPath,
                typeName: "\(T.self)",
                underlyingError: error
            )
        }
        if isClass { decoded[reference.index, default: [:]][ObjectIdentifier(T.self)] = value as AnyObject }
        return value
    }
}

extension KeyedArchive {
    /// Decodes the object under `key` of `$top` (`root` by default) as a `T`.
    ///
    /// ```swift
    /// let note = try KeyedArchive(data: data).unarchive(Note.self)
    /// ```
    ///
    /// - Throws: `.keyNotFound` when `$top` has no `key`, `.valueNotFound` when it is `$null`,
    ///   `.limitExceeded(.objectCount)` before anything is decoded when the objects under it
    ///   unfold to more than `maxObjectCount` values (shared objects counted once per path), and
    ///   whatever decoding `T` throws (``KeyedArchiveUnarchiver``).
    public func unarchive<T: KeyedArchiveDecodable>(_ type: T.Type, key: String = "root") throws -> T {
        try unarchive(type, key: key, expansionChecked: false)
    }

    /// ``unarchive(_:key:)``, skipping the unfolded-size check when the bridge's validator has
    /// already made it on the same property list.
    func unarchive<T: KeyedArchiveDecodable>(_ type: T.Type, key: String, expansionChecked: Bool) throws -> T {
        guard let reference = top[key] else {
            throw ArchiveError(.keyNotFound, "$top has no \(key)", codingPath: ["$top", key])
        }
        guard !reference.isNull else { throw ArchiveError(.valueNotFound, "$top.\(key) is $null", codingPath: [key]) }
        if !expansionChecked { try KeyedArchiveExpansion.check(self, from: reference, topKey: key) }
        return try KeyedArchiveDecodingContext(archive: self).decode(type, at: reference, codingPath: [key])
    }
}
