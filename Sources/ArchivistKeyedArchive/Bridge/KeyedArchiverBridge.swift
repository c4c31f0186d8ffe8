import Archivist
import Foundation

/// Stores `NSSecureCoding` objects through Foundation's `NSKeyedArchiver` and reads them back
/// through `NSKeyedUnarchiver`, after a validator has checked every byte, so that hostile or
/// damaged input throws an `ArchiveError` instead of crashing the process.
///
/// On Linux, swift-corelibs-foundation's unarchiver overflows the stack on reference cycles and
/// deep chains, calls `fatalError` for a class outside the allowed list, and reads out of
/// bounds when an element of an `NSDictionary` fails to decode. The bridge therefore:
/// - parses the property list with its own bounded readers and checks the archive's layout,
///   every reference, every class name against an allowlist, the fields of the Foundation
///   value classes, and the reference graph (acyclic, depth within `ArchiveLimits/maxDepth`);
/// - hands Foundation a canonical re-encoding of the validated property list, never the input;
/// - on corelibs, decodes with `requiresSecureCoding` off: the allowlist has already been
///   enforced for every instance, and this turns a per-call-site class mismatch (which corelibs
///   answers with `fatalError`) into a `nil` from `decodeObject(of:forKey:)`.
///
/// The native archive format (`Archive`) is the default and much faster (the
/// `keyed-declaration` suite sets the two side by side); use this bridge for classes that
/// already adopt `NSSecureCoding`. See `docs/FoundationBridge.md`.
///
/// ```swift
/// let data = try KeyedArchiverBridge.archive(letter)
/// let copy = try KeyedArchiverBridge.unarchive(Letter.self, from: data)
/// ```
public enum KeyedArchiverBridge {
    /// The Foundation classes every call allows besides the ones you name: collections, strings,
    /// numbers, data, dates, URLs, UUIDs and `NSNull`.
    ///
    /// `NSValue` is not among them and is refused even when named: corelibs traps on type
    /// encodings it does not support.
    ///
    /// ```swift
    /// KeyedArchiverBridge.foundationValueClassNames.contains("NSDictionary")  // true
    /// ```
    public static var foundationValueClassNames: Set<String> { KeyedArchiveValidator.foundationValueClassNames }

    /// Archives `object` with `NSKeyedArchiver(requiringSecureCoding: true)`.
    ///
    /// ```swift
    /// let data = try KeyedArchiverBridge.archive(NSArray(array: ["a", 1]))
    /// ```
    ///
    /// - Parameter object: The root object; its class must return `true` from `supportsSecureCoding`.
    /// - Returns: A binary property list keyed archive with the object under `root`.
    /// - Throws: `ArchiveError` `.disallowedType` when the class does not support secure coding,
    ///   or, on Linux, when it is not a top-level class (`private`, nested or generic: corelibs'
    ///   `NSStringFromClass` traps on those, and Foundation could not look the name up again);
    ///   `.foundation` with Foundation's error as `underlyingError` when encoding fails.
    /// - Complexity: O(*n*) in the size of the object graph. Foundation's encoder recurses once
    ///   per level of the graph: very deep graphs (thousands of levels) can overflow the stack
    ///   while encoding, and are refused when read back.
    public static func archive(_ object: some NSObject & NSSecureCoding) throws -> Data {
        let type = Swift.type(of: object)
        // corelibs' NSKeyedArchiver calls NSStringFromClass, which traps on a class it cannot name.
        let name = try KeyedArchiveClassName.requireFoundationName(of: type)
        guard type.supportsSecureCoding else {
            throw ArchiveError(.disallowedType, "\(type) does not support secure coding", typeName: name)
        }
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode(object, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        if let error = archiver.error {
            throw ArchiveError(.foundation, "NSKeyedArchiver failed", typeName: name, underlyingError: error as NSError)
        }
        return archiver.encodedData
    }

    /// Validates `data`, then decodes its root object with `NSKeyedUnarchiver` — or, on
    /// swift-corelibs-foundation (Linux) when the archive holds only Foundation value classes,
    /// builds the same objects from the pure-Swift reader (see ``unarchiveObject(ofClasses:from:limits:)``).
    ///
    /// Only `type`, `allowedClasses` and ``foundationValueClassNames`` may be instantiated; the
    /// check covers every object in the archive before Foundation sees a byte.
    ///
    /// ```swift
    /// let letter = try KeyedArchiverBridge.unarchive(Letter.self, from: data, allowedClasses: [User.self])
    /// ```
    ///
    /// - Parameters:
    ///   - type: The class of the root object.
    ///   - data: A keyed archive, binary or XML property list.
    ///   - allowedClasses: Further classes the graph may contain; each must support secure coding.
    ///   - limits: Bounds on size, object count, container size and reference depth.
    /// - Returns: The decoded root object.
    /// - Throws: `ArchiveError`: the validator's codes (see ``validate(_:allowedClassNames:limits:)``);
    ///   `.keyNotFound` without a `root`; `.disallowedType` for a class that does not support
    ///   secure coding, is refused, or (on Linux) is not top-level, which corelibs cannot name; `.foundation` (Foundation's error as `underlyingError`) when
    ///   an `init(coder:)` fails; `.valueNotFound` when the root decodes to `nil`; `.typeMismatch`
    ///   when it is not a `type`.
    /// - Complexity: O(*n*) in the size of `data`, plus the cost of the classes' `init(coder:)`.
    public static func unarchive<T: NSObject & NSSecureCoding>(
        _ type: T.Type,
        from data: Data,
        allowedClasses: [AnyClass] = [],
        limits: ArchiveLimits = .init()
    ) throws -> T {
        let root = try unarchiveObject(ofClasses: [type] + allowedClasses, from: data, limits: limits)
        guard let typed = root as? T else {
            let name = KeyedArchiveClassName.foundationName(of: type) ?? String(reflecting: type)
            throw ArchiveError(
                .typeMismatch,
                "the root object is a \(Swift.type(of: root)), not a \(name)",
                typeName: name
            )
        }
        return typed
    }

    /// Validates `data`, then decodes its root object, whatever its class among `classes` and
    /// ``foundationValueClassNames``; the counterpart of `NSKeyedUnarchiver.unarchivedObject(ofClasses:from:)`.
    ///
    /// On swift-corelibs-foundation (Linux), an archive whose classes are all Foundation value
    /// classes (strings, numbers, data, dates, UUIDs, URLs, `NSNull` and the collections, plain or
    /// mutable) is not handed to `NSKeyedUnarchiver`: after the same validation, the objects are
    /// built from ``KeyedArchive``'s table with the initializers their `init(coder:)` uses, so the
    /// result is equal to Foundation's, of the same classes (`NSMutableArray` when the archive
    /// says so), with shared objects shared. An archive holding any other class, or a class
    /// remapped with `NSKeyedUnarchiver.setClass(_:forClassName:)`, goes to Foundation; so does
    /// every archive on Darwin.
    ///
    /// ```swift
    /// let value = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)  // e.g. an NSDictionary
    /// ```
    ///
    /// - Parameters:
    ///   - classes: Classes the graph may contain besides the Foundation value classes; each
    ///     must support secure coding.
    ///   - data: A keyed archive, binary or XML property list.
    ///   - limits: Bounds on size, object count, container size and reference depth.
    /// - Returns: The decoded root object (a plist value such as a string or number when the root
    ///   is one).
    /// - Throws: As ``unarchive(_:from:allowedClasses:limits:)``, except `.typeMismatch`.
    /// - Complexity: O(*n*) in the size of `data`, plus the cost of the classes' `init(coder:)`
    ///   (none on the pure-Swift path, which also needs no call stack per level).
    public static func unarchiveObject(
        ofClasses classes: [AnyClass],
        from data: Data,
        limits: ArchiveLimits = .init()
    ) throws -> Any {
        try unarchiveObject(
            ofClasses: classes,
            from: data,
            limits: limits,
            pureSwiftValues: usesPureSwiftReaderForFoundationValues
        )
    }

    /// ``unarchiveObject(ofClasses:from:limits:)`` with the choice of decoder for archives of
    /// Foundation value classes made by the caller (the tests compare both on one archive).
    static func unarchiveObject(
        ofClasses classes: [AnyClass],
        from data: Data,
        limits: ArchiveLimits,
        pureSwiftValues: Bool
    ) throws -> Any {
        var names = foundationValueClassNames
        for cls in classes {
            let name = try KeyedArchiveClassName.requireFoundationName(of: cls)
            guard (cls as? NSSecureCoding.Type)?.supportsSecureCoding == true else {
                throw ArchiveError(.disallowedType, "\(name) does not support secure coding", typeName: name)
            }
            if let reason = KeyedArchiveValidator.refusedClassNames[name] {
                throw ArchiveError(.disallowedType, "\(name) is refused: \(reason)", typeName: name)
            }
            names.insert(name)
        }
        let validator = KeyedArchiveValidator(
            allowedClassNames: names,
            limits: limits,
            requiredTopKey: NSKeyedArchiveRootObjectKey
        )
        let validated = try validator.validate(data)
        if pureSwiftValues, let root = try foundationValueRoot(of: validated, limits: limits) {
            return root
        }
        return try decodeRoot(from: Data(validated.canonicalBytes), classes: classes + foundationValueClasses())
    }

    /// Whether ``unarchiveObject(ofClasses:from:limits:)`` builds archives of Foundation value
    /// classes from the pure-Swift reader instead of `NSKeyedUnarchiver`: on swift-corelibs-foundation
    /// (Linux), where the two were compared archive by archive; Darwin keeps its own unarchiver.
    static var usesPureSwiftReaderForFoundationValues: Bool { KeyedArchiveValidator.isCorelibsFoundation }

    /// The root object of a validated archive built from ``KeyedArchive``'s table, or `nil` when
    /// the archive holds a class other than the Foundation value classes (or anything else
    /// ``KeyedArchiveFoundationObjects`` does not build): Foundation decodes those.
    ///
    /// - Throws: `.valueNotFound` when the root is `$null`, as Foundation's path does.
    static func foundationValueRoot(of validated: KeyedArchiveValidator.Result, limits: ArchiveLimits) throws -> Any? {
        guard KeyedArchiveFoundationObjects.canBuild(classNames: validated.summary.classNames) else { return nil }
        // The validator accepted this property list; a reader that still refuses it (or a limit
        // it counts differently) leaves the archive to Foundation's unarchiver, which the
        // validator has already made safe.
        guard let archive = try? KeyedArchive(validatedDocument: validated.document, limits: limits),
            let root = archive.root
        else { return nil }
        guard !root.isNull else { throw ArchiveError(.valueNotFound, "the root object decoded to nil") }
        return try KeyedArchiveFoundationObjects.build(archive, root: root)
    }

    /// Runs every check of the validator on `data` without decoding anything.
    ///
    /// ```swift
    /// let summary = try KeyedArchiverBridge.validate(data, allowedClassNames: ["ArchivistTests.Letter"])
    /// ```
    ///
    /// - Parameters:
    ///   - data: A keyed archive, binary or XML property list.
    ///   - allowedClassNames: Class names (as `NSStringFromClass` spells them, module-qualified
    ///     for Swift classes) allowed besides ``foundationValueClassNames``.
    ///   - limits: Bounds on size, object count, container size and reference depth.
    /// - Returns: What the archive holds.
    /// - Throws: `ArchiveError`: `.truncated`, `.badMagic` or `.corrupt` for a malformed property
    ///   list or archive layout, `.unsupportedVersion` for a `$version` other than 100000,
    ///   `.disallowedType` for a class outside the allowlist (or refused), `.unresolvedReference`
    ///   for a reference cycle, `.limitExceeded` for a limit.
    /// - Complexity: O(*n*) in the size of `data`.
    public static func validate(
        _ data: Data,
        allowedClassNames: Set<String> = [],
        limits: ArchiveLimits = .init()
    ) throws -> KeyedArchiveSummary {
        let names = foundationValueClassNames.union(allowedClassNames)
            .subtracting(KeyedArchiveValidator.refusedClassNames.keys)
        return try KeyedArchiveValidator(allowedClassNames: names, limits: limits, requiredTopKey: nil)
            .validate(data).summary
    }

    private static func foundationValueClasses() -> [AnyClass] {
        [
            NSArray.self, NSMutableArray.self, NSDictionary.self, NSMutableDictionary.self, NSSet.self,
            NSMutableSet.self, NSOrderedSet.self, NSMutableOrderedSet.self, NSString.self, NSMutableString.self,
            NSNumber.self, NSData.self, NSMutableData.self, NSDate.self, NSURL.self, NSUUID.self, NSNull.self,
        ]
    }

    private static func decodeRoot(from data: Data, classes: [AnyClass]) throws -> Any {
        let unarchiver: NSKeyedUnarchiver
        do {
            unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
        } catch {
            throw ArchiveError(.foundation, "NSKeyedUnarchiver refused the archive", underlyingError: error as NSError)
        }
        #if canImport(Darwin)
        unarchiver.requiresSecureCoding = true
        #endif
        unarchiver.decodingFailurePolicy = .setErrorAndReturn
        let root = unarchiver.decodeObject(of: classes, forKey: NSKeyedArchiveRootObjectKey)
        unarchiver.finishDecoding()
        if let error = unarchiver.error {
            throw ArchiveError(.foundation, "NSKeyedUnarchiver failed", underlyingError: error as NSError)
        }
        guard let root else { throw ArchiveError(.valueNotFound, "the root object decoded to nil") }
        return root
    }
}
