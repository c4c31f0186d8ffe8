import Archivist

/// A cache type per location, so every kind of folder is created: the one the worker's
/// `umask-everything` and `store-then-exit` modes store under, and the cache tests reopen.
public enum UmaskCache: String, CacheType, CaseIterable, Sendable {
    /// An entry in the shared caches.
    case shared
    /// An entry in the user's caches.
    case user
    /// An entry in the user's documents.
    case document

    /// Where the type's entries live.
    public var location: CacheLocation {
        switch self {
        case .shared: .sharedCaches
        case .user: .userCaches
        case .document: .userDocuments
        }
    }
}
