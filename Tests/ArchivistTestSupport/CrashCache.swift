import Archivist

/// The crash writer's cache types (`Tests/CrashWriter`): three types over both stores and all
/// three durabilities. The crash tests reopen the writer's caches with the same types.
public enum CrashCache: String, CacheType, CaseIterable, Sendable {
    /// Small entries in the shared caches, not synced.
    case small
    /// Entries up to 300 KB in the user's caches, each file synced.
    case large
    /// Entries in the user's documents, file and folder synced.
    case document

    /// Where the type's entries live.
    public var location: CacheLocation {
        switch self {
        case .small: .sharedCaches
        case .large: .userCaches
        case .document: .userDocuments
        }
    }

    /// The type's durability (the rest is the default policy).
    public var policy: CachePolicy {
        switch self {
        case .small: CachePolicy(durability: .none)
        case .large: CachePolicy(durability: .file)
        case .document: CachePolicy(durability: .fileAndFolder)
        }
    }

    /// Every parameter the writer stores under this type (`nil`: the single-value entry).
    public var parameters: [String?] {
        switch self {
        case .small: [nil, "p0", "p1", "p2", "p3", "p4"]
        case .large: ["p0", "p1", "p2"]
        case .document: [nil, "a", "b"]
        }
    }

    /// The most bytes the writer stores in one entry of this type.
    public var maxLength: Int {
        switch self {
        case .small: 2_000
        case .large: 300_000
        case .document: 20_000
        }
    }
}
