/// How far a write is pushed towards stable storage before it counts as done.
///
/// Every write is atomic whatever the durability: a reader sees the old value or the new one.
/// Durability only decides what survives a power loss or kernel crash, at a price in latency.
///
/// On Apple platforms `fsync` hands the data to the drive, whose own cache may still lose it
/// or write it out of order. ``file`` and ``fileAndFolder`` therefore sync with
/// `F_BARRIERFSYNC`, as SQLite and Core Data do: the drive writes the file before anything
/// issued after it (the rename that publishes it), so a power loss leaves the old value or the
/// new one, at a cost close to `fsync`'s. ``fullSync`` asks for `F_FULLFSYNC`, which waits until
/// the drive has written its cache to permanent storage — milliseconds to tens of
/// milliseconds on Apple SSDs — for the few writes that must not be lost once made. On Linux
/// every level above ``none`` uses `fsync`, which already reaches permanent storage.
///
/// ```swift
/// struct Policy { var durability: Durability = .file }
/// ```
public enum Durability: Sendable, Hashable, CaseIterable {
    /// No `fsync`: the operating system writes the file when it likes. Right for caches that
    /// can be fetched again; a power loss may lose recent writes (never half of one).
    case none
    /// The file is synced (`fsync`; `F_BARRIERFSYNC` on Apple platforms) before it is renamed
    /// into place, so its contents reach the disk before its new name does.
    case file
    /// As ``file``, and the folder is synced after the rename, so the new name itself is on
    /// its way to the disk in order. Right for user documents.
    case fileAndFolder
    /// As ``fileAndFolder``, with each sync waiting for the drive to empty its cache
    /// (`F_FULLFSYNC` on Apple platforms, `fsync` elsewhere): once the write returns, it
    /// survives a power loss. Costs milliseconds per write on Apple devices.
    case fullSync

    /// Whether the file is synced before its rename.
    var syncsFile: Bool { self != .none }
    /// Whether the folder is synced after the rename.
    var syncsFolder: Bool { self == .fileAndFolder || self == .fullSync }
}
