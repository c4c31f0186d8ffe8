/// The field names of an instance, shared by every instance of a class that was written with
/// the same keys (an `encode(with:)` writes the same keys each time, so an archive of 10,000
/// objects holds a handful of these), in the order of the first such instance.
///
/// Sharing them means reading an instance allocates one array (its values) and copies no
/// names, and the duplicate check runs once per shape, not once per instance. Names are also
/// kept packed, so that a lookup compares integers instead of strings.
final class KeyedArchiveFieldKeys: Sendable {
    /// The names, unique.
    let names: [String]
    /// Each name's ``PackedName``, or `nil` for one that is not short ASCII (compared as a string).
    private let packed: [PackedName?]
    /// Position of each name, for shapes wider than ``indexThreshold`` (lookups stay O(1) for
    /// wide instances and hostile input).
    private let index: [String: Int]?

    /// The width up to which lookups scan instead of hashing.
    static var indexThreshold: Int { 16 }

    /// The shape of an instance without fields.
    static let empty = KeyedArchiveFieldKeys(uniqueNames: [])

    /// A shape of `names`, which the caller has checked to be unique.
    init(uniqueNames names: [String]) {
        self.names = names
        packed = names.map(PackedName.init)
        if names.count > Self.indexThreshold {
            var built = [String: Int](minimumCapacity: names.count)
            for (position, name) in names.enumerated() { built[name] = position }
            index = built
        } else {
            index = nil
        }
    }

    /// A shape of `names`, or `nil` when one appears twice (its first repeat in `duplicate`).
    static func unique(_ names: [String], duplicate: inout String?) -> KeyedArchiveFieldKeys? {
        if names.count > indexThreshold {
            var seen = Set<String>(minimumCapacity: names.count)
            for name in names where !seen.insert(name).inserted {
                duplicate = name
                return nil
            }
        } else {
            for (position, name) in names.enumerated() where names[..<position].contains(name) {
                duplicate = name
                return nil
            }
        }
        return KeyedArchiveFieldKeys(uniqueNames: names)
    }

    /// The position of `key`, trying `hint` first (a `Decodable` reads its keys in declaration
    /// order, and archives whose keys keep that order find each next key at the next position).
    func position(of key: String, hint: Int = -1) -> Int? {
        // An equal string is found by `==`'s inlined fast path (identical small strings); a
        // different one takes its general path, so the hint is the one position tried so.
        if hint >= 0, hint < names.count, names[hint] == key { return hint }
        if let index { return index[key] }
        // The same representation is the same string: the binary plist reader makes each short
        // string once (``SmallStringCache``), so an archive's keys are usually the very names
        // of the shape, and two integer compares per name find them.
        for position in names.indices where Self.identical(names[position], key) { return position }
        // A short ASCII key equals a name exactly when their bytes do, except for a name that is
        // not ASCII (some, such as U+212A KELVIN SIGN, are canonically equivalent to ASCII).
        guard let wanted = PackedName(key) else {
            return names.firstIndex(of: key)
        }
        for position in packed.indices {
            if let name = packed[position] {
                if name == wanted { return position }
            } else if names[position] == key {
                return position
            }
        }
        return nil
    }

    /// Whether two strings have the same representation (which makes them equal; equal strings
    /// need not have it). Two word compares, where `==` on different strings of one length
    /// takes its general path.
    @inline(__always)
    private static func identical(_ first: String, _ second: String) -> Bool {
        withUnsafeBytes(of: first) { first in
            withUnsafeBytes(of: second) { second in
                guard first.count == 16 else { return false }
                return first.loadUnaligned(as: UInt64.self) == second.loadUnaligned(as: UInt64.self)
                    && first.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                        == second.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            }
        }
    }
}

/// Up to 16 bytes of ASCII, as two integers and a length: comparing two is three integer
/// compares, where `String.==` on two different strings of one length takes its general path.
struct PackedName: Equatable, Sendable {
    private var low: UInt64
    private var high: UInt64
    private var count: Int

    private init(low: UInt64, high: UInt64, count: Int) {
        self.low = low
        self.high = high
        self.count = count
    }

    /// `string` packed, or `nil` when it is longer than 16 bytes or not ASCII.
    @inline(__always)
    init?(_ string: String) {
        let packed = string.utf8.withContiguousStorageIfAvailable { bytes -> PackedName? in
            guard bytes.count <= 16 else { return nil }
            var words: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
            guard (words.0 | words.1) & 0x8080_8080_8080_8080 == 0 else { return nil }
            return PackedName(low: words.0, high: words.1, count: bytes.count)
        }
        guard let packed, let packed else { return nil }
        self = packed
    }
}

/// An instance's fields as read from an archive: a shared shape (the names) and the values,
/// position for position.
struct KeyedArchiveFieldTable: Sendable {
    /// The names, shared with other instances of the same shape.
    private(set) var keys: KeyedArchiveFieldKeys
    /// The values, in the order of `keys.names`.
    private(set) var values: [KeyedArchiveField]

    /// An empty table.
    init() {
        keys = .empty
        values = []
    }

    /// A table of `values` under `keys` (one value per name).
    init(keys: KeyedArchiveFieldKeys, values: [KeyedArchiveField]) {
        precondition(keys.names.count == values.count)
        self.keys = keys
        self.values = values
    }

    /// A table holding `dictionary`'s entries.
    init(_ dictionary: [String: KeyedArchiveField]) {
        keys = KeyedArchiveFieldKeys(uniqueNames: Array(dictionary.keys))
        values = keys.names.map { dictionary[$0]! }
    }

    var count: Int { values.count }

    /// The width above which lookups hash instead of scanning.
    static var indexThreshold: Int { KeyedArchiveFieldKeys.indexThreshold }

    /// The value under `key`, or `nil`.
    subscript(key: String) -> KeyedArchiveField? {
        guard let position = keys.position(of: key) else { return nil }
        return values[position]
    }

    /// The names, in archive order.
    var names: [String] { keys.names }

    /// The entries as a dictionary.
    var dictionary: [String: KeyedArchiveField] {
        Dictionary(zip(keys.names, values), uniquingKeysWith: { first, _ in first })
    }
}
