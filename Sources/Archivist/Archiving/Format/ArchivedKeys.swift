import Foundation

/// The decoder's key table: where each key's UTF-8 bytes lie in the archive, checked once.
///
/// A field lookup compares the key the model asks for with the archived bytes, so decoding
/// never builds a `String` per key (for a one-record archive that was about a tenth of the
/// decode); ``string(_:)`` makes one only for `allKeys` and error messages.
///
/// Key ranges are kept relative to `base`, the start of the archive's tables, so a decoder
/// that reads another archive with the same tables (the next archive of the same model) keeps
/// them and only moves `base` (``rebase(_:)``).
struct ArchivedKeys {
    private var base: UnsafeRawPointer
    private var ranges: [(start: Int, count: Int)] = []
    /// Changes whenever the keys do (not when ``rebase(_:)`` keeps them), so a reader that
    /// remembers where a key is in the table knows when to look again.
    private(set) var generation = 0

    init(base: UnsafeRawPointer) { self.base = base }

    /// Forgets the keys, keeping the table's memory, to read the tables at `base`.
    mutating func removeAll(base: UnsafeRawPointer) {
        self.base = base
        generation &+= 1
        if !ranges.isEmpty { ranges.removeAll(keepingCapacity: ranges.count <= KeyTable.linearLimit) }
    }

    /// Keeps the keys for tables at `base` holding the same bytes as the ones they were read
    /// from.
    mutating func rebase(_ base: UnsafeRawPointer) { self.base = base }

    /// The number of keys.
    var count: Int { ranges.count }

    /// Reads the next key from `reader`: a length-prefixed string, valid UTF-8 (else `corrupt`).
    mutating func append(from reader: inout ByteReader) throws {
        let start = reader.pos
        let raw = try reader.lengthPrefixed()
        if !ByteReader.isASCII(raw), String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self) == nil {
            throw ArchiveError(.corrupt, "invalid UTF-8 in a string", offset: start)
        }
        ranges.append((raw.baseAddress.map { $0 - base } ?? 0, raw.count))
        generation &+= 1
    }

    mutating func reserveCapacity(_ count: Int) { ranges.reserveCapacity(count) }

    /// Whether key `index` is `key`.
    @inline(__always)
    func matches(_ index: Int, _ key: String) -> Bool {
        let range = ranges[index]
        let utf8 = key.utf8
        guard utf8.count == range.count else { return false }
        let bytes = base + range.start
        return utf8.withContiguousStorageIfAvailable { own in
            guard let ownBase = own.baseAddress else { return true }  // both empty
            return Bytewise.equal(UnsafeRawPointer(ownBase), bytes, count: range.count)
        } ?? Bytewise.equal(string(index), key)
    }

    /// Key `index` as a string.
    func string(_ index: Int) -> String {
        let range = ranges[index]
        return String(decoding: UnsafeRawBufferPointer(start: base + range.start, count: range.count), as: UTF8.self)
    }
}
