import Archivist
import Foundation

extension KeyedArchive {
    /// Decodes the object under `key` of `$top` (`root` by default) as a `Decodable` type whose
    /// coding keys match the archive's field names: an archive written on iOS by a class's
    /// `encode(with:)` reads straight into a Swift struct.
    ///
    /// Instances and string-keyed `NSDictionary`s decode as keyed containers; `NSArray`,
    /// `NSSet` and `NSOrderedSet` as unkeyed ones; strings, numbers, `Date`, `Data`, `URL`
    /// (resolved against its base) and `UUID` as single values. Numbers read as `NSCoder`
    /// reads them: any number into any numeric type that holds its value exactly (`true` as 1,
    /// `1.0` as 1), and into `Bool` when it is 0 or 1 — corelibs' archiver stores equal
    /// `NSNumber`s once, whatever their kind. An absent field is `nil` for optionals; `$null`
    /// and `NSNull` reach the type's `init(from:)`, where `decodeNil()` is `true`.
    ///
    /// Before anything is decoded, what the object graph under `key` unfolds to (shared
    /// objects copied once per path) is counted against `maxObjectCount`, so a small archive
    /// that shares along exponentially many paths is refused in time proportional to its size.
    ///
    /// ```swift
    /// struct Note: Decodable { var title: String; var created: Date; var tags: [String] }
    /// let note = try KeyedArchive(data: data).decode(Note.self)
    /// ```
    ///
    /// - Throws: `ArchiveError` whose coding path starts at `key` (`["root", "tags", "[1]"]`):
    ///   `.keyNotFound`, `.valueNotFound` (a value asked of `$null`/`NSNull`), `.typeMismatch`
    ///   (another kind, or a number that does not fit), `.limitExceeded(.objectCount)` for an
    ///   archive that unfolds past `maxObjectCount`, `.limitExceeded(.depth)` past `maxDepth`
    ///   (so a cyclic graph throws instead of recursing), or the model's own error wrapped
    ///   (`.invalidValue`, `underlyingError` kept, its path under `key`).
    /// - Complexity: O(*n*) in the objects the decode reads, plus the unfolded-size count,
    ///   O(*n*) in the objects reachable from `key`.
    public func decode<T: Decodable>(_ type: T.Type, key: String = "root") throws -> T {
        try decode(type, key: key, expansionChecked: false)
    }

    /// ``decode(_:key:)``, skipping the unfolded-size check when the bridge's validator has
    /// already made it on the same property list.
    func decode<T: Decodable>(_ type: T.Type, key: String, expansionChecked: Bool) throws -> T {
        guard let reference = top[key] else {
            throw ArchiveError(.keyNotFound, "$top has no \(key)", codingPath: ["$top", key])
        }
        if !expansionChecked { try KeyedArchiveExpansion.check(self, from: reference, topKey: key) }
        let session = KeyedArchiveDecodingSession(archive: self, topKey: key)
        let decoder = KeyedArchiveValueDecoder(session: session, item: .object(reference), parentPath: [], key: nil)
        do {
            return try decoder.decode(T.self)
        } catch let error as ArchiveError {
            throw error
        } catch {
            throw ArchiveError(
                .invalidValue,
                "\(T.self) failed to decode: \(error)",
                codingPath: [key] + Self.codingPath(of: error),
                typeName: "\(T.self)",
                underlyingError: error
            )
        }
    }

    /// The coding path a model's own `DecodingError` carries, as `ArchiveError` spells paths.
    private static func codingPath(of error: any Error) -> [String] {
        let context: DecodingError.Context
        switch error as? DecodingError {
        case .typeMismatch(_, let found)?, .valueNotFound(_, let found)?, .keyNotFound(_, let found)?,
            .dataCorrupted(let found)?:
            context = found
        default:
            return []
        }
        var path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
        if case .keyNotFound(let key, _)? = error as? DecodingError { path.append(key.stringValue) }
        return path
    }

    /// Reads `data` and decodes its root as a `T`; see ``decode(_:key:)``.
    ///
    /// ```swift
    /// let note = try KeyedArchive.decode(Note.self, from: data)
    /// ```
    ///
    /// - Throws: `ArchiveError`: what ``init(data:limits:)`` and ``decode(_:key:)`` throw.
    public static func decode<T: Decodable>(
        _ type: T.Type,
        from data: Data,
        limits: ArchiveLimits = .init()
    ) throws -> T {
        try KeyedArchive(data: data, limits: limits).decode(type)
    }
}

/// A value being decoded: an inline field, or an object of the table.
enum KeyedArchiveItem {
    case field(KeyedArchiveField)
    case object(KeyedArchiveReference)

    init(_ field: KeyedArchiveField) {
        if case .reference(let target) = field { self = .object(target) } else { self = .field(field) }
    }
}

/// The `Decoder` over a ``KeyedArchive``.
///
/// The coding path is kept as the parent's path plus this decoder's key and put together only
/// when asked for: building an array for each child decoder would be a large part of
/// decoding (the `keyed` suite's decodes guard it).
/// Containers build their path once and share it with their children.
///
/// A class: it is handed out as `any Decoder` once per nested value, and a struct this size
/// was boxed on the heap for that anyway; as a reference, every copy is one retain.
final class KeyedArchiveValueDecoder: Decoder {
    let session: KeyedArchiveDecodingSession
    let item: KeyedArchiveItem
    /// The coding path of the container this decoder was made from.
    let parentPath: [any CodingKey]
    /// This decoder's key in that container; `nil` for the root.
    let key: (any CodingKey)?
    /// The object the item names, if it is one (looked up once: every read of the value needs it).
    let resolved: KeyedArchiveObject?
    /// `codingPath.count`, without building the path (kept: every field read checks it, and
    /// testing the optional existential `key` copied it each time).
    let depth: Int
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    // The keyed container's state, set by `container(keyedBy:)` (see ``startKeyed(_:)``).
    // (Unchecked exclusivity: one decode runs on one thread, and nothing holds an access to
    // these across a call; checked, the accesses would be a large share of a field read, which
    // the `keyed` suite's decodes guard.)

    /// The entries a keyed container of this decoder reads.
    @exclusivity(unchecked) var keyedEntries: KeyedArchiveKeyedEntries = .items([:])
    /// An instance's field names and values, held apart from `keyedEntries` so a read does not
    /// match (and copy) the enum.
    @exclusivity(unchecked) var instanceKeys: KeyedArchiveFieldKeys?
    @exclusivity(unchecked) var instanceValues: [KeyedArchiveField] = []
    /// An `NSDictionary`'s keys and values, held apart too, when `readsDictionary`.
    @exclusivity(unchecked) var dictionaryKeys: [KeyedArchiveReference] = []
    @exclusivity(unchecked) var dictionaryValues: [KeyedArchiveReference] = []
    @exclusivity(unchecked) var readsDictionary = false
    /// Where the next key is looked for first without a prediction: after the last one found.
    @exclusivity(unchecked) var hint = 0
    /// Instance keys looked up so far.
    @exclusivity(unchecked) var lookups = 0
    /// ``codingPath``, built once for a keyed container (when a child decoder or an error first
    /// needs it; scalars read directly never do) and shared by every child.
    private(set) lazy var containerPath: [any CodingKey] = codingPath

    init(
        session: KeyedArchiveDecodingSession,
        item: KeyedArchiveItem,
        parentPath: [any CodingKey],
        key: (any CodingKey)?
    ) {
        self.session = session
        self.item = item
        self.parentPath = parentPath
        self.key = key
        depth = parentPath.count + (key == nil ? 0 : 1)
        if case .object(let reference) = item { resolved = session.objects[reference.index] } else { resolved = nil }
    }

    var archive: KeyedArchive { session.archive }

    var codingPath: [any CodingKey] {
        guard let key else { return parentPath }
        return parentPath + [key]
    }

    var path: [String] { codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue } }

    /// An error at this decoder's value (or at `key` in its container), its path starting at
    /// the `$top` key the decode started at, as every decoding path reports it.
    func error(_ code: ArchiveError.Code, _ message: String, key: (any CodingKey)? = nil) -> ArchiveError {
        var path = session.startPath + self.path
        if let key { path.append(key.intValue.map { "[\($0)]" } ?? key.stringValue) }
        var typeName: String?
        if case .object(let reference) = item { typeName = archive.classChain(of: reference).first }
        return ArchiveError(code, message, codingPath: path, typeName: typeName)
    }

    var isNil: Bool {
        switch resolved {
        case .null?, .nsNull?: true
        default: false
        }
    }

    /// The decoder of `item`, found under `key` in a container of this decoder whose coding
    /// path is `path` (this decoder's `codingPath`, built once by the container).
    func nested(_ item: KeyedArchiveItem, key: any CodingKey, path: [any CodingKey]) throws -> KeyedArchiveValueDecoder
    {
        try admit(key: key, depth: path.count)
        return KeyedArchiveValueDecoder(session: session, item: item, parentPath: path, key: key)
    }

    /// Checks that one more value under `key`, in a container at `depth` (its coding path's
    /// length), fits `maxDepth` and the value budget (spending from it), as
    /// ``nested(_:key:path:)`` does before making the child. `key` is made only for an error.
    func admit(key: @autoclosure () -> any CodingKey, depth: Int) throws {
        guard depth < session.maxDepth else {
            throw error(
                .limitExceeded(.depth),
                "values nest deeper than maxDepth (\(archive.limits.maxDepth))",
                key: key()
            )
        }
        guard session.budget.spend() else {
            throw error(
                .limitExceeded(.objectCount),
                "decoding unfolds to more than maxObjectCount (\(archive.limits.maxObjectCount)) values: shared objects "
                    + "are copied into each value type that holds them",
                key: key()
            )
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let entries: KeyedArchiveKeyedEntries
        switch (item, resolved) {
        case (_, .instance(let instance)?):
            // The instance's own field table, shared, not copied: this runs once per object.
            entries = .instance(instance.table)
        case (_, .dictionary(let keys, let values)?):
            if keys.count <= KeyedArchiveKeyedEntries.indexThreshold {
                for key in keys {
                    guard case .string = session.objects[key.index] else {
                        throw error(.typeMismatch, "dictionary key \(key) is not a string")
                    }
                }
                entries = .dictionary(keys: keys, values: values, objects: session.objects)
                break
            }
            var items: [String: KeyedArchiveItem] = [:]
            for (key, value) in zip(keys, values) {
                guard case .string(let name) = archive[key] else {
                    throw error(.typeMismatch, "dictionary key \(key) is not a string")
                }
                items[name] = .object(value)
            }
            entries = .items(items)
        case (.field(.dictionary(let fields)), _), (_, .plist(.dictionary(let fields))?):
            entries = .fields(fields)
        default:
            throw mismatch("an instance or a dictionary")
        }
        startKeyed(entries)
        return KeyedDecodingContainer(KeyedArchiveKeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let elements: KeyedArchiveElements
        switch (item, resolved) {
        case (_, .array(let references)?), (_, .set(let references)?), (_, .orderedSet(let references)?):
            elements = .references(references)
        case (.field(.array(let fields)), _), (_, .plist(.array(let fields))?):
            elements = .fields(fields)
        default:
            throw mismatch("an array, set or ordered set")
        }
        return KeyedArchiveUnkeyedContainer(decoder: self, elements: elements)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        KeyedArchiveSingleValueContainer(decoder: self)
    }

    func describe() -> String {
        switch item {
        case .object(let reference): archive[reference].kindDescription
        // The case name, never the value: `Date.description` traps on a NaN date.
        case .field(let field): "an inline \(Mirror(reflecting: field).children.first?.label ?? "value")"
        }
    }

    // MARK: Scalars

    /// The error for a value of the wrong kind: `.valueNotFound` when there is none (`$null`
    /// or `NSNull`), else `.typeMismatch`.
    func mismatch(_ expectation: String) -> ArchiveError {
        if isNil { return error(.valueNotFound, "expected \(expectation), found \(describe())") }
        return error(.typeMismatch, "expected \(expectation), found \(describe())")
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // Metatype comparisons first: most values are none of the special types, and a
        // pointer comparison is far cheaper than a dynamic cast of the metatype.
        if T.self == String.self { return try string() as! T }
        if T.self == [String].self { return try strings() as! T }
        guard T.self == Date.self || T.self == Data.self || T.self == UUID.self || T.self == URL.self else {
            return try T(from: self)
        }
        switch type {
        case is Date.Type:
            if case .field(.date(let value)) = item { return value as! T }
            if case .date(let value)? = resolved { return value as! T }
            throw mismatch("a date")
        case is Data.Type:
            if case .field(.data(let value)) = item { return value as! T }
            if case .data(let value)? = resolved { return value as! T }
            throw mismatch("data")
        case is UUID.Type:
            if case .uuid(let value)? = resolved { return value as! T }
            if let value = try? string(), let uuid = UUID(uuidString: value) { return uuid as! T }
            throw mismatch("a UUID")
        case is URL.Type:
            if case .object(let reference) = item, case .url = archive[reference] {
                do {
                    return try archive.url(at: reference) as! T
                } catch var failure as ArchiveError {
                    failure.codingPath = session.startPath + path + failure.codingPath
                    throw failure
                }
            }
            if let value = try? string(), let url = URL(string: value) { return url as! T }
            throw mismatch("a URL")
        default:
            return try T(from: self)
        }
    }

    /// An array of strings, read in place: `Array.init(from:)` is unspecialized in the
    /// standard library and looks up `Array<String>`'s metadata for every array it decodes,
    /// which cost more than reading the strings. Anything but an array of string objects takes
    /// that general path, for its errors.
    func strings() throws -> [String] {
        let references: [KeyedArchiveReference]
        switch resolved {
        case .array(let elements)?, .set(let elements)?, .orderedSet(let elements)?: references = elements
        default: return try [String](from: self)
        }
        var strings: [String] = []
        strings.reserveCapacity(references.count)
        for (position, reference) in references.enumerated() {
            guard case .string(let value) = session.objects[reference.index] else { return try [String](from: self) }
            try admit(key: IndexKey(intValue: position), depth: depth)
            strings.append(value)
        }
        return strings
    }

    func string() throws -> String {
        if case .field(.string(let value)) = item { return value }
        if case .string(let value)? = resolved { return value }
        throw mismatch("a string")
    }

    /// The number this decoder's value is, if it is one.
    private var number: KeyedArchiveNumber? {
        if case .field(let field) = item { return KeyedArchiveNumber(field) }
        return KeyedArchiveNumber(resolved)
    }

    func bool() throws -> Bool {
        if let value = number?.bool { return value }
        throw mismatch(number == nil ? "a Boolean" : "a Boolean (0 or 1)")
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard let number else { throw mismatch("an integer") }
        guard let value = number.exactly(T.self) else {
            throw error(.typeMismatch, "the number does not fit in \(T.self)")
        }
        return value
    }

    func double() throws -> Double {
        guard let number else { throw mismatch("a number") }
        guard let value = number.double else { throw error(.typeMismatch, "the number has no exact Double") }
        return value
    }

    func float() throws -> Float {
        guard let number else { throw mismatch("a number") }
        guard let value = number.float else { throw error(.typeMismatch, "the number is beyond Float's range") }
        return value
    }
}
