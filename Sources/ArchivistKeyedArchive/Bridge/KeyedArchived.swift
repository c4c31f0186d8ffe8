import Archivist
import Foundation

/// Holds an `NSSecureCoding` class made `Archivable` by declaration inside a `Codable` model.
///
/// Such a class is not `Codable` (declaring it would give it two default `encode(to:)`s, the
/// `Codable` one and the keyed-archive one), so a synthesized `Codable` model cannot hold it
/// directly. Wrap the property and the model stays synthesized:
///
/// <!-- snippet: skip the class's NSCoding methods are left out -->
/// ```swift
/// final class Order: NSObject, NSSecureCoding, Archivable { … }   // its usual NSCoding methods
///
/// struct Shipment: Codable, Archivable {
///     @KeyedArchived var order: Order
///     @KeyedArchived var replacement: Order
///     var note: String
/// }
/// let copy = try Archive.decode(Shipment.self, from: try Archive.encode(shipment))
/// ```
///
/// Inside an Archivist archive (`Archive`, `CacheManager`, `RecordStore`) the wrapper is written
/// through its `Archivable` conformance: the object as an `Archivable` class, once per archive,
/// so an order held by two fields, two models or a hand-written model of the same archive
/// decodes as one instance, as every `Archivable` class does. The object itself is its
/// `NSKeyedArchiver` archive, read back through ``KeyedArchiverBridge`` (validator first, only
/// `Object`, the Foundation value classes and ``KeyedArchiveAllowedClasses`` allowed).
///
/// Any other coder (`JSONEncoder`, ``KeyedArchiveWriter/encode(_:limits:)``) gets that keyed
/// archive as `Data` and reads it back through the same bridge; identity is then the coder's
/// business (those coders copy values, so each field decodes as its own instance).
///
/// `Sendable` when `Object` is.
@propertyWrapper
public struct KeyedArchived<Object: NSObject & NSSecureCoding & Archivable> {
    /// The object.
    public var wrappedValue: Object

    /// Wraps `wrappedValue`.
    ///
    /// ```swift
    /// let held = KeyedArchived(wrappedValue: order)
    /// ```
    public init(wrappedValue: Object) { self.wrappedValue = wrappedValue }
}

extension KeyedArchived: Archivable {
    /// `KeyedArchived`, whatever `Object` is: the object carries its own type name.
    public static var archiveTypeName: String { "KeyedArchived" }

    /// Writes the object as the single value: once per archive, by identity.
    ///
    /// - Throws: `ArchiveError` from the object's keyed archive (``KeyedArchiverBridge/archive(_:)``)
    ///   or the archive's limits.
    public func encode(to archive: ArchiveEncoder) throws { try archive.encodeSingleValue(wrappedValue) }

    /// Reads the object back: the instance already decoded when the archive shares it.
    ///
    /// - Throws: `ArchiveError` from the archive, or from ``KeyedArchiverBridge`` reading the
    ///   object's keyed archive (`.disallowedType` for a class `Object` does not allow, …).
    public init(from archive: ArchiveDecoder) throws { wrappedValue = try archive.decodeSingleValue(Object.self) }
}

extension KeyedArchived: Codable {
    /// Writes the object's `NSKeyedArchiver` archive as `Data` (Archivist's own coder uses the
    /// `Archivable` conformance instead).
    ///
    /// - Throws: `ArchiveError` from ``KeyedArchiverBridge/archive(_:)``, or the encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(try KeyedArchiverBridge.archive(wrappedValue))
    }

    /// Reads the object from its keyed archive, through the validating bridge.
    ///
    /// - Throws: `ArchiveError` from ``KeyedArchiverBridge/unarchive(_:from:allowedClasses:limits:)``,
    ///   or the decoder's error when the value is not `Data`.
    public init(from decoder: any Decoder) throws {
        wrappedValue = try KeyedArchiverBridge.unarchiveDeclared(
            Object.self,
            from: try decoder.singleValueContainer().decode(Data.self)
        )
    }
}

extension KeyedArchived: Equatable, Hashable {}

extension KeyedArchived: Sendable where Object: Sendable {}
