import Archivist
import Foundation

/// `Archivable` by declaration for `NSSecureCoding` classes: with this module imported,
///
/// ```swift
/// final class Order: NSObject, NSSecureCoding, Archivable { … }   // its usual NSCoding methods
/// try cache.store(order, for: .orders)
/// ```
///
/// stores `Order` wherever an `Archivable` goes (`Archive.encode`, `CacheManager`,
/// `RecordStore`, inside native and Codable models). The object is written as one field,
/// `keyedArchive`, holding its `NSKeyedArchiver` archive (``KeyedArchiverBridge/archive(_:)``),
/// and read back through the bridge: the validator checks every byte first, and only `Self` and
/// the Foundation value classes may be instantiated (adopt ``KeyedArchiveAllowedClasses`` for
/// more). The core allowlist (`ArchiveOptions.allowedTypes`) applies to the class as a whole.
///
/// Identity: an instance referenced twice from native or Codable models is written once and
/// decoded as one instance, like any `Archivable` class. Objects *inside* its keyed archive are
/// shared among themselves only; they are not the same instances as objects elsewhere in the
/// native graph, and cycles through them follow the bridge's rules (refused on Linux).
extension Archivable where Self: NSObject & NSSecureCoding {
    /// Writes the object's `NSKeyedArchiver` archive under `keyedArchive`.
    ///
    /// - Throws: `ArchiveError` from ``KeyedArchiverBridge/archive(_:)``.
    public func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(try KeyedArchiverBridge.archive(self), forKey: "keyedArchive")
    }

    /// Reads the object back through the validating bridge.
    ///
    /// - Throws: `ArchiveError`: `.keyNotFound` without `keyedArchive`, and every code of
    ///   ``KeyedArchiverBridge/unarchive(_:from:allowedClasses:limits:)``, with `keyedArchive`
    ///   prefixed to the coding path.
    public init(from archive: ArchiveDecoder) throws {
        let data = try archive.decode(Data.self, forKey: "keyedArchive")
        do {
            self = try KeyedArchiverBridge.unarchiveDeclared(Self.self, from: data)
        } catch var error as ArchiveError {
            error.codingPath = ["keyedArchive"] + error.codingPath
            throw error
        }
    }
}

extension KeyedArchiverBridge {
    /// Reads a class made `Archivable` by declaration from its keyed archive: only `T`, the
    /// Foundation value classes and its ``KeyedArchiveAllowedClasses`` may be instantiated.
    static func unarchiveDeclared<T: NSObject & NSSecureCoding>(_ type: T.Type, from data: Data) throws -> T {
        let allowed = (T.self as? any KeyedArchiveAllowedClasses.Type)?.keyedArchiveAllowedClasses ?? []
        return try unarchive(T.self, from: data, allowedClasses: allowed)
    }
}

/// Names the further classes an `NSSecureCoding` `Archivable` class's keyed archive may
/// contain (its own class and the Foundation value classes are always allowed).
///
/// ```swift
/// extension Order: KeyedArchiveAllowedClasses {
///     static var keyedArchiveAllowedClasses: [AnyClass] { [LineItem.self] }
/// }
/// ```
public protocol KeyedArchiveAllowedClasses {
    /// The classes, each supporting secure coding.
    static var keyedArchiveAllowedClasses: [AnyClass] { get }
}
