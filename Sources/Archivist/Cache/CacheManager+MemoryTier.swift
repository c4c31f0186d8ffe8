import Foundation

/// A memory-tier key: the type's name, its location (for clearing by location) and the
/// parameter, as the caller gave them, so a hit hashes no MD5. Not generic over the cache
/// type, so the memory tier is fully specialized inside the module.
///
/// Names compare as UTF-8 bytes (``Bytewise``), as the disk does: two spellings of "é" are
/// two keys here as they are two entry files, not one slot shared by both.
@usableFromInline
struct MemoryKey: Hashable, Sendable {
    @usableFromInline var typeName: String
    @usableFromInline var location: CacheLocation
    /// Whether the key has a parameter (``parameterOrEmpty`` is empty when not).
    @usableFromInline var hasParameter: Bool
    /// The parameter, or "" when there is none: a plain `String`, so that a hit can compare
    /// its bits in place (an absent optional's bytes are not all defined).
    @usableFromInline var parameterOrEmpty: String
    /// The entry's key on disk: how change coherence and eviction match memory values to the
    /// disk entries they touched. Every key the manager stores a value under has one; a key
    /// made only to find or remove a value needs none. Not part of the key's identity, which is
    /// the name, location and parameter.
    var disk: DiskKey?

    /// The parameter, if any.
    @inlinable
    var parameter: String? { hasParameter ? parameterOrEmpty : nil }

    /// A key from a type's name and location already read, without a disk key: for finding
    /// or removing a value (the identity is the name, location and parameter).
    @inlinable
    init(name: String, location: CacheLocation, parameter: String?) {
        typeName = name
        self.location = location
        hasParameter = parameter != nil
        parameterOrEmpty = parameter ?? ""
    }

    /// The key of an entry at `disk`, for putting its value in the tier.
    init(name: String, location: CacheLocation, parameter: String?, disk: DiskKey) {
        self.init(name: name, location: location, parameter: parameter)
        self.disk = disk
    }

    /// Hashes the parameter's bytes alone, or the location when there is none (what the memory
    /// tier's index hashes too, with a function of its own:
    /// ``MemoryTier/tableHash(location:parameter:)``).
    @inlinable
    func hash(into hasher: inout Hasher) {
        if let parameter { Bytewise.hash(parameter, into: &hasher) } else { hasher.combine(location.hashByte) }
    }

    /// Whether the key at `key` names the entry of `name`, `location` and `parameter`, by
    /// bytes.
    ///
    /// A hit usually finds the stored strings bit for bit the caller's (one small string, or
    /// one storage object): that is read in place, through `key`, with no byte comparison and
    /// no retain. Only when the bits differ does it compare bytes, out of line.
    @inlinable @inline(__always)
    static func matches(
        _ key: UnsafePointer<MemoryKey>,
        name: String,
        location: CacheLocation,
        parameter: String?
    ) -> Bool {
        guard key.pointee.location == location, key.pointee.hasParameter == (parameter != nil) else { return false }
        if Bytewise.sameRepresentation(key.pointer(to: \.typeName).unsafelyUnwrapped, name) {
            // Not `parameter ?? ""`: that built a string, retaining the parameter.
            guard let parameter else { return true }
            if Bytewise.sameRepresentation(key.pointer(to: \.parameterOrEmpty).unsafelyUnwrapped, parameter) {
                return true
            }
        }
        return bytesEqual(key, name: name, parameter: parameter)
    }

    /// The byte comparison behind ``matches(_:name:location:parameter:)``, out of line.
    @usableFromInline @inline(never)
    static func bytesEqual(_ key: UnsafePointer<MemoryKey>, name: String, parameter: String?) -> Bool {
        Bytewise.equal(key.pointee.parameter, parameter) && Bytewise.equal(key.pointee.typeName, name)
    }

    /// Byte equality of the names, consistent with hashing the bytes above.
    @inlinable
    static func == (a: MemoryKey, b: MemoryKey) -> Bool {
        a.location == b.location && Bytewise.equal(a.parameter, b.parameter) && Bytewise.equal(a.typeName, b.typeName)
    }
}

extension CacheLocation {
    /// One byte per location, for hashing it cheaply.
    @inlinable
    var hashByte: UInt8 {
        switch self {
        case .sharedCaches: 0
        case .userCaches: 1
        case .userDocuments: 2
        }
    }
}

/// A decoded value in the memory tier, with the dates freshness is judged by.
///
/// A class, so that a hit copies one reference out of the tier's lock (one retain) rather than
/// an existential value and two dates through value witnesses, a large share of a hit (the
/// `cache-memory` suite guards it). The only subclass is ``StoredItem``; reading the value
/// back as the type it was stored as costs a metatype comparison, not a dynamic cast.
@usableFromInline
class MemoryItem: @unchecked Sendable {
    // Safety: every stored property but `hitCount` is an immutable `Sendable` value, and the
    // only subclass, `StoredItem`, adds one immutable `Sendable` value. `hitCount` is set once,
    // before the item enters the tier; the words it points at are guarded by the tier's lock.

    /// The static type the value was stored as.
    @usableFromInline let valueType: ObjectIdentifier
    /// When the entry was written.
    @usableFromInline let writeDate: Date
    /// When the entry stops being fresh, if ever.
    @usableFromInline let expiry: Date?
    /// Whether a hit must record an access in the disk index (the type has a byte limit).
    @usableFromInline let touchesIndex: Bool
    /// The memory-hit word of the item's type in its manager's statistics (``TypeTally/local``).
    @usableFromInline @exclusivity(unchecked) var hitCount: UnsafeMutablePointer<UInt64>?

    fileprivate init(valueType: Any.Type, writeDate: Date, expiry: Date?, touchesIndex: Bool) {
        self.valueType = ObjectIdentifier(valueType)
        self.writeDate = writeDate
        self.expiry = expiry
        self.touchesIndex = touchesIndex
    }

    /// The value, if it was stored as exactly a `T`; `nil` otherwise.
    ///
    /// - Complexity: O(1).
    @inlinable
    final func value<T: Sendable>(as _: T.Type) -> T? {
        guard valueType == ObjectIdentifier(T.self) else { return nil }
        // `valueType` is set only by `StoredItem<Value>` to `Value.self`, so this is one.
        return unsafeDowncast(self, to: StoredItem<T>.self).value
    }
}

/// The one ``MemoryItem`` subclass: a value of a known static type.
@usableFromInline
final class StoredItem<Value: Sendable>: MemoryItem, @unchecked Sendable {
    // Safety: adds one immutable `Sendable` value to an immutable base.
    @usableFromInline let value: Value

    init(_ value: Value, writeDate: Date, expiry: Date?, touchesIndex: Bool) {
        self.value = value
        super.init(valueType: Value.self, writeDate: writeDate, expiry: expiry, touchesIndex: touchesIndex)
    }
}

/// Builds the memory item for a value once its dates are known: what a write or a disk read
/// hands down to put the value in the memory tier.
typealias MemoryItemMaker = (_ writeDate: Date, _ expiry: Date?, _ touchesIndex: Bool) -> MemoryItem

/// The memory tier behind a non-generic class, so the generic ``CacheManager`` calls fully
/// specialized code here instead of instantiating generic metadata on every hit.
///
/// Its index hashes keys with ``Bytewise/seededHash(_:seed:)`` under a seed drawn at random for
/// each tier, not with `Hasher`, whose SipHash with its setup and finalization is a large share
/// of a hit (the `cache-memory` suite guards it). The fast hash is not a cryptographic one,
/// and it need not be: the seed is never exposed (nor are hash values or the index's order),
/// so a caller cannot pick keys that collide; parameters built by an outsider (URL paths,
/// ids) could at worst be tried blindly.
/// And what a collision costs is bounded: the tier holds at most its count limit of entries,
/// its index is at most half full, and a probe compares keys only where the upper 32 bits of
/// the hashes agree.
@usableFromInline
final class MemoryTier: Sendable {
    @usableFromInline let cache: MemoryCache<MemoryKey, MemoryItem>
    /// This tier's seed for ``tableHash(location:parameter:)``, random per tier.
    @usableFromInline let seed: UInt64

    init(countLimit: Int, costLimit: Int) {
        cache = MemoryCache(configuration: .init(countLimit: countLimit, costLimit: costLimit))
        seed = UInt64.random(in: .min ... .max)
    }

    /// The hash this tier files a key under: the parameter's bytes alone (seeded, see the type's
    /// comment), or the location when there is none. One pass over the parameter per lookup.
    /// Entries of different types (or locations) with the same parameter share a hash and are
    /// told apart by ``MemoryKey/matches(_:name:location:parameter:)``.
    ///
    /// Computed from a key's parts, so that a lookup builds no key (and retains no string for
    /// one); every lookup, insertion and removal passes it.
    ///
    /// - Complexity: O(length of the parameter).
    @inlinable @inline(__always)
    func tableHash(location: CacheLocation, parameter: String?) -> Int {
        guard let parameter else {
            return Int(
                truncatingIfNeeded: Bytewise.mix(UInt64(location.hashByte) ^ seed, seed ^ Bytewise.HashConstants.p0)
            )
        }
        return Int(truncatingIfNeeded: Bytewise.seededHash(parameter, seed: seed))
    }

    /// `key`'s ``tableHash(location:parameter:)``.
    @inlinable
    func tableHash(of key: MemoryKey) -> Int { tableHash(location: key.location, parameter: key.parameter) }

    /// The item of type `name`, at `location`, for `parameter`, made the most recent.
    /// Compiled here, not inlined into the caller: the whole lookup (hashing, probing, the
    /// comparison, the LRU move) is then one specialized function, where inlined into each
    /// `CacheManager` specialization the optimizer split it unpredictably into several calls.
    /// It takes the key's parts and builds no key: building one retained the strings.
    @usableFromInline
    func item(name: String, location: CacheLocation, parameter: String?) -> MemoryItem? {
        let hash = tableHash(location: location, parameter: parameter)
        return cache.valueCountingHit(hash: hash) {
            MemoryKey.matches($0, name: name, location: location, parameter: parameter)
        }
    }

    func set(_ item: MemoryItem, for key: MemoryKey, cost: Int) {
        cache.setValue(item, forKey: key, hash: tableHash(of: key), cost: cost) { $0.countEviction() }
    }

    func remove(_ key: MemoryKey) { _ = cache.removeValue(forKey: key, hash: tableHash(of: key)) }

    func removeAll() { cache.removeAll() }

    func removeAll(where shouldRemove: (MemoryKey) -> Bool) { cache.removeAll(where: shouldRemove) }
}
