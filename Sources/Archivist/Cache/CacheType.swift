import Foundation

/// A kind of cached data an app declares, usually as an enum: a stable name, a location, and
/// optionally a policy (maximum age, byte limit, durability).
///
/// The name is what identifies entries on disk (hashed into a folder name), so it must not
/// change between releases; a `String`-backed enum gets it from its raw value.
///
/// ```swift
/// enum ShopCache: String, CacheType {
///     case productList, userOrderList, hots, message, apiStrategy
///     var location: CacheLocation {
///         switch self {
///         case .productList, .hots, .apiStrategy: .sharedCaches
///         case .userOrderList: .userCaches
///         case .message: .userDocuments
///         }
///     }
///     var policy: CachePolicy {
///         self == .hots ? CachePolicy(maxAge: 3_600) : CachePolicy()
///     }
/// }
/// ```
public protocol CacheType: Hashable, Sendable {
    /// The stable name of the type; it must not be empty (an empty name makes every call
    /// for the type throw ``CacheError/Code/invalidTypeName``).
    var name: String { get }
    /// Where the type's entries live.
    var location: CacheLocation { get }
    /// Maximum age, byte limit and durability of the type's entries.
    var policy: CachePolicy { get }
}

extension CacheType where Self: RawRepresentable, RawValue == String {
    /// The raw value.
    public var name: String { rawValue }
}

extension CacheType {
    /// No maximum age or byte limit; durability ``Durability/none`` for caches and
    /// ``Durability/fileAndFolder`` for ``CacheLocation/userDocuments``.
    public var policy: CachePolicy {
        CachePolicy(durability: location == .userDocuments ? .fileAndFolder : .none)
    }
}

/// How long a cache type's entries stay fresh, how many bytes the type may hold on disk, and
/// how durable its writes are.
///
/// <!-- snippet: member ThreeCaches -->
/// ```swift
/// var policy: CachePolicy { CachePolicy(maxAge: 86_400, byteLimit: 5_000_000, durability: .file) }
/// ```
public struct CachePolicy: Sendable, Hashable {
    /// Seconds after a write at which an entry expires, unless the write gave its own expiry.
    /// An expired entry reads as a miss but stays on disk as an offline fallback.
    public var maxAge: TimeInterval?
    /// The most bytes (headers included) the type may hold on disk in one scope; writes beyond
    /// it evict the least recently accessed entries of the type.
    public var byteLimit: Int?
    /// How far writes are synced before they count as done.
    public var durability: Durability

    /// Creates a policy.
    public init(maxAge: TimeInterval? = nil, byteLimit: Int? = nil, durability: Durability = .none) {
        self.maxAge = maxAge
        self.byteLimit = byteLimit
        self.durability = durability
    }
}

/// When a stored entry stops being fresh.
///
/// ```swift
/// try cache.store(products, for: .hots, expiry: .at(tomorrowMidnight))
/// ```
public enum CacheExpiry: Sendable, Hashable {
    /// As the type's ``CachePolicy/maxAge`` says (never, when it has none).
    case policy
    /// Never, whatever the policy.
    case never
    /// This many seconds after the write.
    case after(TimeInterval)
    /// At this date.
    case at(Date)

    /// The expiry date for an entry written at `date` under `policy`.
    func date(writtenAt date: Date, policy: CachePolicy) -> Date? {
        switch self {
        case .policy: policy.maxAge.map { date.addingTimeInterval($0) }
        case .never: nil
        case .after(let seconds): date.addingTimeInterval(seconds)
        case .at(let expiry): expiry
        }
    }
}
