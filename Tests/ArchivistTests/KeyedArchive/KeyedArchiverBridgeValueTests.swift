import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// Values that decode but crash corelibs as soon as the caller uses them — describes them, or
/// casts an enclosing collection to Swift: an `NSDictionary` keyed by an array or dictionary
/// (bridging it to `[AnyHashable: Any]` traps), keyed by a bare `$objects` reference (Foundation's
/// private UID type, which never finds itself again), or a date that is NaN. The validator refuses
/// them. Found by the libFuzzer target `Fuzz/KeyedArchiveFuzzer.swift`.
@Suite struct KeyedArchiverBridgeValueTests {
    /// The libFuzzer find: one byte of `fq/recentapps.sfl2` makes the fifth key of an item's
    /// dictionary refer to another item's dictionary instead of the string `uuid`.
    static func mutatedRecentApps() throws -> Data {
        var bytes = [UInt8](try KeyedArchiveFixtures.data("fq/recentapps.sfl2"))
        try #require(bytes.count > 5_056 && bytes[5_056] == 0x2C)
        bytes[5_056] = 0x24
        return Data(bytes)
    }

    /// The second libFuzzer find: one byte of `fq/recentapps.sfl2` makes `$objects[6]` (the key
    /// `visibility` of every item) a bare reference to object 16.
    static func recentAppsWithBareReference() throws -> Data {
        var bytes = [UInt8](try KeyedArchiveFixtures.data("fq/recentapps.sfl2"))
        try #require(bytes.count > 109 && bytes[109] == 0x34)
        bytes[109] = 0x32
        return Data(bytes)
    }

    /// A root NSArray whose only element is `element`, as a binary plist (XML has no NaN date).
    static func binaryArchive(element: PropertyListDocument.Node, elementClass: String? = nil) -> Data {
        typealias Node = PropertyListDocument.Node
        var nodes: [Node] = [
            .string("$null"), .string("$classname"), .string("NSArray"), .dictionary(keys: [1], values: [2]),  // 0-3
            .string("$class"), .string("NS.objects"), .uid(1), .uid(3),  // 4-7
            .array([7]), .dictionary(keys: [4, 5], values: [6, 8]),  // 8-9: the array
        ]
        var objects = [0, 3, 9]
        if let elementClass {
            // An instance of `elementClass` whose NS.time is `element`.
            nodes += [
                .string(elementClass), .dictionary(keys: [1], values: [10]), .uid(4), .string("NS.time"), element,
            ]
            nodes.append(.dictionary(keys: [4, 13], values: [12, 14]))
            objects += [15, 11]  // object 3 the instance, object 4 its class
        } else {
            nodes.append(element)
            objects.append(nodes.count - 1)
        }
        nodes += [
            .string("$archiver"), .string("NSKeyedArchiver"), .string("$version"), .integer(100_000),
            .string("$top"), .string("root"), .uid(2), .string("$objects"),
        ]
        let base = nodes.count - 8
        nodes.append(.dictionary(keys: [base + 5], values: [base + 6]))
        nodes.append(.array(objects))
        nodes.append(
            .dictionary(
                keys: [base, base + 2, base + 4, base + 7],
                values: [base + 1, base + 3, nodes.count - 2, nodes.count - 1]
            )
        )
        return Data(
            BinaryPropertyListWriter.write(PropertyListDocument(nodes: nodes, root: nodes.count - 1, format: .binary))
        )
    }

    /// A root NSArray (object 3) holding an NSDictionary (object 4) whose one key is object 5,
    /// written as `key`, and whose value is the string object 6.
    static func archive(key: String) -> Data {
        func uid(_ value: Int) -> String { "<dict><key>CF$UID</key><integer>\(value)</integer></dict>" }
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>$archiver</key><string>NSKeyedArchiver</string>\
            <key>$version</key><integer>100000</integer><key>$top</key><dict><key>root</key>\(uid(3))</dict>\
            <key>$objects</key><array><string>$null</string>\
            <dict><key>$classname</key><string>NSArray</string></dict>\
            <dict><key>$classname</key><string>NSDictionary</string></dict>\
            <dict><key>$class</key>\(uid(1))<key>NS.objects</key><array>\(uid(4))</array></dict>\
            <dict><key>$class</key>\(uid(2))<key>NS.keys</key><array>\(uid(5))</array>\
            <key>NS.objects</key><array>\(uid(6))</array></dict>\
            \(key)<string>value</string></array></dict></plist>
            """.utf8
        )
    }

    /// A root NSArray (object 3) holding an instance of `setClass` (object 4, its class object 7)
    /// whose one element is object 5, written as `element`; object 6 is the string "value".
    /// Objects 1 and 2 are the NSArray and NSDictionary classes, as in `archive(key:)`.
    static func archive(setElement element: String, setClass: String = "NSSet") -> Data {
        func uid(_ value: Int) -> String { "<dict><key>CF$UID</key><integer>\(value)</integer></dict>" }
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>$archiver</key><string>NSKeyedArchiver</string>\
            <key>$version</key><integer>100000</integer><key>$top</key><dict><key>root</key>\(uid(3))</dict>\
            <key>$objects</key><array><string>$null</string>\
            <dict><key>$classname</key><string>NSArray</string></dict>\
            <dict><key>$classname</key><string>NSDictionary</string></dict>\
            <dict><key>$class</key>\(uid(1))<key>NS.objects</key><array>\(uid(4))</array></dict>\
            <dict><key>$class</key>\(uid(7))<key>NS.objects</key><array>\(uid(5))</array></dict>\
            \(element)<string>value</string>\
            <dict><key>$classname</key><string>\(setClass)</string></dict></array></dict></plist>
            """.utf8
        )
    }

    static let collectionKeys: [(name: String, xml: String)] = [
        (
            "NSArray instance",
            "<dict><key>$class</key><dict><key>CF$UID</key><integer>1</integer></dict><key>NS.objects</key><array/></dict>"
        ),
        (
            "NSDictionary instance",
            "<dict><key>$class</key><dict><key>CF$UID</key><integer>2</integer></dict><key>NS.keys</key><array/><key>NS.objects</key><array/></dict>"
        ),
        ("plain plist array", "<array><string>a</string></array>"),
        ("plain plist dictionary", "<dict><key>a</key><string>b</string></dict>"),
        ("bare reference", "<dict><key>CF$UID</key><integer>6</integer></dict>"),
    ]

    @Test(.needsKeyedArchiveFixtures) func fuzzFoundBareReferenceIsRefused() throws {
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.validate(try Self.recentAppsWithBareReference())
        }
        #expect(error.code == .corrupt)
        #expect(error.codingPath == ["$objects", "[6]"], "\(error)")
    }

    @Test func nanDatesAreCorrupt() throws {
        for data in [
            Self.binaryArchive(element: .date(.nan)), Self.binaryArchive(element: .real(.nan), elementClass: "NSDate"),
        ] {
            let error = try #require(throws: ArchiveError.self) { try KeyedArchiverBridge.validate(data) }
            #expect(error.code == .corrupt, "\(error)")
        }
        let date = try KeyedArchiverBridge.unarchive(
            NSArray.self,
            from: Self.binaryArchive(element: .real(86_400), elementClass: "NSDate")
        )
        #expect(date.firstObject as? Date == Date(timeIntervalSinceReferenceDate: 86_400))
    }

    @Test(.needsKeyedArchiveFixtures) func fuzzFoundDictionaryKeyIsRefused() throws {
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.validate(try Self.mutatedRecentApps())
        }
        #expect(error.code == .corrupt)
        #expect(error.codingPath.last == "NS.keys", "\(error)")
    }

    @Test(arguments: collectionKeys.map(\.name))
    func collectionKeyIsCorrupt(_ name: String) throws {
        let xml = try #require(Self.collectionKeys.first { $0.name == name }?.xml)
        let error = try #require(throws: ArchiveError.self) { try KeyedArchiverBridge.validate(Self.archive(key: xml)) }
        #expect(error.code == .corrupt, "\(error)")
    }

    /// corelibs traps casting a set holding an array or dictionary to `Set<AnyHashable>` (an
    /// array is not `Hashable`), so such a set is refused like such a dictionary key.
    @Test(arguments: collectionKeys.map(\.name), ["NSSet", "NSMutableSet"])
    func collectionSetElementIsCorrupt(_ name: String, setClass: String) throws {
        let xml = try #require(Self.collectionKeys.first { $0.name == name }?.xml)
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchiverBridge.validate(Self.archive(setElement: xml, setClass: setClass))
        }
        #expect(error.code == .corrupt, "\(error)")
        #expect(name == "bare reference" || error.codingPath.last == "NS.objects", "\(error)")
    }

    @Test func stringSetElementDecodesAndBridges() throws {
        let array = try KeyedArchiverBridge.unarchive(
            NSArray.self,
            from: Self.archive(setElement: "<string>key</string>")
        )
        let set = try #require(array.firstObject as? Set<AnyHashable>)
        #expect(set == ["key"])
    }

    @Test func stringKeyDecodesAndBridges() throws {
        let array = try KeyedArchiverBridge.unarchive(NSArray.self, from: Self.archive(key: "<string>key</string>"))
        let bridged = try #require(array as? [[String: String]])
        #expect(bridged == [["key": "value"]])
    }

    // An exit test (a child process): macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// Through Foundation, in a child process, using the value as a caller would.
    @Test(.needsKeyedArchiveFixtures) func refusedKeysNeverReachFoundation() async throws {
        _ = try #require(KeyedArchiveFixtures.directory(), Comment(rawValue: KeyedArchiveFixtures.missingMessage))
        await #expect(processExitsWith: .success) {
            let inputs =
                KeyedArchiverBridgeValueTests.collectionKeys.map {
                    KeyedArchiverBridgeValueTests.archive(key: $0.xml)
                }
                + KeyedArchiverBridgeValueTests.collectionKeys.map {
                    KeyedArchiverBridgeValueTests.archive(setElement: $0.xml)
                } + [
                    try KeyedArchiverBridgeValueTests.mutatedRecentApps(),
                    try KeyedArchiverBridgeValueTests.recentAppsWithBareReference(),
                    KeyedArchiverBridgeValueTests.binaryArchive(element: .date(.nan)),
                    KeyedArchiverBridgeValueTests.binaryArchive(element: .real(.nan), elementClass: "NSDate"),
                ]
            for data in inputs {
                do {
                    let value = try KeyedArchiverBridge.unarchiveObject(ofClasses: [], from: data)
                    _ = String(describing: value)
                    _ = (value as? NSArray)?.map { $0 as? Set<AnyHashable> }
                    exit(EXIT_FAILURE)  // every one of them must be refused
                } catch let error as ArchiveError where error.code == .corrupt {
                    continue
                } catch {
                    exit(EXIT_FAILURE)
                }
            }
        }
    }
    #endif
}
