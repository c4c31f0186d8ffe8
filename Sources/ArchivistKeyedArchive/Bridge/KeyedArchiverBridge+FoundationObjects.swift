import Archivist
import Foundation

extension KeyedArchive {
    /// The table of a property list the bridge's validator has already accepted: parsed once,
    /// for both the validator and the reader.
    init(validatedDocument document: PropertyListDocument, limits: ArchiveLimits) throws {
        var reader = KeyedArchiveTableReader(document: document, limits: limits)
        self = try reader.read()
    }
}

/// Builds the Foundation objects `NSKeyedUnarchiver` would return for an archive of Foundation
/// value classes only, from the pure-Swift reader's object table instead of `init(coder:)`.
///
/// Each object is built the way its corelibs `init(coder:)` builds it: `NSArray(array:)`,
/// `NSDictionary(objects:forKeys:)` (a repeated key keeps the last value), `NSSet(array:)`,
/// `NSOrderedSet(array:)`, `NSURL(string:relativeTo:)`, the mutable class when the archive names
/// it (`NSMutableArray`, `NSMutableDictionary`, `NSMutableSet`, `NSMutableOrderedSet`,
/// `NSMutableString`, `NSMutableData`), Boolean `NSNumber`s as Foundation's Boolean. Each object is
/// built once, so an object referenced twice is one instance, as Foundation decodes it.
///
/// Anything else reachable from the root — an instance of another class, a class the process
/// has remapped with `NSKeyedUnarchiver.setClass(_:forClassName:)`, a plain plist array or
/// dictionary stored as an object, a URL Foundation would not build — makes ``build(_:root:)``
/// return `nil`, and the bridge hands the archive to Foundation's unarchiver.
enum KeyedArchiveFoundationObjects {
    /// The class names whose objects the reader maps to values and this builder can make.
    static let classNames: Set<String> = [
        "NSArray", "NSMutableArray", "NSDictionary", "NSMutableDictionary", "NSSet", "NSMutableSet",
        "NSOrderedSet", "NSMutableOrderedSet", "NSString", "NSMutableString", "NSNumber", "NSData",
        "NSMutableData", "NSDate", "NSURL", "NSUUID", "NSNull",
    ]

    /// The one `NSNull` every null of a built graph is. corelibs' `NSNull` instances are all
    /// equal but hash by identity, so `NSKeyedArchiver` traps ("Duplicate keys of type
    /// 'AnyHashable'") on a graph holding two of them, by chance of the process's hash seed;
    /// Apple's `NSNull()` is the one `+[NSNull null]` already.
    #if canImport(Darwin)
    static var sharedNull: NSNull { NSNull() }
    #else
    static let sharedNull = NSNull()
    #endif

    /// Whether an archive holding instances of `names` may be built here: all of them Foundation
    /// value classes, none remapped in `NSKeyedUnarchiver`'s class table.
    static func canBuild(classNames names: Set<String>) -> Bool {
        names.allSatisfy { classNames.contains($0) && NSKeyedUnarchiver.class(forClassName: $0) == nil }
    }

    /// The object graph under `root`, or `nil` when some object in it is not a Foundation value
    /// this builder makes (the caller then uses `NSKeyedUnarchiver`). `root` must not be `$null`.
    ///
    /// Iterative (an explicit stack), so depth costs no call stack; each object is built once.
    /// - Throws: `.unresolvedReference` for a reference cycle (the validator refuses those first).
    static func build(_ archive: KeyedArchive, root: KeyedArchiveReference) throws -> AnyObject? {
        let count = archive.objects.count
        var built = [AnyObject?](repeating: nil, count: count)
        var open = [Bool](repeating: false, count: count)
        // (object, children pushed yet)
        var stack: [(index: Int, expanded: Bool)] = [(root.index, false)]
        while let (index, expanded) = stack.popLast() {
            if built[index] != nil { continue }
            if !expanded {
                guard !open[index] else {
                    throw ArchiveError(
                        .unresolvedReference,
                        "a cycle back to object @\(index)",
                        codingPath: ["$objects", "[\(index)]"]
                    )
                }
                guard let children = children(of: archive.objects[index]) else { return nil }
                open[index] = true
                stack.append((index, true))
                for child in children.reversed() where !child.isNull && built[child.index] == nil {
                    stack.append((child.index, false))
                }
                continue
            }
            open[index] = false
            guard let object = object(at: index, in: archive, built: built) else { return nil }
            built[index] = object
        }
        return built[root.index]
    }

    /// The objects an entry refers to, or `nil` when the entry is not a value built here.
    private static func children(of object: KeyedArchiveObject) -> [KeyedArchiveReference]? {
        switch object {
        case .string, .integer, .unsignedInteger, .real, .bool, .data, .date, .uuid, .nsNull: []
        case .url(_, let base): base.map { [$0] } ?? []
        case .array(let elements), .set(let elements), .orderedSet(let elements): elements
        case .dictionary(let keys, let values): keys + values
        case .null, .instance, .classDescription, .plist: nil
        }
    }

    /// One object, its children already built (`$null` children are left out, as corelibs'
    /// collection decoding leaves out elements that decode to nil).
    private static func object(at index: Int, in archive: KeyedArchive, built: [AnyObject?]) -> AnyObject? {
        let mutable = archive.classChains[index].first?.hasPrefix("NSMutable") ?? false
        func elements(_ references: [KeyedArchiveReference]) -> [AnyObject] {
            references.compactMap { $0.isNull ? nil : built[$0.index] }
        }
        switch archive.objects[index] {
        case .string(let value): return mutable ? NSMutableString(string: value) : NSString(string: value)
        case .integer(let value): return NSNumber(value: value)
        case .unsignedInteger(let value): return NSNumber(value: value)
        case .real(let value): return NSNumber(value: value)
        case .bool(let value): return NSNumber(value: value)
        case .data(let bytes): return mutable ? NSMutableData(data: bytes) : NSData(data: bytes)
        case .date(let date): return NSDate(timeIntervalSinceReferenceDate: date.timeIntervalSinceReferenceDate)
        case .uuid(let uuid):
            return withUnsafeBytes(of: uuid.uuid) {
                NSUUID(uuidBytes: $0.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        case .nsNull: return sharedNull
        case .url(let relative, let base):
            var baseURL: URL?
            if let base, !base.isNull {
                guard let url = built[base.index] as? NSURL else { return nil }
                baseURL = url as URL
            }
            return NSURL(string: relative, relativeTo: baseURL)
        case .array(let references):
            let objects = elements(references)
            return mutable ? NSMutableArray(array: objects) : NSArray(array: objects)
        case .set(let references):
            let objects = elements(references)
            return mutable ? NSMutableSet(array: objects) : NSSet(array: objects)
        case .orderedSet(let references):
            let objects = elements(references)
            return mutable ? NSMutableOrderedSet(array: objects) : NSOrderedSet(array: objects)
        case .dictionary(let keyReferences, let valueReferences):
            // The validator refuses `$null` keys and values and collection keys; every value
            // class here is an NSObject, and copyable. The two SDKs type the keys differently:
            // Apple's `init(objects:forKeys:)` takes `[any NSCopying]`, corelibs' `[NSObject]`.
            #if canImport(Darwin)
            let keys = elements(keyReferences).compactMap { $0 as? NSCopying }
            #else
            let keys = elements(keyReferences).compactMap { $0 as? NSObject }
            #endif
            let values = elements(valueReferences)
            guard keys.count == keyReferences.count, values.count == valueReferences.count else { return nil }
            return mutable
                ? NSMutableDictionary(objects: values, forKeys: keys) : NSDictionary(objects: values, forKeys: keys)
        case .null, .instance, .classDescription, .plist:
            return nil
        }
    }
}
