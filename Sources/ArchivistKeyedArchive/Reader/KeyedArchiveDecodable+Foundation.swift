import Archivist
import Foundation

extension KeyedArchiveUnarchiver {
    /// The object as a scalar of the kind `read` accepts, or a `.typeMismatch`.
    func value<T>(_ expectation: String, _ read: (KeyedArchiveObject) -> T?) throws -> T {
        guard let value = read(object) else {
            throw ArchiveError(.typeMismatch, "expected \(expectation), found \(object.kindDescription)", codingPath: codingPath,
                               typeName: classChain.first)
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
    /// Reads an integer `NSNumber`.
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("an integer") {
            switch $0 {
            case .integer(let value): value
            case .real(let value) where value.rounded() == value && abs(value) < 0x1p63: Int64(value)
            default: nil
            }
        }
    }
}

extension Int: KeyedArchiveDecodable {
    /// Reads an integer `NSNumber`.
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        let wide = try Int64(from: unarchiver)
        self = try unarchiver.value("an Int") { _ in Int(exactly: wide) }
    }
}

extension Double: KeyedArchiveDecodable {
    /// Reads a numeric `NSNumber`.
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("a number") {
            switch $0 {
            case .real(let value): value
            case .integer(let value): Double(value)
            case .unsignedInteger(let value): Double(value)
            default: nil
            }
        }
    }
}

extension Bool: KeyedArchiveDecodable {
    /// Reads a Boolean `NSNumber` (or the integer 0 or 1, as corelibs archives Booleans).
    public init(from unarchiver: KeyedArchiveUnarchiver) throws {
        self = try unarchiver.value("a Boolean") {
            switch $0 {
            case .bool(let value): value
            case .integer(let value) where value == 0 || value == 1: value == 1
            default: nil
            }
        }
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
            throw ArchiveError(.typeMismatch, "expected a dictionary, found \(unarchiver.object.kindDescription)",
                               codingPath: unarchiver.codingPath)
        }
        var result: [String: Value] = [:]
        for (key, value) in zip(keys, values) {
            let name = try unarchiver.context.decode(String.self, at: key, codingPath: unarchiver.codingPath + ["(key)"])
            let element = try unarchiver.context.decode(Value.self, at: value, codingPath: unarchiver.codingPath + [name])
            guard result.updateValue(element, forKey: name) == nil else {
                throw ArchiveError(.corrupt, "dictionary has the key \(name) twice", codingPath: unarchiver.codingPath + [name])
            }
        }
        self = result
    }
}
