import CArchivistSupport

/// The keyed container the decoder's cache hands to every model after the first with the same
/// coding keys (see ``CodableArchiveDecoder/container(keyedBy:)``): a plain value that holds its
/// ``KeyedReader`` without a strong reference.
///
/// The standard library's container box copies the container it wraps and destroys the copy
/// for every field it decodes. A reader held strongly made that a retain and a release, two
/// atomic operations per field (14 of a letter's 35 in graph (b)); this value's copy is a
/// memory copy and its destruction nothing.
///
/// Why the reader is alive when it is used: the decoder's cache holds it strongly from the
/// container's making until ``DecoderStorage/endEpoch()`` (when the top-level decode ends, or
/// the decoder is freed), which first moves `word` (the decoder's ``DecoderStorage/epochWord``)
/// past `epoch`. Every use compares the two and touches the reader only while they are equal,
/// so a container a model kept past its `init(from:)` throws from then on instead of reaching a
/// freed reader. The word itself is never freed (``DecoderEpochs``), so reading it is safe at
/// any time; it only grows, so an old container never matches a later decode that reuses it.
struct CachedKeyedReader<Key: CodingKey>: KeyedDecodingContainerProtocol {
    private let reader: Unmanaged<KeyedReader<Key>>
    private let word: UnsafePointer<UInt64>
    private let epoch: UInt64

    /// A container of `reader` (of the current record: no nested record), valid while `word`
    /// holds `epoch`.
    init(_ reader: KeyedReader<Key>, word: UnsafePointer<UInt64>, epoch: UInt64) {
        assert(reader.record == nil, "a cached reader reads the current record")
        self.reader = .passUnretained(reader)
        self.word = word
        self.epoch = epoch
    }

    /// Runs `body` with the reader while the decode that made this container runs; throws
    /// `invalidValue` after.
    @inline(__always)
    private func live<R>(_ body: (KeyedReader<Key>) throws -> R) throws -> R {
        // A relaxed load: the thread that ends the decode is the one running it, or it
        // happened before anything that handed a kept container to another thread.
        guard _fastPath(archivist_atomic_load_relaxed_u64(word) == epoch) else { throw DecoderEpochs.ended() }
        return try reader._withUnsafeGuaranteedRef(body)
    }

    // The fields read here in the container's own code, not by calling the reader's methods:
    // the optimizer does not inline a method of `KeyedReader<Key>` into another type generic
    // over `Key`, and the extra call per field cost about as much as the retain it replaced.
    // What needs no reader (seeking, reading and naming the key in an error) is the
    // decoder's, ``ArchiveDecoder/decodeField(_:found:read:)`` and its forms, which inline
    // into each.

    /// Positions the decoder at `key`'s value in the current record; false if it has none.
    /// A key seen before is found by its index (``KeyedReader/seek(_:_:)`` without the call);
    /// everything else takes the reader's own seek.
    @inline(__always)
    private func seek(_ key: Key, _ reader: KeyedReader<Key>, _ s: UnsafeMutablePointer<DecoderStorage>) throws -> Bool
    {
        if let slots = reader.keySlots {
            let byte = reader.oneByteKey ? Int(unsafeBitCast(key, to: UInt8.self)) : 0
            if byte < KeyedReaderSlots.count, slots.pointee == s.pointee.keys.generation {
                let known = (slots + 1 + byte).pointee
                if known != 0, try s.pointee.seek(keyIndex: known &- 1) { return true }
            }
        }
        return try reader.seek(key, s)
    }

    /// Reads a primitive field.
    @inline(__always)
    private func primitive<P: ArchivePrimitive>(_ type: P.Type, _ key: Key) throws -> P {
        try live { reader in
            let archive = reader.archive
            let s = archive.storage
            return try archive.decodeField(key.stringValue, found: seek(key, reader, s)) {
                try P.read(from: &s.pointee.reader)
            }
        }
    }

    /// Reads an optional primitive field (`nil` when absent or null).
    @inline(__always)
    private func primitiveIfPresent<P: ArchivePrimitive>(_ type: P.Type, _ key: Key) throws -> P? {
        try live { reader in
            let archive = reader.archive
            let s = archive.storage
            return try archive.decodeFieldIfPresent(key.stringValue, found: seek(key, reader, s)) {
                try P.read(from: &s.pointee.reader)
            }
        }
    }

    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { (try? live { $0.allKeys }) ?? [] }
    func contains(_ key: Key) -> Bool { (try? live { $0.contains(key) }) ?? false }

    func decodeNil(forKey key: Key) throws -> Bool {
        try live { reader in
            let archive = reader.archive
            guard try seek(key, reader, archive.storage) else { throw archive.keyNotFound(key.stringValue) }
            return try archive.skipNullField()
        }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try primitive(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try primitive(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try primitive(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try primitive(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try primitive(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try primitive(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try primitive(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try primitive(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try primitive(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try primitive(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try primitive(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try primitive(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try primitive(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try primitive(type, key) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try primitiveIfPresent(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try primitiveIfPresent(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try primitiveIfPresent(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try primitiveIfPresent(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try primitiveIfPresent(type, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try live { reader in
            let archive = reader.archive
            return try archive.decodeField(key.stringValue, found: seek(key, reader, archive.storage)) {
                try archive.readDecodable(T.self)
            }
        }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try live { try $0.decodeIfPresent(type, forKey: key) }
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type,
        forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try live { try $0.nestedContainer(keyedBy: type, forKey: key) }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try live { try $0.nestedUnkeyedContainer(forKey: key) }
    }

    func superDecoder() throws -> any Decoder { try live { try $0.superDecoder() } }
    func superDecoder(forKey key: Key) throws -> any Decoder { try live { try $0.superDecoder(forKey: key) } }
}

/// The words that values referring to a decoder's state without holding it check
/// (``DecoderStorage/epochWord``): one per decoder, recycled between decoders and never freed,
/// since a value a model kept may read its word long after its decoder is gone. So there are at
/// most as many as decoders ever alive at once.
enum DecoderEpochs {
    // The words in the pool are touched only under its lock; a taken word belongs to one
    // decoder, which writes it with atomic operations only.
    private static let pool = Locked<[UnsafeMutablePointer<UInt64>]>([])

    /// A word no decoder uses (a new one holding 0 when the pool is empty).
    static func take() -> UnsafeMutablePointer<UInt64> {
        if let word = pool.withLock({ $0.popLast() }) { return word }
        let word = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        word.initialize(to: 0)
        return word
    }

    /// What a value that refers to a decoder's state unretained throws once the decode that
    /// made it ended.
    @inline(never)
    static func ended() -> ArchiveError {
        ArchiveError(.invalidValue, "a keyed decoding container used after the decode that made it ended")
    }

    /// Returns `word`, whose decoder ended its last decode, to the pool.
    static func recycle(_ word: UnsafeMutablePointer<UInt64>) {
        pool.withLock { $0.append(word) }
    }
}
