/// An instance's fields in archive order, found by key without hashing.
///
/// Instances have a handful of fields, and a linear scan comparing (mostly small, inline)
/// strings beats hashing each key into a dictionary on both the insert and the lookup; a
/// dictionary index is built only for instances wider than ``indexThreshold``, so lookups stay
/// O(1) on hostile input.
struct KeyedArchiveFieldTable: Sendable {
    /// The fields, in the order they were inserted.
    private(set) var entries: [(key: String, value: KeyedArchiveField)] = []
    /// Position of each key in ``entries``, once there are more than ``indexThreshold``.
    private var index: [String: Int]?

    /// The width up to which lookups scan instead of hashing.
    static let indexThreshold = 16

    init() {}

    /// A table holding `dictionary`'s entries.
    init(_ dictionary: [String: KeyedArchiveField]) {
        entries.reserveCapacity(dictionary.count)
        for (key, value) in dictionary { _ = insert(value, forKey: key) }
    }

    /// Reserves room for `count` fields.
    mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

    /// Adds `value` under `key`; `false`, changing nothing, when `key` is already there.
    mutating func insert(_ value: KeyedArchiveField, forKey key: String) -> Bool {
        guard position(of: key) == nil else { return false }
        entries.append((key, value))
        if index != nil {
            index?[key] = entries.count - 1
        } else if entries.count > Self.indexThreshold {
            var built = [String: Int](minimumCapacity: entries.count * 2)
            for (position, entry) in entries.enumerated() { built[entry.key] = position }
            index = built
        }
        return true
    }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        for position in entries.indices where entries[position].key == key { return position }
        return nil
    }

    /// The field under `key`, or `nil`.
    subscript(key: String) -> KeyedArchiveField? {
        guard let position = position(of: key) else { return nil }
        return entries[position].value
    }

    /// The keys, in archive order.
    var keys: [String] { entries.map(\.key) }

    /// The fields as a dictionary.
    var dictionary: [String: KeyedArchiveField] {
        Dictionary(entries, uniquingKeysWith: { first, _ in first })
    }
}
