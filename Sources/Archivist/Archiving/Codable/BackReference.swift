/// A weak reference to an ``Archivable`` object, for Codable models: the back-reference
/// (a letter's `user`) that would otherwise make a cycle Codable cannot decode.
///
/// It is written as a conditional reference (the object itself is archived where it is
/// owned, such as in the user's `letters`) and assigned once the object is fully decoded.
///
/// ```swift
/// final class Letter: Codable, Archivable {
///     var content: String
///     @BackReference var user: User?
/// }
/// ```
///
/// Encoded by another `Encoder` (JSON, property lists), the reference is written as `nil`:
/// those formats have no object identity.
@propertyWrapper
public struct BackReference<Object: AnyObject & Archivable>: Codable {
    /// Shared storage, so the decoder can fill in the object after the model is built. It
    /// only ever holds an `Object` (the setter and the decoder's type check see to that).
    private let box: BackReferenceBox

    /// The referenced object, or `nil` once it is released.
    public var wrappedValue: Object? {
        get { box.object.map { unsafeDowncast($0, to: Object.self) } }
        nonmutating set { box.object = newValue }
    }

    /// Creates a reference to `wrappedValue`.
    public init(wrappedValue: Object?) { box = BackReferenceBox(wrappedValue) }

    /// Writes a conditional reference to the object (or `nil`).
    ///
    /// - Throws: ``ArchiveError`` with code `limitExceeded(.objectCount)`.
    public func encode(to encoder: any Encoder) throws {
        if let codable = encoder as? CodableArchiveEncoder {
            try CodableArchiveEncoder.writeReference(box.object, archive: codable.archive, target: codable.target)
        } else {
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        }
    }

    /// The object, read without the `Encoder` round trip (see ``CodableReferenceWriting``).
    var referencedObject: AnyObject? { box.object }

    /// Reads the reference; the object is assigned when the whole graph is decoded.
    ///
    /// - Throws: ``ArchiveError`` with code `typeMismatch` for a reference to another type.
    public init(from decoder: any Decoder) throws {
        if let archive = CodableArchiveDecoder.archive(of: decoder) {
            try self.init(archive: archive)
        } else {
            self.init(wrappedValue: nil)
        }
    }

    /// Reads the reference in the value frame `archive` just entered.
    init(archive: ArchiveDecoder) throws {
        try archive.storage.pointee.beginSingleValue()
        try self.init(referenceAt: archive)
    }

    /// Reads the reference at the reader (see ``BackReferenceDecoding``). `referenceHead`
    /// consumes `nil` and a conditional reference to an object never archived, as
    /// `decodeNil()` did before it.
    init(referenceAt archive: ArchiveDecoder) throws {
        let box = BackReferenceBox(nil)
        self.box = box
        try archive.readReference(Object.self, into: box)
    }
}

extension BackReference: CodableReferenceWriting {}

/// A ``BackReference`` type, read by ``ArchiveDecoder/readDecodable(_:)`` without the `Decoder`
/// round trip: `init(from:)` through the `Decodable` witness, the decoder in an existential,
/// `decodeNil()` and a value frame of its own cost more than reading the reference.
protocol BackReferenceDecoding {
    /// Reads the reference at the reader, as `init(from:)` does in a value frame of its own.
    static func readBackReference<T>(from archive: ArchiveDecoder, as type: T.Type) throws -> T
}

extension BackReference: BackReferenceDecoding {
    /// `T` must be `Self`.
    static func readBackReference<T>(from archive: ArchiveDecoder, as type: T.Type) throws -> T {
        unsafeBitCast(try Self(referenceAt: archive), to: T.self)
    }
}
