import Archivist

/// What ``KeyedArchiverBridge/validate(_:allowedClassNames:limits:)`` learned about a keyed
/// archive that passed every check.
///
/// ```swift
/// let summary = try KeyedArchiverBridge.validate(data, allowedClassNames: ["NSArray"])
/// print(summary.classNames, summary.depth)
/// ```
public struct KeyedArchiveSummary: Sendable, Hashable {
    /// The property list encoding the archive arrived in.
    public enum Format: Sendable, Hashable {
        /// `bplist00`, what `NSKeyedArchiver` writes by default.
        case binary
        /// The XML property list format.
        case xml
    }

    /// The encoding of the input.
    public var format: Format
    /// The number of entries in `$objects`, including the `$null` placeholder.
    public var objectCount: Int
    /// The number of class instances (dictionaries with a `$class`) in `$objects`.
    public var instanceCount: Int
    /// The class names the archive would instantiate.
    public var classNames: Set<String>
    /// The longest chain of object references from `$top`; decoding recurses this deep.
    public var depth: Int
    /// The keys of `$top`, sorted (`root` for archives made by `archivedData(withRootObject:)`).
    public var topLevelKeys: [String]

    /// Creates a summary.
    public init(
        format: Format,
        objectCount: Int,
        instanceCount: Int,
        classNames: Set<String>,
        depth: Int,
        topLevelKeys: [String]
    ) {
        self.format = format
        self.objectCount = objectCount
        self.instanceCount = instanceCount
        self.classNames = classNames
        self.depth = depth
        self.topLevelKeys = topLevelKeys
    }
}
