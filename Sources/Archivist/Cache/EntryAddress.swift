/// One cache entry, resolved once from a cache type and parameter where a public call begins,
/// and passed down the store, read, remove and eviction paths: the store that holds it, its
/// key on disk (folder, hashed name, and the type name and parameter its header records),
/// its memory-tier key (which carries the disk key, so coherence and eviction find memory
/// values without hashing a parameter again) and its type's statistics tally.
struct EntryAddress {
    /// The disk store of the type's location.
    let store: DiskStore
    /// The entry's key in that store.
    let entry: EntryKey
    /// The type's location.
    let location: CacheLocation
    /// The type's statistics tally.
    let tally: TypeTally

    /// Where the entry's file is.
    var disk: DiskKey { entry.disk }

    /// The entry's memory-tier key.
    var memoryKey: MemoryKey {
        MemoryKey(name: entry.typeName, location: location, parameter: entry.parameter, disk: entry.disk)
    }
}
