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
        _ type: T.Type, from data: Data, allowedClassNames: Set<String> = [], limits: ArchiveLimits = .init()
    ) throws -> T {
        let names = foundationValueClassNames.union(allowedClassNames).subtracting(KeyedArchiveValidator.refusedClassNames.keys)
        _ = try KeyedArchiveValidator(allowedClassNames: names, limits: limits, requiredTopKey: NSKeyedArchiveRootObjectKey)
            .validate(data)
        return try KeyedArchive(data: data, limits: limits).decode(T.self)
    }
}
