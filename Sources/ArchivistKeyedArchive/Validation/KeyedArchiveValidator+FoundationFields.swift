import Archivist
import Foundation

extension KeyedArchiveValidator {
    /// Foundation classes NSKeyedUnarchiver decodes by itself and the bridge always allows.
    ///
    /// Each one's corelibs `init(coder:)` was read for traps, and the fields it force-unwraps are
    /// checked by ``checkFoundationFields(of:instance:in:path:)``. `NSValue` is left out on
    /// purpose: corelibs calls `fatalError` on type encodings it does not support.
    static let foundationValueClassNames: Set<String> = [
        "NSArray", "NSMutableArray", "NSDictionary", "NSMutableDictionary", "NSSet", "NSMutableSet",
        "NSOrderedSet", "NSMutableOrderedSet", "NSString", "NSMutableString", "NSNumber", "NSData",
        "NSMutableData", "NSDate", "NSURL", "NSUUID", "NSNull",
    ]

    /// Classes the bridge refuses even when a caller allows them, with the reason.
    static let refusedClassNames: [String: String] = [
        "NSValue": "corelibs NSValue traps (fatalError) on unsupported Objective-C type encodings",
        "_NSKeyedCoderOldStyleArray": "only used by NSValue, which the bridge refuses",
    ]

    static let dictionaryClassNames: Set<String> = ["NSDictionary", "NSMutableDictionary"]
    /// Containers whose corelibs `init(coder:)` crashes when one element decodes to nil or
    /// fails (unequal arrays in NSDictionary, `as! NSObject` on indexed NSOrderedSet elements).
    static let fragileContainerClassNames: Set<String> = dictionaryClassNames.union(orderedSetClassNames)
    private static let orderedSetClassNames: Set<String> = ["NSOrderedSet", "NSMutableOrderedSet"]
    private static let setClassNames: Set<String> = ["NSSet", "NSMutableSet"]
    private static let arrayClassNames: Set<String> = [
        "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet", "NSMutableOrderedSet",
    ]

    /// Checks the fields a Foundation value class reads, so its `init(coder:)` neither traps
    /// (`as!` on a missing `NS.string`) nor fails (a failure inside an NSDictionary crashes).
    ///
    /// - Throws: `.corrupt` naming the field.
    func checkFoundationFields(of className: String, instance node: Int, in layout: Layout, path: [String]) throws {
        let document = layout.document
        func field(_ key: String) -> PropertyListDocument.Node? {
            document.value(forKey: key, inDictionaryAt: node).map { document.nodes[$0] }
        }
        func fail(_ key: String, _ expectation: String) -> ArchiveError {
            ArchiveError(
                .corrupt,
                "\(className).\(key) must be \(expectation)",
                codingPath: path + [key],
                typeName: className
            )
        }
        func references(_ key: String) throws -> [Int] {
            guard let value = field(key) else { return [] }
            guard case .array(let elements) = value else { throw fail(key, "an array of references") }
            return try elements.map { element in
                guard let object = layout.target(ofUIDAt: element) else { throw fail(key, "an array of references") }
                return object
            }
        }
        let isNull = { (object: Int) in document.string(at: layout.objects[object]) == "$null" }
        switch className {
        case _ where Self.orderedSetClassNames.contains(className):
            // corelibs reads NS.object.0, NS.object.1, … and force-casts each to NSObject.
            guard case .dictionary(let keys, let values) = document.nodes[node] else { return }
            for (key, value) in zip(keys, values) where document.string(at: key)?.hasPrefix("NS.object.") == true {
                guard let object = layout.target(ofUIDAt: value), !isNull(object) else {
                    throw fail(document.string(at: key) ?? "", "a reference to an object")
                }
            }
            _ = try references("NS.objects")
        case _ where Self.setClassNames.contains(className):
            // corelibs traps bridging a set that holds an array or a dictionary to Swift
            // (`Set<AnyHashable>`: an array is not Hashable), as with dictionary keys below.
            if let element = try references("NS.objects").first(where: { isCollection(layout.objects[$0], in: layout) })
            {
                throw fail("NS.objects", "elements that are not arrays or dictionaries (object \(element) is one)")
            }
        case _ where Self.arrayClassNames.contains(className):
            _ = try references("NS.objects")
        case _ where Self.dictionaryClassNames.contains(className):
            // corelibs builds the dictionary from two arrays it assumes are equally long; an
            // entry that decodes to nil (any object that is the string "$null", not only
            // object 0) is skipped on one side only.
            let keys = try references("NS.keys")
            let values = try references("NS.objects")
            guard keys.count == values.count, !keys.contains(where: isNull), !values.contains(where: isNull) else {
                throw fail("NS.keys", "as long as NS.objects, without $null")
            }
            // corelibs traps bridging a dictionary whose key is an array or a dictionary to Swift
            // (`[AnyHashable: Any]`, which describing or casting an enclosing collection does).
            if let key = keys.first(where: { isCollection(layout.objects[$0], in: layout) }) {
                throw fail("NS.keys", "keys that are not arrays or dictionaries (object \(key) is one)")
            }
        case "NSString", "NSMutableString":
            guard case .string = field("NS.string") else { throw fail("NS.string", "a string") }
        case "NSData", "NSMutableData":
            guard case .data = field("NS.data") else { throw fail("NS.data", "data") }
        case "NSDate":
            switch field("NS.time") {
            case .real(let seconds)? where !KeyedArchiveDateRule.allows(seconds):
                throw fail("NS.time", "a number, not NaN")
            case nil, .real?, .integer?: break
            default: throw fail("NS.time", "a number")
            }
        case "NSNumber":
            switch field("NS.number") {
            case .real?, .integer?, .bool?: break
            default: throw fail("NS.number", "a number")
            }
        case "NSUUID":
            guard case .data(let bytes) = field("NS.uuidbytes"), bytes.count == 16 else {
                throw fail("NS.uuidbytes", "16 bytes")
            }
        case "NSURL":
            // Its base chain is resolved by resolveURL(instance:in:path:), which needs the layout's URL cache.
            break
        default:
            break
        }
    }

    /// Whether the `$objects` entry at `node` decodes to an array or dictionary: an instance of
    /// `NSArray`/`NSDictionary` (or their mutable subclasses), or a plain plist array or dictionary.
    private func isCollection(_ node: Int, in layout: Layout) -> Bool {
        switch layout.document.nodes[node] {
        case .array:
            return true
        case .dictionary:
            guard let name = className(ofInstanceAt: node, in: layout) else {
                return layout.document.value(forKey: "$class", inDictionaryAt: node) == nil
            }
            return Self.dictionaryClassNames.contains(name) || name == "NSArray" || name == "NSMutableArray"
        default:
            return false
        }
    }
}
