import Archivist
import Foundation

/// The class names keyed archives carry for Swift types, as Foundation spells them.
///
/// `NSKeyedUnarchiver` finds a class by the name `NSStringFromClass` gives it. On Apple
/// platforms that is `Module.Name` for a top-level, non-generic class, and the mangled runtime
/// name (`_TtCC5MyApp5Outer4Note`) for a nested, generic, `private` or local one, which only
/// the Apple runtime can compute. swift-corelibs-foundation names top-level classes only: its
/// `NSStringFromClass` traps on the others.
enum KeyedArchiveClassName {
    /// The default class name of `type`: `NSStringFromClass` for a class on Apple platforms,
    /// `String(reflecting:)` (`Module.Name` for a top-level type) otherwise.
    static func defaultName<T>(of type: T.Type) -> String {
        #if canImport(Darwin)
        if let cls = type as? AnyClass { return NSStringFromClass(cls) }
        #endif
        return String(reflecting: type)
    }

    /// Whether `reflected`, a `String(reflecting:)` spelling, names a top-level, non-generic
    /// type (`Module.Name`): the one form `NSClassFromString` resolves on every platform.
    static func isTopLevel(_ reflected: String) -> Bool {
        var dots = 0
        for character in reflected.utf8 {
            switch character {
            case UInt8(ascii: "."): dots += 1
            case UInt8(ascii: "<"), UInt8(ascii: "("), UInt8(ascii: " "): return false
            default: continue
            }
        }
        return dots == 1
    }

    /// The refusal of a default name Foundation cannot look up, or `nil` when `chain` is not
    /// `type`'s `String(reflecting:)` default or that names a top-level type.
    static func unresolvableDefault<T>(
        _ chain: [String],
        of type: T.Type,
        reflected: String,
        codingPath: [String]
    ) -> ArchiveError? {
        guard chain.first == reflected, !isTopLevel(reflected) else { return nil }
        return ArchiveError(
            .invalidValue,
            "\(reflected) is nested, generic, private or local, so NSKeyedUnarchiver cannot find a class by its default "
                + "name; give it a keyedArchiveClassChain naming the class that reads it",
            codingPath: codingPath,
            typeName: reflected
        )
    }

    /// `NSStringFromClass(cls)`, or `nil` where Foundation cannot name the class: on
    /// swift-corelibs-foundation, any class that is not top-level (its `NSStringFromClass` traps).
    static func foundationName(of cls: AnyClass) -> String? {
        #if canImport(Darwin)
        return NSStringFromClass(cls)
        #else
        guard isTopLevel(String(reflecting: cls)) else { return nil }
        return NSStringFromClass(cls)
        #endif
    }

    /// ``foundationName(of:)``, or `.disallowedType` naming the class.
    static func requireFoundationName(of cls: AnyClass) throws -> String {
        guard let name = foundationName(of: cls) else {
            throw ArchiveError(
                .disallowedType,
                "\(String(reflecting: cls)) is not a top-level class, which Foundation on Linux cannot name",
                typeName: String(reflecting: cls)
            )
        }
        return name
    }
}
