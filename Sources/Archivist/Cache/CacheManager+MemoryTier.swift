import Foundation

/// A memory-tier key: the type's name, its location (for clearing by location) and the
/// parameter, as the caller gave them, so a hit hashes no MD5. Not generic over the cache
/// type, so the memory tier is fully specialized inside the module.
@usableFromInline
struct MemoryKey: Hashable, Sendable {
    @usableFromInline var typeName: String
    @usableFromInline var location: CacheLocation
    @usableFromInline var parameter: String?

    @inlinable
    init<Kind: CacheType>(_ type: Kind, _ parameter: String?) {
        typeName = type.name
        location = type.location
        self.parameter = parameter
    }

    /// Hashes the parameter and location but not the type name: one string hash per lookup.
    /// Entries of different types with the same parameter share a hash and are told apart
    /// by `==`.
    @inlinable
    func hash(into hasher: inout Hasher) {
        hasher.combine(parameter)
        hasher.combine(location)
    }
}

/// A decoded value in the memory tier, with the dates freshness is judged by.
@usableFromInline
struct MemoryItem: Sendable {
    @usableFromInline var value: any MemoryValue
    @usableFromInline var writeDate: Date
    @usableFromInline var expiry: Date?
    /// Whether a hit must record an access in the disk index (the type has a byte limit).
    @usableFromInline var touchesIndex: Bool
}

/// A value kept in the memory tier. Reading it back as the type it was stored as costs a
/// metatype comparison, not a dynamic cast.
@usableFromInline
protocol MemoryValue: Sendable {
    /// Whether the value was stored as exactly a `T`.
    func holds<T>(_ type: T.Type) -> Bool
    /// The value, which ``holds(_:)`` said is a `T`.
    func load<T>(as type: T.Type) -> T
}

/// The one ``MemoryValue`` implementation: a value of a known static type.
struct StoredValue<Value: Sendable>: MemoryValue {
    let value: Value

    func holds<T>(_: T.Type) -> Bool { Value.self == T.self }

    func load<T>(as _: T.Type) -> T {
        precondition(Value.self == T.self, "load(as:) after holds(_:) returned false")
        return unsafeBitCast(value, to: T.self)
    }
}

/// The memory tier behind a non-generic class, so the generic ``CacheManager`` calls fully
/// specialized code here instead of instantiating generic metadata on every hit.
@usableFromInline
final class MemoryTier: Sendable {
    @usableFromInline let cache: MemoryCache<MemoryKey, MemoryItem>

    init(countLimit: Int, costLimit: Int) {
        cache = MemoryCache(configuration: .init(countLimit: countLimit, costLimit: costLimit))
    }

    @inlinable
    func item(_ key: MemoryKey) -> MemoryItem? { cache.value(forKey: key) }

    func set(_ item: MemoryItem, for key: MemoryKey, cost: Int) { cache.setValue(item, forKey: key, cost: cost) }

    func remove(_ key: MemoryKey) { _ = cache.removeValue(forKey: key) }

    func removeAll() { cache.removeAll() }

    func removeAll(where shouldRemove: (MemoryKey) -> Bool) { cache.removeAll(where: shouldRemove) }
}
