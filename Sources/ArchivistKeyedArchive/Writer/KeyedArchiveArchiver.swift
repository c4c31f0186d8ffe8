import Archivist
import Foundation

/// A type that writes itself into a keyed archive through an `NSCoder`-shaped API, the
/// pure-Swift counterpart of `encode(with:)`. Archives written this way are read back by
/// Foundation's `NSKeyedUnarchiver` (on Apple platforms and Linux) when a class named
/// ``keyedArchiveClassChain`` exists there and reads the same keys.
///
/// ```swift
/// struct Note: KeyedArchiveEncodable {
///     var title: String
///     var pinned: Bool
///     var keyedArchiveClassChain: [String] { ["MyApp.Note", "NSObject"] }
///     func encode(with archiver: KeyedArchiveArchiver) throws {
///         try archiver.encodeObject(title, forKey: "title")
///         archiver.encode(pinned, forKey: "pinned")
///     }
/// }
/// let data = try KeyedArchiveWriter.archive(note)
/// ```
public protocol KeyedArchiveEncodable {
    /// The class chain written for this value, most derived first (`$classname`, `$classes`):
    /// the name Foundation looks up when reading. Defaults to the type's name and `NSObject`.
    var keyedArchiveClassChain: [String] { get }
    /// Writes the value's fields.
    ///
    /// - Throws: Whatever writing a field throws (an `ArchiveError`), or the value's own error.
    func encode(with archiver: KeyedArchiveArchiver) throws
}

extension KeyedArchiveEncodable {
    /// The name `NSStringFromClass` gives the type, and `NSObject`: `Module.Name` for a
    /// top-level type (what Apple's `NSKeyedUnarchiver` resolves to the app's class of that
    /// name), and on Apple platforms a class's runtime name whatever it is.
    ///
    /// A nested, generic, `private` or local type has no such default on Linux, nor a struct
    /// anywhere (Apple names those classes by a mangled name only its runtime knows), so
    /// writing one under this default throws `.invalidValue`: name the reading class instead.
    ///
    /// ```swift
    /// extension Outer.Note: KeyedArchiveEncodable {
    ///     var keyedArchiveClassChain: [String] { ["MyApp.Note", "NSObject"] }
    /// }
    /// ```
    public var keyedArchiveClassChain: [String] { [KeyedArchiveClassName.defaultName(of: Self.self), "NSObject"] }
}

/// Writes one object of a keyed archive: its fields by key, like `NSCoder`'s keyed methods.
///
/// Scalars are stored inline in the instance (as `NSKeyedArchiver` does); objects are written
/// once and referenced, so a class instance reached twice is one object and a cycle is a
/// reference back. Writing is bounded by `ArchiveLimits` (`maxDepth` levels of objects,
/// `maxObjectCount` objects) and throws `ArchiveError` with the key path.
public final class KeyedArchiveArchiver {
    /// The keys from the root to this object.
    public let codingPath: [String]
    let state: KeyedArchiveWriterState
    /// The fields written so far: node index by key, in the order first written.
    var fields = KeyedArchiveKeyTable<Int>()
    /// Set by the Foundation value types: the object is this plain plist value, not an instance.
    var plainValue: PropertyListDocument.Node?
    /// Set by the Foundation value types: the class chain to write instead of the type's.
    var classChainOverride: [String]?

    init(state: KeyedArchiveWriterState, codingPath: [String]) {
        self.state = state
        self.codingPath = codingPath
    }

    /// Writes `node` under `key`; writing a key again replaces its value, as `NSCoder` does.
    func set(_ key: String, _ node: Int) { fields.set(node, forKey: key) }

    /// Writes a Boolean inline (`encodeBool:forKey:`).
    public func encode(_ value: Bool, forKey key: String) { set(key, state.node(.bool(value))) }
    /// Writes a 64-bit integer inline (`encodeInt64:forKey:`).
    public func encode(_ value: Int64, forKey key: String) { set(key, state.node(.integer(value))) }
    /// Writes an `Int` inline (`encodeInteger:forKey:`).
    public func encode(_ value: Int, forKey key: String) { encode(Int64(value), forKey: key) }
    /// Writes a 32-bit integer inline (`encodeInt32:forKey:`).
    public func encode(_ value: Int32, forKey key: String) { encode(Int64(value), forKey: key) }
    /// Writes a `Double` inline (`encodeDouble:forKey:`).
    public func encode(_ value: Double, forKey key: String) { set(key, state.node(.real(value))) }
    /// Writes a `Float` inline (`encodeFloat:forKey:`).
    public func encode(_ value: Float, forKey key: String) { encode(Double(value), forKey: key) }
    /// Writes bytes inline (`encodeBytes:length:forKey:`).
    public func encodeBytes(_ value: Data, forKey key: String) { set(key, state.node(.data([UInt8](value)))) }

    /// Writes `value` as an object and a reference to it under `key` (`encodeObject:forKey:`);
    /// `nil` writes the `$null` reference.
    ///
    /// - Throws: `.limitExceeded` past `maxDepth` or `maxObjectCount`; whatever `value`'s
    ///   `encode(with:)` throws.
    public func encodeObject(_ value: (some KeyedArchiveEncodable)?, forKey key: String) throws {
        guard let value else {
            set(key, state.uid(0))
            return
        }
        set(key, state.uid(try KeyedArchiveWriter.object(for: value, state: state, codingPath: codingPath + [key])))
    }
}

/// Writes keyed archives in pure Swift, for `NSKeyedUnarchiver` to read (on Linux or an Apple
/// platform): from ``KeyedArchiveEncodable`` types or from `Encodable` ones.
public enum KeyedArchiveWriter {
    /// Archives `root` under `$top.root` as a binary property list.
    ///
    /// ```swift
    /// let data = try KeyedArchiveWriter.archive(note)
    /// let table = try KeyedArchive(data: data)   // NSKeyedUnarchiver reads it into a class MyApp.Note
    /// ```
    ///
    /// - Throws: `ArchiveError`: `.limitExceeded(.depth)` / `.limitExceeded(.objectCount)`,
    ///   `.limitExceeded(.totalBytes)` for an archive larger than `maxTotalBytes`,
    ///   `.invalidValue` for a type written under a default class name Foundation cannot look
    ///   up (see ``KeyedArchiveEncodable/keyedArchiveClassChain``), or what an
    ///   `encode(with:)` throws.
    /// - Complexity: O(*n*) in the number of objects and fields.
    public static func archive(_ root: some KeyedArchiveEncodable, limits: ArchiveLimits = .init()) throws -> Data {
        let state = KeyedArchiveWriterState(limits: limits)
        let object = try self.object(for: root, state: state, codingPath: ["root"])
        return try state.finish(root: object)
    }

    /// Writes one object (once per class instance) and returns its index in `$objects`.
    static func object<T: KeyedArchiveEncodable>(
        for value: T,
        state: KeyedArchiveWriterState,
        codingPath: [String]
    ) throws -> Int {
        let instance = T.self is AnyClass ? value as AnyObject : nil
        if let instance, let written = state.writtenObject(for: instance) { return written }
        return try state.nested(codingPath) {
            let object = try state.reserveObject()
            if let instance { state.record(instance, as: object) }
            let archiver = KeyedArchiveArchiver(state: state, codingPath: codingPath)
            try value.encode(with: archiver)
            if let plain = archiver.plainValue {
                state.setObject(object, node: state.node(plain))
            } else {
                let chain = archiver.classChainOverride ?? value.keyedArchiveClassChain
                guard !chain.isEmpty, !chain[0].isEmpty else {
                    throw ArchiveError(
                        .invalidValue,
                        "an empty class name",
                        codingPath: codingPath,
                        typeName: "\(T.self)"
                    )
                }
                if archiver.classChainOverride == nil {
                    try state.checkClassName(chain, of: T.self, codingPath: codingPath)
                }
                state.setObject(
                    object,
                    node: try state.instanceNode(
                        classChain: chain,
                        fields: archiver.fields.entries.map { ($0.key, $0.value) }
                    )
                )
            }
            return object
        }
    }
}
