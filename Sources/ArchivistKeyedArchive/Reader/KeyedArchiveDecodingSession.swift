import Archivist
import Foundation

/// How many more values one decode may produce. Value types copy a shared object once per
/// path; ``KeyedArchiveExpansion`` refuses an archive that unfolds past `maxObjectCount` before
/// decoding starts, and this bounds what decoding still produces where that count stops short
/// (a cycle re-entered, as a type may do until `maxDepth`).
final class KeyedArchiveDecodingBudget {
    @exclusivity(unchecked) private var remaining: Int  // one decode, one thread

    init(_ limit: Int) { remaining = limit }

    /// Takes one value from the budget; `false` once it is spent.
    func spend() -> Bool {
        remaining -= 1
        return remaining >= 0
    }
}

/// What every decoder of one ``KeyedArchive/decode(_:key:)`` shares, held by reference so that
/// making a child decoder (once per nested value) copies one pointer, not the archive's tables.
final class KeyedArchiveDecodingSession {
    let archive: KeyedArchive
    /// The `$top` key the decode started at, first in every error's path.
    let startPath: [String]
    let budget: KeyedArchiveDecodingBudget
    /// `archive.objects`, and `archive.limits.maxDepth`, held apart: read through `archive`,
    /// every field read copied the archive struct (a retain and release of each of its tables).
    let objects: [KeyedArchiveObject]
    let maxDepth: Int
    /// The shape whose instance started most recently, and the position each of its lookups
    /// found, in order (`-1` for a key not there): where the next instance's are looked for first.
    /// (Unchecked exclusivity, as the keyed lookup cursor of ``KeyedArchiveValueDecoder``: one thread, no
    /// access held across a call.)
    @exclusivity(unchecked) var predictedShape: KeyedArchiveFieldKeys?
    @exclusivity(unchecked) var predictedPositions: [Int] = []
    /// The name each of those lookups asked for: the same name again is the same position.
    @exclusivity(unchecked) var predictedNames: [String] = []
    /// For `NSDictionary`s: the name each lookup of the last dictionary asked for, in order,
    /// and the key object it found, which the next dictionary likely holds too (corelibs stores
    /// equal key strings once): found by comparing integers, not strings.
    @exclusivity(unchecked) var dictionaryLookups: [DictionaryLookup] = []

    /// One lookup of ``dictionaryLookups``.
    struct DictionaryLookup {
        var name: String
        var key: Int
    }
    init(archive: KeyedArchive, topKey: String) {
        self.archive = archive
        startPath = [topKey]
        budget = KeyedArchiveDecodingBudget(archive.limits.maxObjectCount)
        objects = archive.objects
        maxDepth = archive.limits.maxDepth
    }
}

/// The entries of a keyed container: an instance's (or plain dictionary's) fields as stored,
/// or an `NSDictionary`'s entries.
enum KeyedArchiveKeyedEntries {
    case instance(KeyedArchiveFieldTable)
    /// An `NSDictionary` whose keys are all strings: its keys and values, pairwise, and the
    /// table they refer into. Looked up in place (``position(of:keys:objects:)``).
    case dictionary(keys: [KeyedArchiveReference], values: [KeyedArchiveReference], objects: [KeyedArchiveObject])
    case fields([String: KeyedArchiveField])
    case items([String: KeyedArchiveItem])

    subscript(key: String) -> KeyedArchiveItem? {
        switch self {
        case .instance(let table): table[key].map(KeyedArchiveItem.init)
        case .dictionary(let keys, let values, let objects):
            Self.position(of: key, keys: keys, objects: objects).map { .object(values[$0]) }
        case .fields(let fields): fields[key].map(KeyedArchiveItem.init)
        case .items(let items): items[key]
        }
    }

    var keys: [String] {
        switch self {
        case .instance(let table): return table.names
        case .dictionary(let keys, _, let objects):
            var seen = Set<String>()
            return keys.compactMap { key in
                guard case .string(let name) = objects[key.index], seen.insert(name).inserted else { return nil }
                return name
            }
        case .fields(let fields): return Array(fields.keys)
        case .items(let items): return Array(items.keys)
        }
    }

    /// The position of the last of `keys` whose string is `name` (a key written twice reads
    /// its last value, as `NSDictionary(objects:forKeys:)` keeps it; see also
    /// `KeyedArchiveValueDecoder.dictionaryEntry(_:)`).
    ///
    /// A scan, comparing strings: records have a handful of keys, and hashing each name into a
    /// Swift dictionary for every `NSDictionary` decoded cost more than the scans it saved.
    /// Past ``indexThreshold`` keys the caller reads the entries into a dictionary instead.
    static func position(of name: String, keys: [KeyedArchiveReference], objects: [KeyedArchiveObject]) -> Int? {
        var position = keys.count
        while position > 0 {
            position -= 1
            if case .string(let key) = objects[keys[position].index], key == name { return position }
        }
        return nil
    }

    /// The number of keys up to which an `NSDictionary` is scanned rather than hashed.
    static var indexThreshold: Int { 16 }
}
