import Archivist
import Foundation

extension KeyedArchiveUnarchiver {
    /// The object as a scalar of the kind `read` accepts, or a `.typeMismatch`.
    func value<T>(_ expectation: String, _ read: (KeyedArchiveObject) -> T?) throws -> T {
        guard let value = read(object) else {
            throw ArchiveError(
                .typeMismatch,
                "expected \(expectation), found \(object.kindDescription)",
                codingPath: codingPath,
                typeName: classChain.first
            )
        }
        return value
    }
}

extension KeyedArchiveObject {
    /// A short name of the case, for error messages.
    var kindDescription: String {
        switch self {
        case .null: "$null"
        case .nsNull: "NSNull"
        case .string: "a string"
        case .integer, .unsignedInteger, .real, .bool: "a number"
        case .data: "data"
        case .date: "a date"
        case .uuid: "a UUID"
        case .url: "a URL"
        case .array: "an array"
        case .set: "a set"
        case .orderedSet: "an ordered set"
        case .dictionary: "a dictionary"
        case .instance(let instance): "an instance of \(instance.className)"
        case .classDescription: "a class description"
        case .plist: "a plain property list value"
        }
    }
}

extension String: KeyedArchiveDecodable {
    /// Reads an `NSString` (or plain string).
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("a string") { if case .string(let value) = $0 { value } else { nil } }
    }
}

extension Int64: KeyedArchiveDecodable {
    /// Reads any `NSNumber` whose value is an `Int64` (a Boolean as 0 or 1, `2.0` as 2).
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("a 64-bit integer") { KeyedArchiveNumber($0)?.exactly(Int64.self) }
    }
}

extension Int: KeyedArchiveDecodable {
    /// Reads any `NSNumber` whose value is an `Int` (a Boolean as 0 or 1, `2.0` as 2).
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("an Int") { KeyedArchiveNumber($0)?.exactly(Int.self) }
    }
}

extension Double: KeyedArchiveDecodable {
    /// Reads any `NSNumber` that a `Double` holds exactly (a Boolean as 0 or 1).
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("a Double") { KeyedArchiveNumber($0)?.double }
    }
}

extension Bool: KeyedArchiveDecodable {
    /// Reads a Boolean `NSNumber`, or any number equal to 0 or 1 (corelibs archives Booleans
    /// as integers, and stores equal numbers once whatever their kind).
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("a Boolean") { KeyedArchiveNumber($0)?.bool }
    }
}

extension Date: KeyedArchiveDecodable {
    /// Reads an `NSDate`.
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("a date") { if case .date(let value) = $0 { value } else { nil } }
    }
}

extension Data: KeyedArchiveDecodable {
    /// Reads an `NSData`.
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("data") { if case .data(let value) = $0 { value } else { nil } }
    }
}

extension UUID: KeyedArchiveDecodable {
    /// Reads an `NSUUID`.
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("a UUID") { if case .uuid(let value) = $0 { value } else { nil } }
    }
}

extension URL: KeyedArchiveDecodable {
    /// Reads an `NSURL`, resolved against its base chain.
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        do {
            self = try unarchiver.archive.url(at: unarchiver.reference)
        } catch var error as ArchiveError {
            error.codingPath = unarchiver.codingPath + error.codingPath
            throw error
        }
    }
}

extension Array: KeyedArchiveDecodable where Element: KeyedArchiveDecodable {
    /// Reads an `NSArray`, `NSSet` or `NSOrderedSet` whose elements are all `Element`s.
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.decodeElements(of: Element.self)
    }
}

extension Dictionary: KeyedArchiveDecodable where Key == String, Value: KeyedArchiveDecodable {
    /// Reads an `NSDictionary` with string keys (a repeated key throws `.corrupt`).
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        guard case .dictionary(let keys, let values) = unarchiver.object else {
            throw ArchiveError(
                .typeMismatch,
                "expected a dictionary, found \(unarchiver.object.kindDescription)",
                codingPath: unarchiver.codingPath
            )
        }
        var result: [String: Value] = [:]
        for (key, value) in zip(keys, values) {
            let name = try unarchiver.context.decode(
                String.self,
                at: key,
                codingPath: unarchiver.codingPath + ["(key)"]
            )
            let element = try unarchiver.context.decode(
                Value.self,
                at: value,
                codingPath: unarchiver.codingPath + [name]
            )
            guard result.updateValue(element, forKey: name) == nil else {
                throw ArchiveError(
                    .corrupt,
                    "dictionary has the key \(name) twice",
                    codingPath: unarchiver.codingPath + [name]
                )
            }
        }
        self = result
    }
}
