/// Where a cache type keeps its entries: caches shared by every user, caches of the signed-in
/// user, or the signed-in user's documents.
///
/// Caches live under ``CacheRoot/caches`` (which the system may purge); documents live under
/// ``CacheRoot/documents`` (kept, and backed up on Apple platforms). User-scoped locations
/// get a folder per user, named by the MD5 of the user id, created 0700.
///
/// <!-- snippet: member ThreeCaches -->
/// ```swift
/// var location: CacheLocation {
///     switch self {
///     case .productList: .sharedCaches
///     case .userOrderList: .userCaches
///     case .message: .userDocuments
///     }
/// }
/// ```
public enum CacheLocation: String, Sendable, Hashable, CaseIterable {
    /// Caches every user of the app shares, such as a product list.
    case sharedCaches
    /// Caches of the signed-in user, such as their order list.
    case userCaches
    /// Data of the signed-in user that is not a mere cache, such as read receipts.
    case userDocuments

    /// Whether entries are kept per user.
    ///
    /// - Complexity: O(1).
    public var isUserScoped: Bool { self != .sharedCaches }

    /// Whether entries live under the documents root rather than the caches root.
    @usableFromInline var isDocuments: Bool { self == .userDocuments }

    /// The folder name under the root.
    var folderName: String {
        switch self {
        case .sharedCaches: "shared-caches"
        case .userCaches: "user-caches"
        case .userDocuments: "user-documents"
        }
    }
}
