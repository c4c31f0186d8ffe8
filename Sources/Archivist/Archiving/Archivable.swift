/// A type whose values can be stored in an Archivist archive.
///
/// Conform in one of two ways; both produce the same native format
/// (see `docs/ArchiveFormat.md`), with shared references and cycles preserved.
///
/// **Codable.** Declare conformance and the `Codable` implementation does the work through
/// Archivist's own binary encoder:
///
/// ```swift
/// struct Product: Codable, Archivable {
///     var id: Int
///     var name: String
/// }
/// ```
///
/// **By hand, NSCoding style.** Write a keyed pair, like `encode(with:)` and `init?(coder:)`:
///
/// ```swift
/// final class Letter: Archivable {
///     var content: String
///     weak var user: User?
///
///     func encode(to archive: ArchiveEncoder) throws {
///         try archive.encode(content, forKey: "content")
///         try archive.encodeConditional(user, forKey: "user")
///     }
///
///     init(from archive: ArchiveDecoder) throws {
///         content = try archive.decode(String.self, forKey: "content")
///         try archive.decodeReference(User.self, forKey: "user") { [unowned self] in self.user = $0 }
///     }
/// }
/// ```
///
/// Class instances keep their identity: one referenced twice is written once and decoded as
/// one instance. A reference that closes a cycle (a back-reference) is decoded with
/// ``ArchiveDecoder/decodeReference(_:forKey:assign:)`` (or `ArchiveReference` in Codable
/// models), which hands the object over once it is fully initialized.
///
/// Non-final classes must implement the requirements themselves (`required init`) and may
/// override ``archiveTypeName`` as a `class var` so subclasses are told apart.
public protocol Archivable: SendableMetatype {
    /// The stable name written to the archive for this type.
    ///
    /// Defaults to the unqualified type name (`String(describing: Self.self)`). Override it to
    /// keep archives readable after renaming the Swift type, or list the old name in
    /// ``formerArchiveTypeNames``. A generic type's default name embeds its parameters' names
    /// (`Box<Task>`), so renaming `Task` would change it too: give generic types a fixed name.
    static var archiveTypeName: String { get }

    /// The schema version written with this type; read it back while decoding with
    /// ``ArchiveDecoder/version`` to migrate old archives. Defaults to 0.
    static var archiveVersion: Int { get }

    /// Names this type was archived under before; archives that use them still decode.
    static var formerArchiveTypeNames: [String] { get }

    /// Writes this value's fields (or a single value) into `archive`.
    ///
    /// - Throws: ``ArchiveError`` if a value cannot be encoded or a limit is exceeded.
    func encode(to archive: ArchiveEncoder) throws

    /// Reads a value back from `archive`.
    ///
    /// - Throws: ``ArchiveError`` when a required key is missing, a value has the wrong type,
    ///   or the input is corrupt.
    init(from archive: ArchiveDecoder) throws
}

extension Archivable {
    /// The unqualified Swift type name.
    public static var archiveTypeName: String { DefaultTypeNames.name(of: Self.self) }

    /// Version 0.
    public static var archiveVersion: Int { 0 }

    /// No former names.
    public static var formerArchiveTypeNames: [String] { [] }
}
