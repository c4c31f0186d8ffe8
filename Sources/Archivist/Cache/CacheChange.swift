/// A change to a cache type's entries, as ``CacheManager/changes(of:)`` reports it.
///
/// What a change names depends on where it was made. A store or removal through the manager
/// that reports it names its entry (``Target/entry(parameter:)``). Anything made elsewhere —
/// by another `CacheManager` on the same root, by another process, or by an eviction — is
/// ``Target/someEntry``: the disk knows an entry only by its hashed name, so which parameter
/// changed cannot be said; reload what you show of the type. A clear, or a repair after a
/// crash, is ``Target/allEntries``.
///
/// ```swift
/// for await change in cache.changes(of: .productList) {
///     if change.isFromAnotherProcess { reloadFromCache() }
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
    /// Whether another process made the change (the name ``RecordStore/Change`` and the
    /// other stores' changes use too).
    public let isFromAnotherProcess: Bool

    init(type: Kind, target: Target, fromOtherProcess: Bool) {
        self.type = type
        self.target = target
        self.isFromAnotherProcess = fromOtherProcess
    }
}

extension CacheChange: CustomStringConvertible {
    /// A short description: the type, what changed, and where.
    public var description: String {
        let what: String
        switch target {
        case .entry(let parameter): what = parameter.map { "entry \"\($0)\"" } ?? "entry"
        case .someEntry: what = "some entry"
        case .allEntries: what = "all entries"
        }
        return "CacheChange(\(type.name): \(what)\(isFromAnotherProcess ? ", from another process" : ""))"
    }
}
