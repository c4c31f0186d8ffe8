/// The encoder's key table: each distinct field key gets the next index, in first-use order.
///
/// Most archives hold a few keys, written in the same order record after record, so a lookup
/// first tries the entry after the last key found (a sequential hit costs one string compare),
/// then scans the table while it is small; only a table past ``linearLimit`` keys builds a
/// dictionary. A one-record archive never hashes a key.
///
/// A reused encoder (see ``ArchiveEncoder/withReusable(options:_:)``) keeps a small table's
/// keys after ``removeAll()`` as a guess at the next archive's: an archive of the same model
/// asks for the same keys in the same order, and each then costs one string compare, without
/// a scan or a copy of the key, inline in ``intern(_:)``.
///
/// The table also keeps its keys as the archive stores them (varint length, UTF-8 bytes), so
/// the encoder's `finish` appends the key table with one copy instead of a string per key.
struct KeyTable {
    /// A key, a cheap digest of it (length and first byte), so a scan compares strings only
    /// when the digests agree, and where its stored form ends in `serialized`.
    private struct Entry {
        var key: String
        var digest: Int
        var end: Int
    }

    /// The keys in use (`..<used`), then the previous archive's further keys, kept as the
    /// guess for the next new key. All entries are distinct.
    private var entries: [Entry] = []
    private var used = 0
    /// Every entry's key as the archive's key table stores it, in entry order.
    private var serialized: [UInt8] = []
    private var index: [String: Int] = [:]
    /// The index returned last; the next lookup tries `last + 1` first.
    private var last = -1

    /// Tables up to this many keys are scanned instead of hashed.
    static let linearLimit = 24

    /// The number of keys.
    var count: Int { used }

    /// The keys by index.
    var keys: [String] { entries[..<used].map(\.key) }

    /// Calls `body` with each key, in index order.
    func forEach(_ body: (String) -> Void) {
        for entry in entries[..<used] { body(entry.key) }
    }

    /// Calls `body` with the keys in use as the archive's key table stores them: each a
    /// varint length and its UTF-8 bytes, in index order (the count is not included).
    func withSerializedKeys(_ body: (UnsafeRawBufferPointer) -> Void) {
        let end = used == 0 ? 0 : entries[used - 1].end
        serialized.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<end])) }
    }

    /// Forgets every key. A small table keeps them as the guess for the next archive.
    mutating func removeAll() {
        if entries.count > Self.linearLimit {
            entries = []
            serialized = []
        }
        if !index.isEmpty { index = [:] }
        used = 0
        last = -1
    }

    /// The index of `key`, adding it if it is new.
    @inline(__always)
    mutating func intern(_ key: String) -> Int {
        let next = last &+ 1
        // `next` is at most `used`: either the key after the last one found, or the key the
        // previous archive added next (new here, as entries are distinct).
        if next < entries.count, entries[next].key == key {
            // A guess is kept only by a table of at most `linearLimit` keys: no index to update.
            if next == used { used = next &+ 1 }
            last = next
            return next
        }
        return lookUpOrAdd(key)
    }

    private mutating func lookUpOrAdd(_ key: String) -> Int {
        // The key the previous archive added next: new here, as entries are distinct.
        if used < entries.count, entries[used].key == key {
            return add(at: used)
        }
        let digest = Self.digest(key)
        var found: Int?
        if used <= Self.linearLimit {
            for i in 0..<used where entries[i].digest == digest && entries[i].key == key {
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
        // A stale entry may equal a later new key: drop the guesses before adding.
        if used < entries.count {
            entries.removeSubrange(used...)
            serialized.removeSubrange((used == 0 ? 0 : entries[used - 1].end)...)
        }
        if used == 0 {
            entries.reserveCapacity(16)
            serialized.reserveCapacity(256)
        }
        var length = UInt(key.utf8.count)
        while length >= 0x80 {
            serialized.append(UInt8(truncatingIfNeeded: length) | 0x80)
            length >>= 7
        }
        serialized.append(UInt8(truncatingIfNeeded: length))
        serialized.append(contentsOf: key.utf8)
        entries.append(Entry(key: key, digest: digest, end: serialized.count))
        return add(at: used)
    }

    /// Counts entry `new` (== `used`) as in use.
    private mutating func add(at new: Int) -> Int {
        used = new + 1
        if used > Self.linearLimit {
            if index.isEmpty {
                index.reserveCapacity(used * 2)
                for i in 0..<used { index[entries[i].key] = i }
            } else {
                index[entries[new].key] = new
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
