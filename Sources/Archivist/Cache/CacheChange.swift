/// A change to a cache type's entries, as ``CacheManager/changes(of:)`` reports it.
///
/// ```swift
/// for await change in cache.changes(of: .productList) {
///     if change.fromOtherProcess { reloadFromCache() }
/// }
/// ```
public struct CacheChange<Kind: CacheType>: Sendable {
    /// What changed.
    public enum Target: Sendable, Hashable {
        /// The entry for this parameter (`nil`: the type's entry without a parameter) was
        /// stored or removed by the manager reporting it.
        case entry(parameter: String?)
        /// One entry was stored, removed or evicted elsewhere — another manager or process, or
        /// an eviction: the disk only knows parameters by their hashes.
        case someEntry
        /// Every entry of the type may have changed (a clear, or a repair after a crash).
        case allEntries
    }

    /// The cache type whose entries changed.
    public let type: Kind
    /// What changed.
    public let target: Target
    /// Whether another process made the change.
    public let fromOtherProcess: Bool
}
