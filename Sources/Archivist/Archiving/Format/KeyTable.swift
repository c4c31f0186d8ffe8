/// The encoder's key table: each distinct field key gets the next index, in first-use order.
///
/// Most archives hold a few keys, written in the same order record after record, so a lookup
/// first tries the entry after the last key found (a sequential hit costs one string compare),
/// then scans the table while it is small; only a table past ``linearLimit`` keys builds a
/// dictionary. A one-record archive never hashes a key.
struct KeyTable {
    /// A key and a cheap digest of it (length and first byte), so a scan compares strings
    /// only when the digests agree.
    private struct Entry {
        var key: String
        var digest: Int
    }

    private var entries: [Entry] = []
    private var index: [String: Int] = [:]
    /// The index returned last; the next lookup tries `last + 1` first.
    private var last = -1

    /// Tables up to this many keys are scanned instead of hashed.
    static let linearLimit = 24

    /// The number of keys.
    var count: Int { entries.count }

    /// The keys by index.
    var keys: [String] { entries.map(\.key) }

    /// Calls `body` with each key, in index order.
    func forEach(_ body: (String) -> Void) {
        for entry in entries { body(entry.key) }
    }

    /// The index of `key`, adding it if it is new.
    @inline(__always)
    mutating func intern(_ key: String) -> Int {
        let next = last &+ 1
        if next < entries.count, entries[next].key == key {
            last = next
            return next
        }
        return lookUpOrAdd(key)
    }

    private mutating func lookUpOrAdd(_ key: String) -> Int {
        let digest = Self.digest(key)
        var found: Int?
        if entries.count <= Self.linearLimit {
            for i in entries.indices where entries[i].digest == digest && entries[i].key == key {
                found = i
                break
            }
        } else {
            found = index[key]
        }
        if let found {
            last = found
            return found
        }
        let new = entries.count
        if new == 0 { entries.reserveCapacity(16) }
        entries.append(Entry(key: key, digest: digest))
        if entries.count > Self.linearLimit {
            if index.isEmpty {
                index.reserveCapacity(entries.count * 2)
                for (i, entry) in entries.enumerated() { index[entry.key] = i }
            } else {
                index[key] = new
            }
        }
        last = new
        return new
    }

    @inline(__always)
    private static func digest(_ key: String) -> Int {
        let utf8 = key.utf8
        return utf8.count &<< 8 | Int(utf8.first ?? 0)
    }
}
