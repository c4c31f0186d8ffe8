/// The encoder's key table: each distinct field key gets the next index, in first-use order.
///
/// Most archives hold a few keys, written in the same order record after record, so a lookup
/// first tries the entry after the last key found (a sequential hit costs one string compare),
/// then scans the table while it is small; only a table past ``linearLimit`` keys builds a
/// dictionary. A one-record archive never hashes a key.
struct KeyTable {
    /// Keys by index.
    private(set) var keys: [String] = []
    /// A cheap digest of each key (length and first byte), so a scan compares strings only
    /// when the digests agree.
    private var digests: [Int] = []
    private var index: [String: Int] = [:]
    /// The index returned last; the next lookup tries `last + 1` first.
    private var last = -1

    /// Tables up to this many keys are scanned instead of hashed.
    static let linearLimit = 24

    /// The index of `key`, adding it if it is new.
    @inline(__always)
    mutating func intern(_ key: String) -> Int {
        let next = last &+ 1
        if next < keys.count, keys[next] == key {
            last = next
            return next
        }
        return lookUpOrAdd(key)
    }

    private mutating func lookUpOrAdd(_ key: String) -> Int {
        let found: Int?
        let digest = Self.digest(key)
        if keys.count <= Self.linearLimit {
            found = digests.indices.first { digests[$0] == digest && keys[$0] == key }
        } else {
            found = index[key]
        }
        if let found {
            last = found
            return found
        }
        let new = keys.count
        if new == 0 {
            keys.reserveCapacity(16)
            digests.reserveCapacity(16)
        }
        keys.append(key)
        digests.append(digest)
        if keys.count > Self.linearLimit {
            if index.isEmpty {
                index.reserveCapacity(keys.count * 2)
                for (i, k) in keys.enumerated() { index[k] = i }
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
