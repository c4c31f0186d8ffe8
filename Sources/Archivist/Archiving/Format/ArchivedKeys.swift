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
    /// Where a key's bytes lie, relative to `base`, and the key as the bits of a `String` (see
    /// ``smallStringBits(_:)``).
    private struct Entry {
        var start: Int
        var count: Int
        var bits: (UInt64, UInt64)
    }

    private var base: UnsafeRawPointer
    private var entries: [Entry] = []
    /// Changes whenever the keys do (not when ``rebase(_:)`` keeps them), so a reader that
    /// remembers where a key is in the table knows when to look again.
    private(set) var generation = 0

    init(base: UnsafeRawPointer) { self.base = base }

    /// Forgets the keys, keeping the table's memory, to read the tables at `base`.
    mutating func removeAll(base: UnsafeRawPointer) {
        self.base = base
        generation &+= 1
        if !entries.isEmpty { entries.removeAll(keepingCapacity: entries.count <= KeyTable.linearLimit) }
    }

    /// Keeps the keys for tables at `base` holding the same bytes as the ones they were read
    /// from.
    mutating func rebase(_ base: UnsafeRawPointer) { self.base = base }

    /// The number of keys.
    var count: Int { entries.count }

    /// Reads the next key from `reader`: a length-prefixed string, valid UTF-8 (else `corrupt`).
    mutating func append(from reader: inout ByteReader) throws {
        let start = reader.pos
        let raw = try reader.lengthPrefixed()
        let ascii = ByteReader.isASCII(raw)
        if !ascii, String(validatingUTF8Bytes: raw.bindMemory(to: UInt8.self)) == nil {
            throw ArchiveError(.corrupt, "invalid UTF-8 in a string", offset: start)
        }
        entries.append(
            Entry(
                start: raw.baseAddress.map { $0 - base } ?? 0,
                count: raw.count,
                bits: ascii ? Self.smallStringBits(raw) : Self.noString
            )
        )
        generation &+= 1
    }

    mutating func reserveCapacity(_ count: Int) { entries.reserveCapacity(count) }

    /// Whether key `index` is `key`.
    ///
    /// A model's key is usually a literal of at most 15 ASCII bytes, a small string, whose two
    /// words hold its bytes and length: the same bits as the key's entry is one compare of two
    /// words. Anything else compares bytes (reading a small string's bytes spilled it to the
    /// stack and retained and released it twice, about half of a `Bool` field's decode).
    @inline(__always)
    func matches(_ index: Int, _ key: String) -> Bool {
        let entry = entries[index]
        #if arch(x86_64) || arch(arm64)
        if unsafeBitCast(key, to: (UInt64, UInt64).self) == entry.bits { return true }
        #endif
        let utf8 = key.utf8
        guard utf8.count == entry.count else { return false }
        let bytes = base + entry.start
        return utf8.withContiguousStorageIfAvailable { own in
            guard let ownBase = own.baseAddress else { return true }  // both empty
            return Bytewise.equal(UnsafeRawPointer(ownBase), bytes, count: entry.count)
        } ?? Bytewise.equal(string(index), key)
    }

    /// Key `index` as a string.
    func string(_ index: Int) -> String {
        let entry = entries[index]
        return String(decoding: UnsafeRawBufferPointer(start: base + entry.start, count: entry.count), as: UTF8.self)
    }

    /// Bits no `String` has (a large string's second word is never 0), for keys without a
    /// small-string form.
    private static let noString: (UInt64, UInt64) = (0, 0)

    /// The two words of a small `String` holding the ASCII bytes `raw` (``SmallASCIIString``),
    /// or ``noString`` for keys over 15 bytes or where strings are not laid out so, which makes
    /// the compare fall back to the bytes.
    private static func smallStringBits(_ raw: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        SmallASCIIString.bits(raw) ?? noString
    }
}
