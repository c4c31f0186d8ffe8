import Archivist
import Foundation

extension KeyedArchiverBridge {
    /// Validates `data` like ``unarchive(_:from:allowedClasses:limits:)``, then decodes its root
    /// into a Swift `Decodable` type with the pure-Swift reader (``KeyedArchive``): no
    /// `NSKeyedUnarchiver`, no `init(coder:)`, on every platform.
    ///
    /// Use it when the target is a Swift type (an archive written on iOS read into a struct);
    /// ``unarchive(_:from:allowedClasses:limits:)`` stays the way to `NSSecureCoding` classes.
    /// The validator's guarantees hold for both: only the allowed class names, no cycles, depth
    /// and unfolded size within `limits`.
    ///
    /// ```swift
    /// let note = try KeyedArchiverBridge.decode(Note.self, from: data, allowedClassNames: ["Note"])
    /// ```
    ///
    /// - Parameters:
    ///   - type: The Swift type to decode; its coding keys name the archive's fields.
    ///   - data: A keyed archive, binary or XML property list, with a `root`.
    ///   - allowedClassNames: Class names the archive may hold besides ``foundationValueClassNames``.
    ///   - limits: Bounds for validation and decoding.
    /// - Throws: `ArchiveError`: the validator's codes (see ``validate(_:allowedClassNames:limits:)``),
    ///   `.keyNotFound` without a `root`, and the decoding errors of ``KeyedArchive/decode(_:key:)``.
    public static func decode<T: Decodable>(
        _ type: T.Type,
        from data: Data,
        allowedClassNames: Set<String> = [],
        limits: ArchiveLimits = .init()
    ) throws -> T {
        try validatedArchive(data, allowedClassNames: allowedClassNames, limits: limits).decode(
            T.self,
            key: NSKeyedArchiveRootObjectKey,
            expansionChecked: true
        )
    }

    /// Validates `data` like ``unarchive(_:from:allowedClasses:limits:)``, then decodes its root
    /// into a Swift type that reads itself through the `NSCoder`-shaped
    /// ``KeyedArchiveUnarchiver`` (``KeyedArchiveDecodable``, the pure-Swift counterpart of
    /// `init?(coder:)`): no `NSKeyedUnarchiver`, on every platform. The counterpart of
    /// ``decode(_:from:allowedClassNames:limits:)`` for hand-written decoding.
    ///
    /// ```swift
    /// let letter = try KeyedArchiverBridge.unarchive(Letter.self, from: data, allowedClassNames: ["MyApp.Letter"])
    /// ```
    ///
    /// - Parameters:
    ///   - type: The Swift type to decode.
    ///   - data: A keyed archive, binary or XML property list, with a `root`.
    ///   - allowedClassNames: Class names the archive may hold besides ``foundationValueClassNames``.
    ///   - limits: Bounds for validation and decoding.
    /// - Throws: `ArchiveError`: the validator's codes (see ``validate(_:allowedClassNames:limits:)``),
    ///   `.keyNotFound` without a `root`, `.valueNotFound` when it is `$null`, and whatever
    ///   decoding `T` throws (``KeyedArchive/unarchive(_:key:)``).
    public static func unarchive<T: KeyedArchiveDecodable>(
        _ type: T.Type,
        from data: Data,
        allowedClassNames: Set<String> = [],
        limits: ArchiveLimits = .init()
    ) throws -> T {
        try validatedArchive(data, allowedClassNames: allowedClassNames, limits: limits).unarchive(
            T.self,
            key: NSKeyedArchiveRootObjectKey,
            expansionChecked: true
        )
    }

    /// The validator's checks with a `root` required, then the reader's table of the same
    /// parsed property list.
    private static func validatedArchive(
        _ data: Data,
        allowedClassNames: Set<String>,
        limits: ArchiveLimits
    ) throws -> KeyedArchive {
        let names = foundationValueClassNames.union(allowedClassNames).subtracting(
            KeyedArchiveValidator.refusedClassNames.keys
        )
        let validated = try KeyedArchiveValidator(
            allowedClassNames: names,
            limits: limits,
            requiredTopKey: NSKeyedArchiveRootObjectKey
        )
        .validate(data)
        return try KeyedArchive(validatedDocument: validated.document, limits: limits)
    }
}
