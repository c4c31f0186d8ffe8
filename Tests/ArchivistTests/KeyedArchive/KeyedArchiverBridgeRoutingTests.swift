import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// Archives of Foundation value classes only, read by the bridge through the pure-Swift reader
/// (on corelibs) and through `NSKeyedUnarchiver`: the same objects, of the same classes.
@Suite struct KeyedArchiverBridgeRoutingTests {
    /// Value-only archives, built inside each test (NSObjects are not Sendable).
    enum Sample: String, CaseIterable, Sendable {
        case string, mutableString, emptyString, integers, unsignedMax, double, bool, data, mutableData, emptyData
        case date, uuid, absoluteURL, urlWithBase, urlWithBaseChain, null
        case array, mutableArray, emptyArray, dictionary, mutableDictionary, emptyDictionary, nonStringKeys
        case set, mutableSet, emptySet, orderedSet, mutableOrderedSet, emptyOrderedSet
        case nested, sharedString, sharedCollections, everyClassInOneArray

        var object: NSObject {
            let base = NSURL(string: "https://example.com/docs/")!
            switch self {
            case .string: return NSString(string: "héllo, wörld ✉︎")
            case .mutableString: return NSMutableString(string: "mutable")
            case .emptyString: return NSString(string: "")
            case .integers:
                return NSArray(array: [
                    3, 300, 70_000, NSNumber(value: 3_000_000_000 as Int64), -1, -7,
                    NSNumber(value: Int64.max), NSNumber(value: Int64.min), NSNumber(value: Int8(4)),
                ])
            case .unsignedMax: return NSNumber(value: UInt64.max)
            case .double: return NSArray(array: [2.5, -0.0, 1e300, Double.infinity, 0.1])
            case .bool: return NSArray(array: [NSNumber(value: true), NSNumber(value: false)])
            case .data: return NSData(data: Data((0..<300).map { UInt8($0 % 256) }))
            case .mutableData: return NSMutableData(data: Data([1, 2, 3]))
            case .emptyData: return NSData()
            case .date:
                return NSArray(array: [
                    NSDate(timeIntervalSinceReferenceDate: 123_456.5), NSDate(timeIntervalSinceReferenceDate: -1e9),
                ])
            case .uuid: return NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
            case .absoluteURL: return NSURL(string: "https://example.com/a?b=c#d")!
            case .urlWithBase: return NSURL(string: "guide/intro.html", relativeTo: base as URL)!
            case .urlWithBaseChain:
                let middle = NSURL(string: "v2/", relativeTo: base as URL)!
                return NSURL(string: "../index.html?x=1", relativeTo: middle as URL)!
            case .null: return foundationNull
            case .array: return NSArray(array: ["a", 1, 2.5, NSArray(array: ["inner"])])
            case .mutableArray: return NSMutableArray(array: ["a", NSMutableArray(array: [1])])
            case .emptyArray: return NSArray()
            case .dictionary:
                return NSDictionary(dictionary: ["k": "v", "n": 3, "nested": NSDictionary(dictionary: ["x": 1])])
            case .mutableDictionary:
                return NSMutableDictionary(dictionary: ["k": NSMutableDictionary(dictionary: ["x": 1])])
            case .emptyDictionary: return NSDictionary()
            case .nonStringKeys:
                return NSDictionary(
                    objects: ["number", "date", "uuid", "null", "url"],
                    forKeys: [
                        NSNumber(value: 7), NSDate(timeIntervalSinceReferenceDate: 5),
                        NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, foundationNull, base,
                    ]
                )
            case .set: return NSSet(array: [1, 2, "three", NSDate(timeIntervalSinceReferenceDate: 4)])
            case .mutableSet: return NSMutableSet(array: [1, "two"])
            case .emptySet: return NSSet()
            case .orderedSet: return NSOrderedSet(array: [3, 1, 2, "x"])
            case .mutableOrderedSet: return NSMutableOrderedSet(array: ["b", "a"])
            case .emptyOrderedSet: return NSOrderedSet()
            case .nested:
                return NSDictionary(dictionary: [
                    "list": NSArray(array: [
                        NSDictionary(dictionary: [
                            "deep": NSArray(array: [NSSet(array: [1]), NSOrderedSet(array: [2])])
                        ])
                    ]),
                    "empty": NSArray(array: [NSArray(), NSDictionary(), NSSet()]),
                ])
            case .sharedString:
                let shared = NSString(string: "shared")
                return NSArray(array: [shared, shared])
            case .sharedCollections:
                let inner = NSMutableArray(array: ["x", NSDate(timeIntervalSinceReferenceDate: 9)])
                let dictionary = NSDictionary(dictionary: ["a": inner, "b": inner])
                return NSArray(array: [dictionary, dictionary, inner])
            case .everyClassInOneArray:
                return NSArray(array: [
                    "s", NSMutableString(string: "m"), 1, 2.5, NSNumber(value: true), NSData(data: Data([9])),
                    NSMutableData(data: Data([8])), NSDate(timeIntervalSinceReferenceDate: 1), NSUUID(), base,
                    NSURL(string: "x", relativeTo: base as URL)!, foundationNull, NSArray(), NSMutableArray(),
                    NSDictionary(),
                    NSMutableDictionary(), NSSet(), NSMutableSet(), NSOrderedSet(),
                    // Not empty: corelibs' equal ordered sets hash apart, and NSKeyedArchiver may trap on two.
                    NSMutableOrderedSet(array: ["m"]),
                ])
            }
        }
    }

    private static func bothPaths(_ data: Data) throws -> (pureSwift: Any, foundation: Any) {
        let pure = try KeyedArchiverBridge.unarchiveObject(
            ofClasses: [],
            from: data,
            limits: .init(),
            pureSwiftValues: true
        )
        let foundation = try KeyedArchiverBridge.unarchiveObject(
            ofClasses: [],
            from: data,
            limits: .init(),
            pureSwiftValues: false
        )
        return (pure, foundation)
    }

    private static func archive(_ object: NSObject, xml: Bool = false) -> Data {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        if xml { archiver.outputFormat = .xml }
        archiver.encode(object, forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }

    @Test(arguments: Sample.allCases, [false, true])
    func valueArchiveReadsTheSameThroughBothPaths(_ sample: Sample, xml: Bool) throws {
        let data = Self.archive(sample.object, xml: xml)
        let summary = try KeyedArchiverBridge.validate(data)
        // Only value classes: the pure-Swift path applies (on corelibs it is what the bridge uses).
        let validated = try KeyedArchiveValidator(
            allowedClassNames: KeyedArchiverBridge.foundationValueClassNames,
            limits: .init(),
            requiredTopKey: "root"
        ).validate(data)
        #expect(
            try KeyedArchiverBridge.foundationValueRoot(of: validated, limits: .init()) != nil,
            "\(summary.classNames)"
        )
        let (pure, foundation) = try Self.bothPaths(data)
        #expect(ObjectShape(pure) == ObjectShape(foundation))
        // corelibs' NSDictionary equality over keys of mixed classes depends on the process's
        // hash seed (either path's result can compare unequal to the other, or to the original).
        if sample != .nonStringKeys {
            #expect((pure as! NSObject).isEqual(foundation))
            #expect((pure as! NSObject).isEqual(sample.object) == (foundation as! NSObject).isEqual(sample.object))
        }
        let bridged = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)
        #expect(ObjectShape(bridged) == ObjectShape(foundation))
    }

    /// Both paths build a shared object once; on corelibs every element read (`object(at:)`,
    /// subscripts, casts) bridges to a fresh Swift value, so what callers see is equal values,
    /// and the root keeps its archived class, mutable when the archive says so.
    @Test func sharedObjectsAndMutableRoots() throws {
        let data = Self.archive(
            NSMutableArray(array: [Sample.sharedCollections.object, Sample.sharedCollections.object])
        )
        let (pure, foundation) = try Self.bothPaths(data)
        for root in [pure, foundation] {
            let array = try #require(root as? NSMutableArray)
            let copies = try #require(array.object(at: 0) as? [Any])
            let first = try #require(copies[0] as? [String: Any])
            let second = try #require(copies[1] as? [String: Any])
            #expect((first["a"] as? [Any])?.count == 2 && (second["b"] as? [Any])?.count == 2)
            array.add("added")
            #expect(array.count == 3)
        }
    }

    @Test func casting() throws {
        let data = Self.archive(
            NSDictionary(dictionary: ["name": "x", "count": 3, "tags": NSArray(array: ["a", "b"])])
        )
        for root in [try Self.bothPaths(data).pureSwift, try Self.bothPaths(data).foundation] {
            let dictionary = try #require(root as? [String: Any])
            #expect(dictionary["name"] as? String == "x")
            #expect(dictionary["count"] as? Int == 3)
            #expect(dictionary["tags"] as? [String] == ["a", "b"])
        }
        let typed = try KeyedArchiverBridge.unarchive(NSDictionary.self, from: data)
        #expect(typed["name"] as? String == "x")
        let mismatch = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.unarchive(NSArray.self, from: data)
        }
        #expect(mismatch.code == .typeMismatch)
    }

    /// Binary plists store `NSNumber(value: Float)` as a 32-bit real; the reader keeps it as a
    /// `Double` of the same value, so the pure-Swift path returns a double `NSNumber`: equal, with
    /// the same `floatValue`, but described with the double's digits.
    @Test func floatNumbersAreEqualButDouble() throws {
        let data = Self.archive(NSArray(array: [NSNumber(value: Float(0.1)), NSNumber(value: Float(2.5))]))
        let (pure, foundation) = try Self.bothPaths(data)
        let lhs = try #require(pure as? NSArray)
        let rhs = try #require(foundation as? NSArray)
        #expect(lhs.isEqual(rhs))
        for index in 0..<2 {
            let a = try #require(lhs[index] as? NSNumber)
            let b = try #require(rhs[index] as? NSNumber)
            #expect(a.floatValue == b.floatValue && a.doubleValue == b.doubleValue)
        }
    }

    @Test(
        .needsKeyedArchiveFixtures,
        arguments: KeyedArchiveFixtures.expectations.filter { $0.outcome.description == "decodes" }.map(\.path)
    )
    func decodingFixtureReadsTheSameThroughBothPaths(path: String) throws {
        let data = try KeyedArchiveFixtures.data(path)
        let (pure, foundation) = try Self.bothPaths(data)
        #expect(ObjectShape(pure) == ObjectShape(foundation))
        // Every one but the archive whose root is a plain plist dictionary (with bare UIDs inside,
        // which only Foundation's private type represents) takes the pure-Swift path.
        let validated = try KeyedArchiveValidator(
            allowedClassNames: KeyedArchiverBridge.foundationValueClassNames,
            limits: .init(),
            requiredTopKey: "root"
        ).validate(data)
        let built = try KeyedArchiverBridge.foundationValueRoot(of: validated, limits: .init())
        #expect((built != nil) == (path != "bpylist2/missing_uid_archive.plist"))
    }

    @Test func customClassesStillGoToFoundation() throws {
        let letter = SecureLetter(content: "hi", sent: Date(timeIntervalSinceReferenceDate: 1))
        let data = try KeyedArchiverBridge.archive(NSArray(array: [letter, "text"]))
        let names = KeyedArchiverBridge.foundationValueClassNames.union([NSStringFromClass(SecureLetter.self)])
        let validated = try KeyedArchiveValidator(allowedClassNames: names, limits: .init(), requiredTopKey: "root")
            .validate(data)
        #expect(try KeyedArchiverBridge.foundationValueRoot(of: validated, limits: .init()) == nil)
        let array = try KeyedArchiverBridge.unarchive(NSArray.self, from: data, allowedClasses: [SecureLetter.self])
        #expect((array[0] as? SecureLetter)?.content == "hi")
    }

    @Test(.needsKeyedArchiveFixtures) func badArchivesStillThrowTypedErrors() throws {
        func code(_ data: Data) -> ArchiveError.Code? {
            do {
                _ = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)
                return nil
            } catch let error as ArchiveError {
                return error.code
            } catch {
                return .foundation
            }
        }
        #expect(code(Data(KeyedArchiveDAGs.doubling(.array, levels: 64))) == .limitExceeded(.objectCount))
        #expect(
            code(try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/circularReference.plist"))
                == .unresolvedReference
        )
        let valid = Self.archive(Sample.nested.object)
        for length in stride(from: 0, to: valid.count, by: 7) {
            #expect(code(valid.prefix(length)) != nil, "prefix \(length)")
        }
        // $top.root is $null: nil, on both paths.
        let nullRoot = Data(
            """
            <?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict>\
            <key>$archiver</key><string>NSKeyedArchiver</string><key>$version</key><integer>100000</integer>\
            <key>$top</key><dict><key>root</key><dict><key>CF$UID</key><integer>0</integer></dict></dict>\
            <key>$objects</key><array><string>$null</string></array></dict></plist>
            """.utf8
        )
        for pureSwift in [true, false] {
            let error = try #require(throws: ArchiveError.self) {
                try KeyedArchiverBridge.unarchiveObject(
                    ofClasses: [],
                    from: nullRoot,
                    limits: .init(),
                    pureSwiftValues: pureSwift
                )
            }
            #expect(error.code == .valueNotFound)
        }
    }
}

/// A comparable description of a decoded object graph: every object's class, scalar values
/// and collection contents (sets and dictionaries in a stable order).
struct ObjectShape: Equatable, CustomStringConvertible {
    let description: String

    init(_ value: Any) { description = Self.describe(value as AnyObject) }

    private static func describe(_ object: AnyObject) -> String {
        let name = String(describing: type(of: object))
        switch object {
        case let dictionary as NSDictionary:
            let entries = dictionary.allKeys.map { key in
                "\(describe(key as AnyObject)): \(describe(dictionary.object(forKey: key)! as AnyObject))"
            }
            return "\(name){\(entries.sorted().joined(separator: ", "))}"
        case let array as NSArray:
            return
                "\(name)[\((0..<array.count).map { describe(array.object(at: $0) as AnyObject) }.joined(separator: ", "))]"
        case let set as NSOrderedSet:
            return
                "\(name)<\((0..<set.count).map { describe(set.object(at: $0) as AnyObject) }.joined(separator: ", "))>"
        case let set as NSSet:
            return "\(name){\(set.allObjects.map { describe($0 as AnyObject) }.sorted().joined(separator: ", "))}"
        case let number as NSNumber:
            return "\(name)(\(number) \(String(cString: number.objCType)))"
        case let url as NSURL:
            return
                "\(name)(\(url.relativeString) | \(url.baseURL.map { describe($0 as NSURL) } ?? "-") | \(url.absoluteString))"
        case let date as NSDate:
            return "\(name)(\(date.timeIntervalSinceReferenceDate))"
        case let data as NSData:
            return "\(name)(\(Data(referencing: data).base64EncodedString()))"
        case let string as NSString:
            return "\(name)(\(string))"
        case _ where name == "_NSKeyedArchiverUID":
            return name  // Foundation's private UID type, described by address
        default:
            return "\(name)(\(object))"
        }
    }
}
