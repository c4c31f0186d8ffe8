import Archivist
import Foundation

/// An NSKeyedArchiver archive read into a typed object table, in pure Swift: no
/// `NSKeyedUnarchiver`, no `init(coder:)`, nothing instantiated.
///
/// Each `$objects` entry becomes a ``KeyedArchiveObject``: the Foundation value classes as Swift
/// values, other classes as a ``KeyedArchiveInstance`` with their class chain and fields.
/// References stay references (``KeyedArchiveReference``), so shared objects and cycles are
/// representable and never expanded. Reading is bounded by `ArchiveLimits` and every error is
/// an `ArchiveError` with the path of the failing entry.
///
/// ```swift
/// let archive = try KeyedArchive(data: data)
/// if case .instance(let note) = archive[archive.root!] { print(note.className, note.fields.keys) }
/// let value = try archive.decode(Note.self)        // a Decodable struct whose keys match
/// ```
public struct KeyedArchive: Sendable {
    /// The `$objects` table; entry 0 is ``KeyedArchiveObject/null``.
    public internal(set) var objects: [KeyedArchiveObject]
    /// The class chain (`$classes`, most derived first) of each entry; empty for plain values.
    public internal(set) var classChains: [[String]]
    /// The `$top` dictionary: `root` for archives made by `archivedData(withRootObject:)`.
    public internal(set) var top: [String: KeyedArchiveReference]
    /// The bounds this archive was read under (decoding from it honours them too).
    public internal(set) var limits: ArchiveLimits
    /// What no object of the table can unfold to more than (shared objects copied once per
    /// path), when the reader could tell: ``KeyedArchiveExpansion`` has nothing to count while
    /// this is within `maxObjectCount`. `nil` when an object holding others is shared.
    var unfoldedBound: Int?
    /// The size of the bytes it was read from, when read by ``init(data:limits:)``; shown by
    /// ``description``.
    var byteCount: Int?

    /// The object `$top` names `root`, if any.
    public var root: KeyedArchiveReference? { top["root"] }

    /// The object a reference names.
    ///
    /// References handed out by this archive are always in bounds.
    public subscript(reference: KeyedArchiveReference) -> KeyedArchiveObject { objects[reference.index] }

    /// The class chain of a referenced object, most derived first; empty for a plain value.
    public func classChain(of reference: KeyedArchiveReference) -> [String] { classChains[reference.index] }
}

/// A reference to an entry of ``KeyedArchive/objects`` (a `CF$UID`). Index 0 is `$null`, nil.
public struct KeyedArchiveReference: Sendable, Hashable, CustomStringConvertible {
    /// The index in `$objects`.
    public var index: Int

    /// Creates a reference to `$objects[index]`.
    public init(_ index: Int) { self.index = index }

    /// Whether this is the `$null` reference, the archive's nil.
    public var isNull: Bool { index == 0 }

    /// `@n`.
    public var description: String { "@\(index)" }
}

/// One entry of an archive's `$objects`.
public enum KeyedArchiveObject: Sendable, Equatable {
    /// `$null`, entry 0: the archive's nil.
    case null
    /// An `NSNull` instance.
    case nsNull
    /// A string (a plain plist string, or an `NSString`/`NSMutableString` instance).
    case string(String)
    /// An integer `NSNumber` (or plain plist integer).
    case integer(Int64)
    /// An integer above `Int64.max`.
    case unsignedInteger(UInt64)
    /// A floating-point `NSNumber`.
    case real(Double)
    /// A Boolean `NSNumber`.
    case bool(Bool)
    /// Bytes (plain plist data, or an `NSData`/`NSMutableData` instance).
    case data(Data)
    /// An `NSDate` (or plain plist date).
    case date(Date)
    /// An `NSUUID`.
    case uuid(UUID)
    /// An `NSURL`: its `NS.relative` string and `NS.base` (nil when `$null`); see
    /// ``KeyedArchive/url(at:)`` for the resolved URL.
    case url(relative: String, base: KeyedArchiveReference?)
    /// An `NSArray` or `NSMutableArray`.
    case array([KeyedArchiveReference])
    /// An `NSSet` or `NSMutableSet`.
    case set([KeyedArchiveReference])
    /// An `NSOrderedSet` or `NSMutableOrderedSet`.
    case orderedSet([KeyedArchiveReference])
    /// An `NSDictionary` or `NSMutableDictionary`: keys and values, pairwise.
    case dictionary(keys: [KeyedArchiveReference], values: [KeyedArchiveReference])
    /// An instance of any other class.
    case instance(KeyedArchiveInstance)
    /// A class description (`$classname`, `$classes`), the target of an instance's `$class`.
    case classDescription([String])
    /// A plain plist array or dictionary stored as an object (Foundation returns it as is).
    case plist(KeyedArchiveField)
}

/// An instance of a class other than the Foundation value classes: what its `encode(with:)` wrote.
public struct KeyedArchiveInstance: Sendable, Equatable {
    /// The class chain, most derived first (`$classes`, or just `$classname`).
    public var classChain: [String]
    /// The fields by key, `$class` excluded.
    ///
    /// Built from the instance's field table on each access; to read one field,
    /// ``field(forKey:)`` does not build the dictionary.
    public var fields: [String: KeyedArchiveField] {
        get { table.dictionary }
        set { table = KeyedArchiveFieldTable(newValue) }
    }
    /// The fields as stored: archive order, looked up without hashing.
    var table: KeyedArchiveFieldTable

    init(classChain: [String], table: KeyedArchiveFieldTable) {
        self.classChain = classChain
        self.table = table
    }

    /// The most derived class name.
    public var className: String { classChain.first ?? "" }

    /// The field under `key` (`$class` excluded), or `nil`.
    ///
    /// - Complexity: O(1) for wide instances; a short scan for the usual few fields.
    public func field(forKey key: String) -> KeyedArchiveField? { table[key] }

    /// Equal class chains and equal fields, whatever their order in the archive.
    public static func == (lhs: KeyedArchiveInstance, rhs: KeyedArchiveInstance) -> Bool {
        lhs.classChain == rhs.classChain && lhs.table.count == rhs.table.count && lhs.fields == rhs.fields
    }
}

/// A field value as stored in an instance: inline scalars, or references to objects.
///
/// Not `indirect`: its nested cases hold arrays and dictionaries, which already live on the
/// heap, and boxing every field cost one allocation per field read.
public enum KeyedArchiveField: Sendable, Equatable {
    /// A reference to an object (`encodeObject(_:forKey:)`); `@0` is nil.
    case reference(KeyedArchiveReference)
    /// An inline integer (`encodeInt64`, `encodeInteger`, `encodeInt32`).
    case integer(Int64)
    /// An inline integer above `Int64.max`.
    case unsignedInteger(UInt64)
    /// An inline floating-point value (`encodeDouble`, `encodeFloat`).
    case real(Double)
    /// An inline Boolean (`encodeBool`).
    case bool(Bool)
    /// An inline string (rare: archivers store strings as objects).
    case string(String)
    /// Inline bytes (`encodeBytes(_:length:forKey:)`).
    case data(Data)
    /// An inline date.
    case date(Date)
    /// An inline array, such as `NS.objects` (usually of references).
    case array([KeyedArchiveField])
    /// An inline dictionary with string keys.
    case dictionary([String: KeyedArchiveField])
}
