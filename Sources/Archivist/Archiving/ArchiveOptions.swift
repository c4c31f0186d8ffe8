/// Settings for one encode or decode: limits, the types a polymorphic reference may decode
/// to, type renames and a free-form `userInfo`.
///
/// ```swift
/// let options = ArchiveOptions(allowedTypes: [Dog.self, Cat.self])
/// let pets = try Archive.decode([Animal].self, from: data, options: options)
/// ```
public struct ArchiveOptions: Sendable {
    /// Bounds on depth, object count, element count and bytes.
    public var limits: ArchiveLimits
    /// Types that a value may decode to besides the statically known field types.
    ///
    /// The NSSecureCoding lesson: a class reference typed `Animal` decodes to `Dog` only if
    /// `Dog` is listed here (and is a subclass of `Animal`). Nothing else is instantiated.
    public var allowedTypes: [any Archivable.Type]
    /// Maps a type name found in old archives to the current ``Archivable/archiveTypeName``.
    public var renamedTypes: [String: String]
    /// Values that custom `init(from:)` implementations can read through
    /// ``ArchiveDecoder/userInfo`` (or ``ArchiveEncoder/userInfo``).
    public var userInfo: [String: any Sendable]
    /// Whether decoding recomputes the archive's CRC32C. Only the storage layer turns this
    /// off, for payloads whose bytes its own entry checksum has just verified; every
    /// structural check still runs.
    package var verifiesChecksum = true

    /// Creates options; everything defaults to the safe choice.
    public init(
        limits: ArchiveLimits = ArchiveLimits(),
        allowedTypes: [any Archivable.Type] = [],
        renamedTypes: [String: String] = [:],
        userInfo: [String: any Sendable] = [:]
    ) {
        self.limits = limits
        self.allowedTypes = allowedTypes
        self.renamedTypes = renamedTypes
        self.userInfo = userInfo
    }
}
