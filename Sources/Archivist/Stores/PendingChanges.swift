/// Changes of a ``Preferences`` file made in memory and not yet written: the new value of
/// each changed key (`nil`: removed), after an optional removal of every key.
///
/// A write applies them to the file's current root under its lock
/// (``apply(to:)``), so another writer's keys that these changes do not name survive, and the
/// last writer of a key wins. Keys compare by their bytes, as everywhere in the stores.
struct PendingChanges: Sendable {
    /// Whether every key of the file is removed before ``values`` are applied.
    var removesAll = false
    /// The new value of each changed key; `nil` removes the key.
    var values: [String: PlistValue?] = [:]

    /// What the changes say about one key.
    enum Lookup {
        /// The key's new value.
        case value(PlistValue)
        /// The key is removed.
        case absent
        /// The changes do not touch the key: the file's value stands.
        case unchanged
    }

    /// Whether there is nothing to write.
    var isEmpty: Bool { !removesAll && values.isEmpty }

    /// What the changes say about `key` (compared by its bytes).
    ///
    /// - Complexity: O(1) expected, plus O(n) in the key's length.
    func lookup(_ key: String) -> Lookup {
        if let index = values.index(forKey: key), Bytewise.equal(values[index].key, key) {
            return values[index].value.map(Lookup.value) ?? .absent
        }
        return removesAll ? .absent : .unchanged
    }

    /// A key that Swift's `==` cannot tell from `key` but whose bytes differ, if the changes
    /// name one.
    func lookalike(of key: String) -> String? {
        guard let index = values.index(forKey: key), !Bytewise.equal(values[index].key, key) else { return nil }
        return values[index].key
    }

    /// Records `value` (`nil`: a removal) as `key`'s new value.
    mutating func record(_ key: String, _ value: PlistValue?) {
        values.updateValue(value, forKey: key)
    }

    /// Puts `newer` on top of these changes: its values replace these, and its removal of
    /// every key replaces them all.
    mutating func merge(newer: PendingChanges) {
        if newer.removesAll {
            self = newer
            return
        }
        for (key, value) in newer.values { values.updateValue(value, forKey: key) }
    }

    /// Applies the changes to `root`. A key whose other spelling `root` holds (equal as a
    /// `String`, different in bytes) is left out, as ``PlistStore`` refuses it, and returned.
    ///
    /// - Complexity: O(k) for k changed keys, O(n) more when every key is removed.
    func apply(to root: inout [String: PlistValue]) -> [String] {
        if removesAll { root.removeAll() }
        var refused: [String] = []
        for (key, value) in values {
            if let value {
                if let index = root.index(forKey: key), !Bytewise.equal(root[index].key, key) {
                    refused.append(key)
                    continue
                }
                root[key] = value
            } else if PlistStore.entry(key, in: root) != nil {
                root[key] = nil
            }
        }
        return refused
    }
}
