/// Bounds on what an archive may contain, checked while encoding and decoding.
///
/// Limits turn hostile or runaway input into an ``ArchiveError`` with code
/// ``ArchiveError/Code/limitExceeded(_:)`` instead of a stack overflow or an unbounded
/// allocation. The defaults suit app caches; raise them for bigger graphs. Allocation while
/// decoding is also bounded by the input's size whatever the limits say: a count that claims
/// more elements than there are bytes left is rejected before anything is allocated.
///
/// ```swift
/// var limits = ArchiveLimits()
/// limits.maxDepth = 2_000
/// let tree = try Archive.decode(Tree.self, from: data, options: .init(limits: limits))
/// ```
///
/// - Note: ``maxDepth`` bounds recursion. Measured here, a level of a hand-written model
///   takes about 1.5 KiB of stack to decode in a release build (3 KiB in debug), so the
///   default of 200 stays inside the 512 KiB stack of a secondary thread on Apple platforms.
///   Raise it only for threads with bigger stacks (8 MiB: a few thousand levels).
public struct ArchiveLimits: Sendable, Hashable {
    /// Which limit was exceeded.
    public enum Kind: String, Sendable, Hashable, CustomStringConvertible {
        /// Nesting depth of values.
        case depth
        /// Number of distinct class instances.
        case objectCount
        /// Number of elements in one array, set or dictionary.
        case elementCount
        /// Size in bytes of the encoded archive.
        case totalBytes

        /// The kind's name.
        public var description: String { rawValue }
    }

    /// The deepest nesting of values allowed. Default 200.
    public var maxDepth: Int
    /// The most class instances one archive may hold. Default 10,000,000.
    public var maxObjectCount: Int
    /// The most elements one array, set or dictionary may hold. Default 100,000,000.
    public var maxElementCount: Int
    /// The largest archive, in bytes, that will be written or read. Default 2 GiB.
    public var maxTotalBytes: Int

    /// Creates limits; every parameter has a default suited to app caches.
    public init(
        maxDepth: Int = 200, maxObjectCount: Int = 10_000_000,
        maxElementCount: Int = 100_000_000, maxTotalBytes: Int = 1 << 31
    ) {
        self.maxDepth = maxDepth
        self.maxObjectCount = maxObjectCount
        self.maxElementCount = maxElementCount
        self.maxTotalBytes = maxTotalBytes
    }
}
