/// How far a write is pushed towards stable storage before it counts as done.
///
/// Every write is atomic whatever the durability: a reader sees the old value or the new one.
/// Durability only decides what survives a power loss or kernel crash, at a price in latency.
///
/// ```swift
/// struct Policy { var durability: Durability = .file }
/// ```
public enum Durability: Sendable, Hashable, CaseIterable {
    /// No `fsync`: the operating system writes the file when it likes. Right for caches that
    /// can be fetched again; a power loss may lose recent writes (never half of one).
    case none
    /// The file is synced (`fsync`, `F_FULLFSYNC` on Apple platforms) before it is renamed into
    /// place, so the new contents are on disk before they become visible.
    case file
    /// As ``file``, and the folder is synced after the rename, so the new name itself survives
    /// a power loss. Right for user documents.
    case fileAndFolder
}
