import Foundation

/// A memory-tier key: the type's name, its location (for clearing by location) and the
/// parameter, as the caller gave them, so a hit hashes no MD5. Not generic over the cache
/// type, so the memory tier is fully specialized inside the module.
struct MemoryKey: Hashable, Sendable {
    var typeName: String
    var location: CacheLocation
    var parameter: String?

    init<Kind: CacheType>(_ type: Kind, _ parameter: String?) {
        typeName = type.name
        location = type.location
        self.parameter = parameter
    }
}

/// A decoded value in the memory tier, with the dates freshness is judged by.
struct MemoryItem: Sendable {
    var value: any Sendable
    var writeDate: Date
    var expiry: Date?
    /// Whether a hit must record an access in the disk index (the type has a byte limit).
    var touchesIndex: Bool
}
