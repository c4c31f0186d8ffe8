import Archivist
import Foundation

extension KeyedArchiveArchiver {
    /// Marks the object as a plain plist value (how `NSKeyedArchiver` stores strings and numbers).
    func encodePlain(_ value: PropertyListDocument.Node) { plainValue = value }

    /// Writes the object as an instance of a Foundation class.
    func encodeFoundation(_ chain: [String], _ body: () throws -> Void) rethrows {
        classChainOverride = chain
        try body()
    }

    /// Writes `references` under `key` as an array of references (`NS.objects`, `NS.keys`).
    func encodeReferences(_ objects: [Int], forKey key: String) {
        set(key, state.node(.array(objects.map(state.uid))))
    }
}

extension String: KeyedArchiveEncodable {
    /// Writes an `NSString` (a plain plist string).
    public func encode(with archiver: KeyedArchiveArchiver) throws { archiver.encodePlain(.string(self)) }
}

extension Int: KeyedArchiveEncodable {
    /// Writes an integer `NSNumber` (a plain plist integer).
    public func encode(with archiver: KeyedArchiveArchiver) throws { archiver.encodePlain(.integer(Int64(self))) }
}

extension Int64: KeyedArchiveEncodable {
    /// Writes an integer `NSNumber` (a plain plist integer).
    public func encode(with archiver: KeyedArchiveArchiver) throws { archiver.encodePlain(.integer(self)) }
}

extension Double: KeyedArchiveEncodable {
    /// Writes a floating-point `NSNumber` (a plain plist real).
    public func encode(with archiver: KeyedArchiveArchiver) throws { archiver.encodePlain(.real(self)) }
}

extension Bool: KeyedArchiveEncodable {
    /// Writes a Boolean `NSNumber` (a plain plist Boolean).
    public func encode(with archiver: KeyedArchiveArchiver) throws { archiver.encodePlain(.bool(self)) }
}

extension Data: KeyedArchiveEncodable {
    /// Writes an `NSData` (plain plist data).
    public func encode(with archiver: KeyedArchiveArchiver) throws { archiver.encodePlain(.data([UInt8](self))) }
}

extension Date: KeyedArchiveEncodable {
    /// Writes an `NSDate` (`NS.time`, seconds since 2001).
    ///
    /// - Throws: `ArchiveError` `invalidValue` for a date of NaN seconds, which
    ///   ``KeyedArchive`` and the bridge's validator refuse to read.
    public func encode(with archiver: KeyedArchiveArchiver) throws {
        guard KeyedArchiveDateRule.allows(timeIntervalSinceReferenceDate) else {
            throw KeyedArchiveDateRule.writeRefusal(codingPath: archiver.codingPath)
        }
        archiver.encodeFoundation(["NSDate", "NSObject"]) {
            archiver.encode(timeIntervalSinceReferenceDate, forKey: "NS.time")
        }
    }
}

extension UUID: KeyedArchiveEncodable {
    /// Writes an `NSUUID` (`NS.uuidbytes`).
    public func encode(with archiver: KeyedArchiveArchiver) throws {
        let bytes = withUnsafeBytes(of: uuid) { Data($0) }
        archiver.encodeFoundation(["NSUUID", "NSObject"]) { archiver.encodeBytes(bytes, forKey: "NS.uuidbytes") }
    }
}

extension URL: KeyedArchiveEncodable {
    /// Writes an `NSURL`: `NS.relative` and, for a relative URL, its `NS.base`.
    public func encode(with archiver: KeyedArchiveArchiver) throws {
        try archiver.encodeFoundation(["NSURL", "NSObject"]) {
            try archiver.encodeObject(baseURL, forKey: "NS.base")
            try archiver.encodeObject(relativeString, forKey: "NS.relative")
        }
    }
}

extension Array: KeyedArchiveEncodable where Element: KeyedArchiveEncodable {
    /// Writes an `NSArray` of its elements.
    public func encode(with archiver: KeyedArchiveArchiver) throws {
        let objects = try enumerated().map { position, element in
            try KeyedArchiveWriter.object(
                for: element,
                state: archiver.state,
                codingPath: archiver.codingPath + ["[\(position)]"]
            )
        }
        archiver.encodeFoundation(["NSArray", "NSObject"]) { archiver.encodeReferences(objects, forKey: "NS.objects") }
    }
}

extension Set: KeyedArchiveEncodable where Element: KeyedArchiveEncodable {
    /// Writes an `NSSet` of its elements.
    public func encode(with archiver: KeyedArchiveArchiver) throws {
        let objects = try enumerated().map { position, element in
            try KeyedArchiveWriter.object(
                for: element,
                state: archiver.state,
                codingPath: archiver.codingPath + ["[\(position)]"]
            )
        }
        archiver.encodeFoundation(["NSSet", "NSObject"]) { archiver.encodeReferences(objects, forKey: "NS.objects") }
    }
}

extension Dictionary: KeyedArchiveEncodable where Key: KeyedArchiveEncodable, Value: KeyedArchiveEncodable {
    /// Writes an `NSDictionary` (`NS.keys`, `NS.objects`).
    public func encode(with archiver: KeyedArchiveArchiver) throws {
        var keys: [Int] = []
        var values: [Int] = []
        for (key, value) in self {
            let path = archiver.codingPath + ["\(key)"]
            keys.append(try KeyedArchiveWriter.object(for: key, state: archiver.state, codingPath: path))
            values.append(try KeyedArchiveWriter.object(for: value, state: archiver.state, codingPath: path))
        }
        archiver.encodeFoundation(["NSDictionary", "NSObject"]) {
            archiver.encodeReferences(keys, forKey: "NS.keys")
            archiver.encodeReferences(values, forKey: "NS.objects")
        }
    }
}

/// `NSNull`, for collections that hold it.
public struct KeyedArchiveNull: KeyedArchiveEncodable, Sendable, Hashable {
    /// Creates the null value.
    public init() {}
    /// Writes an `NSNull`.
    public func encode(with archiver: KeyedArchiveArchiver) throws {
        archiver.encodeFoundation(["NSNull", "NSObject"]) {}
    }
}
