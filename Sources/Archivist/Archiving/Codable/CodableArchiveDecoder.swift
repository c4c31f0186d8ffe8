/// The `Decoder` that runs a `Codable` type's `init(from:)` over the native format.
struct CodableArchiveDecoder: Decoder {
    let archive: ArchiveDecoder

    /// The archive behind `decoder` if it is this decoder: a metatype compare, not the dynamic
    /// cast `decoder as? CodableArchiveDecoder` (called with an `any Decoder`, opened).
    @inline(__always)
    static func archive<D: Decoder>(of decoder: D) -> ArchiveDecoder? {
        guard D.self == CodableArchiveDecoder.self else { return nil }
        return withUnsafePointer(to: decoder) {
            UnsafeRawPointer($0).assumingMemoryBound(to: CodableArchiveDecoder.self).pointee.archive
        }
    }
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let s = archive.storage
        try s.pointee.openRecord()
        // A container of the current record reads whatever record is current, so one per key
        // type serves every model of the archive: making one cost an allocation and two
        // runtime metadata lookups per model.
        let id = ObjectIdentifier(Key.self)
        for index in s.pointee.keyedContainers.indices where s.pointee.keyedContainers[index].key == id {
            if s.pointee.keyedContainers[index].learnsKeys {
                // Copied out by the cache itself, straight into this function's result: the
                // copy takes `KeyedDecodingContainer<Key>`'s metadata from the cache's class
                // (its generic argument), where copying it here looked the metadata up in the
                // runtime's generic cache (about 340 instructions per model).
                return unsafeDowncast(
                    s.pointee.keyedContainers[index].container.unsafelyUnwrapped,
                    to: KeyedContainerCache<KeyedDecodingContainer<Key>>.self
                ).copy()
            }
            return learningContainer(Key.self, at: index)
        }
        return firstContainer(Key.self)
    }

    /// The first model with these keys: an ordinary container, the key type only noted, so a
    /// one-model archive keeps nothing. Out of line, like ``learningContainer(_:at:)``, so
    /// that ``container(keyedBy:)``'s usual path makes nothing.
    @inline(never)
    private func firstContainer<Key: CodingKey>(_ type: Key.Type) -> KeyedDecodingContainer<Key> {
        let s = archive.storage
        if s.pointee.keyedContainers.count < DecoderStorage.keyedContainerLimit {
            s.pointee.keyedContainers.append((ObjectIdentifier(Key.self), false, nil))
        }
        return KeyedDecodingContainer(KeyedReader<Key>(archive: archive, record: nil))
    }

    /// The second model with these keys: a container whose reader remembers key indexes pays
    /// off now (for the first, as in a one-model archive, it cost more than it saved); kept in
    /// entry `index` of the decoder's containers. A ``CachedKeyedReader``: the fields of every
    /// later model go through it. Not inlined: a local container in
    /// ``container(keyedBy:)`` made it look up `KeyedDecodingContainer<Key>` on every call.
    @inline(never)
    private func learningContainer<Key: CodingKey>(_ type: Key.Type, at index: Int) -> KeyedDecodingContainer<Key> {
        let s = archive.storage
        let reader = KeyedReader<Key>(archive: archive, record: nil, learnsKeys: true)
        let (word, epoch) = s.pointee.currentEpoch()
        // The cache holds the reader the container refers to without a strong reference, until
        // the epoch ends (see ``CachedKeyedReader``).
        let cache = KeyedContainerCache(
            KeyedDecodingContainer(CachedKeyedReader(reader, word: word, epoch: epoch)),
            keeping: reader
        )
        s.pointee.keyedContainers[index].container = cache
        s.pointee.keyedContainers[index].learnsKeys = true
        return cache.copy()
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try archive.storage.pointee.beginSingleValue()
        return try UnkeyedReader(archive: archive)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueReader(archive: archive)
    }
}
