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
/// - Note: ``maxDepth`` bounds recursion, so that the default stays inside the 512 KiB stack
///   of a secondary thread on Apple platforms for models written by hand and through
///   `Codable`, in release, debug and AddressSanitizer builds alike. It is counted in stack
///   weight: a level of a native archive counts `levelWeight` (2), a level encoded or decoded
///   through `Codable` `codableLevelWeight` (4), because its containers take about twice the
///   stack; a level of a keyed archive or property list counts 1. With the default of 200, a
///   chain of 97 hand-written or 48 `Codable` classes (five fields each) is the deepest that is
///   accepted, and it round-trips on a 512 KiB thread (`ArchiveStackDepthTests`). Measured stack
///   per level (Linux x86_64, Swift 6.3.1), encode / decode:
///
///   | build | hand-written | `Codable` |
///   | --- | --- | --- |
///   | release | 0.7 / 1.3 KiB | 1.5 / 2.6 KiB |
///   | debug | 1.7 / 2.9 KiB | 2.9 / 4.9 KiB |
///   | debug + ASan | 2.8 / 3.9 KiB | 5.1 / 8.2 KiB |
///
///   So the deepest default chain needs at most about 420 KiB (Codable decode under ASan).
///   Other recursive shapes charge more per level and fit with more room: a tree through an
///   array of children (49 hand-written or 32 `Codable` levels) or an indirect `Codable` enum
///   list (49 levels) at the default decodes on a 256 KiB thread in a debug build.
///   Raise ``maxDepth`` only for threads with bigger stacks (8 MiB: about 20 times more).
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

    /// The deepest nesting of values allowed, in stack weight: a native archive's level counts
    /// 2, or 4 through `Codable`; a keyed archive's or property list's level counts 1 (see the
    /// note on the type). Default 200: 100 hand-written or 50 `Codable` levels.
    public var maxDepth: Int
    /// The most class instances one archive may hold. Default 10,000,000.
    public var maxObjectCount: Int
    /// The most elements one array, set or dictionary may hold. Default 100,000,000.
    public var maxElementCount: Int
    /// The largest archive, in bytes, that will be written or read. Default 2 GiB − 1
    /// (`Int32.max`), the same on every platform: `Int` is 32 bits on Apple Watch (arm64_32).
    public var maxTotalBytes: Int

    /// What one level of a native archive charges to ``maxDepth``.
    static let levelWeight = 2
    /// What one level encoded or decoded through `Codable` charges to ``maxDepth``: about
    /// twice the stack of a hand-written level (see the note on the type).
    static let codableLevelWeight = 4

    /// Creates limits; every parameter has a default suited to app caches.
    public init(
        maxDepth: Int = 200,
        maxObjectCount: Int = 10_000_000,
        maxElementCount: Int = 100_000_000,
        maxTotalBytes: Int = Int(Int32.max)
    ) {
        self.maxDepth = maxDepth
        self.maxObjectCount = maxObjectCount
        self.maxElementCount = maxElementCount
        self.maxTotalBytes = maxTotalBytes
    }
}
