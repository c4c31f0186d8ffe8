/// Values by string key in insertion order, found without hashing: an instance's fields as
/// being written (read ones are a ``KeyedArchiveFieldTable``).
///
/// Instances have a handful of fields, and a linear scan comparing (mostly small, inline)
/// strings beats hashing each key into a dictionary, on the insert and on the lookup alike. A
/// dictionary index is built once a table is wider than ``indexThreshold``, so lookups stay
/// O(1) for wide instances and hostile input.
struct KeyedArchiveKeyTable<Value> {
    /// One key and its value (a struct, not a tuple: arrays of tuples are destroyed by the
    /// runtime's generic tuple code, element by element).
    struct Entry {
        var key: String
        var value: Value
    }

    /// The entries, in the order their keys were first inserted.
    private(set) var entries: [Entry] = []
    /// Position of each key in ``entries``, once there are more than ``indexThreshold``.
    private var index: [String: Int]?

    /// The width up to which lookups scan instead of hashing.
    static var indexThreshold: Int { 16 }

    init() {}

    /// A table holding `dictionary`'s entries.
    init(_ dictionary: [String: Value]) {
        entries.reserveCapacity(dictionary.count)
        for (key, value) in dictionary { _ = insert(value, forKey: key) }
    }

    var count: Int { entries.count }

    /// Reserves room for `count` entries.
    mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

    /// Adds `value` under `key`; `false`, changing nothing, when `key` is already there.
    mutating func insert(_ value: Value, forKey key: String) -> Bool {
        guard position(of: key) == nil else { return false }
        append(value, forKey: key)
        return true
    }

    /// Sets the value under `key`, keeping the key's first position when it is already there.
    mutating func set(_ value: Value, forKey key: String) {
        if let position = position(of: key) { entries[position].value = value } else { append(value, forKey: key) }
    }

    private mutating func append(_ value: Value, forKey key: String) {
        entries.append(Entry(key: key, value: value))
        if index != nil {
            index?[key] = entries.count - 1
        } else if entries.count > Self.indexThreshold {
            var built = [String: Int](minimumCapacity: entries.count * 2)
            for (position, entry) in entries.enumerated() { built[entry.key] = position }
            index = built
        }
    }

    private func position(of key: String) -> Int? {
        if let index { return index[key] }
        // Comparing lengths first: `==` on two different strings takes the slow, general path.
        let length = key.utf8.count
        for position in entries.indices where entries[position].key.utf8.count == length && entries[position].key == key
        {
            return position
        }
        return nil
    }

    /// The value under `key`, or `nil`.
    subscript(key: String) -> Value? {
        guard let position = position(of: key) else { return nil }
        return entries[position].value
    }

    /// The keys, in insertion order.
    var keys: [String] { entries.map(\.key) }

    /// The entries as a dictionary.
    var dictionary: [String: Value] {
        Dictionary(entries.lazy.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

extension KeyedArchiveKeyTable: Sendable where Value: Sendable {}
extension KeyedArchiveKeyTable.Entry: Sendable where Value: Sendable {}
