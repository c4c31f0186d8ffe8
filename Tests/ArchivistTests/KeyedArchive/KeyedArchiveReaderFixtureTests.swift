import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// The pure-Swift reader against every fixture of `shared/fixtures/nskeyedarchiver`: the
/// legitimate ones unfolded and compared with everything they hold, the broken ones typed errors.
@Suite struct KeyedArchiveReaderFixtureTests {
    typealias T = KeyedArchiveTree

    /// Every fixture the reader reads, with the whole tree under `root`.
    static let readable: [(path: String, root: T)] = [
        (
            "swift-corelibs-foundation/NSKeyedUnarchiver-ComplexTest.plist",
            .dictionary([
                "array": .array([.nsNull, .string("hello"), .integer(34545), .dictionary(["key": .string("val")])]),
                "string": .string("hello"),
                "url": .url("https://www.swift.org/index.xml"),
                "uuid": .uuid("71DC068E-3420-45FF-919E-3A267D55EC22"),
            ])
        ),
        (
            "swift-corelibs-foundation/NSKeyedUnarchiver-ArrayTest.plist",
            .array([.string("baa"), .string("baa"), .string("black"), .string("sheep")])
        ),
        ("swift-corelibs-foundation/NSKeyedUnarchiver-URLTest.plist", .url("https://www.example.com/foo.xml")),
        ("swift-corelibs-foundation/NSKeyedUnarchiver-UUIDTest.plist", .uuid("0AD863BA-7584-40CF-8896-BD87B3280C34")),
        (
            "swift-corelibs-foundation/NSKeyedUnarchiver-NotificationTest.plist",
            .instance(
                "NSNotification",
                [
                    "NS.name": .string("notification-name"), "NS.object": .string("notification-object"),
                    "NS.userinfo": .dictionary(["notification-key": .string("notification-val")]),
                ]
            )
        ),
        (
            "swift-corelibs-foundation/NSKeyedUnarchiver-ConcreteValueTest.plist",
            .instance(
                "NSValue",
                [
                    "$0": .string("[3i]"),
                    "$1": .instance(
                        "_NSKeyedCoderOldStyleArray",
                        [
                            "$0": .integer(1), "$1": .integer(2), "$2": .integer(3), "NS.count": .integer(3),
                            "NS.size": .integer(4),
                            "NS.type": .integer(105),
                        ]
                    ),
                ]
            )
        ),
        (
            "swift-corelibs-foundation/NSAttributedString.archive",
            .instance(
                "NSAttributedString",
                [
                    "NSString": .string("0123456789"),
                    "NSAttributes": .array([
                        .dictionary([:]),
                        .dictionary(["Font": .string("Helvetica"), "Size": .integer(123)]),
                        .dictionary(["Font": .string("Times"), "Size": .integer(456)]),
                        .dictionary(["Font": .string("Times"), "Size": .integer(456)]),
                    ]),
                    "NSAttributeInfo": .data(Data([1, 0, 1, 1, 4, 2, 2, 1, 1, 3, 1, 0])),
                ]
            )
        ),
        ("swift-corelibs-foundation/NSSet-Numbers.archive", .set((1...5).map { .integer($0) })),
        ("swift-corelibs-foundation/NSOrderedSet-Numbers.archive", .orderedSet((1...5).map { .integer($0) })),
        (
            "swift-corelibs-foundation/NSMeasurement-Length.archive",
            .instance(
                "NSMeasurement",
                [
                    "NS.value": .real(45),
                    "NS.unit": .instance(
                        "NSUnitLength",
                        [
                            "NS.specifier": .integer(1287), "NS.symbol": .string("mi"),
                            "NS.converter": .instance(
                                "NSUnitConverterLinear",
                                ["NS.coefficient": .real(1609.34), "NS.constant": .real(0)]
                            ),
                        ]
                    ),
                ]
            )
        ),
        ("rust-nskeyedunarchiver/circularReference.plist", .array([.cycle(1)])),
        (
            "rust-nskeyedunarchiver/note.plist",
            .instance(
                "Note",
                [
                    "title": .string("Some cool title"), "author": .string("Michael Wright"), "published": .bool(true),
                    "date": .integer(2025), "array": .array([.string("Hello, World!"), .integer(42), .bool(true)]),
                ]
            )
        ),
        (
            "rust-nskeyedunarchiver/simpleDict.plist",
            .dictionary([
                "Array key": .array([.integer(1), .integer(2), .integer(3)]),
                "First key": .string("First value"), "Second key": .string("Second value"),
            ])
        ),
        (
            "php-nskeyedunarchiver/ArchivedData/reference.bin.plist",
            .dictionary([
                "copyOne": .url("https://example.com/foo/bar?a=b#hash"),
                "copyTwo": .url("https://example.com/foo/bar?a=b#hash"),
            ])
        ),
        (
            "php-nskeyedunarchiver/ArchivedData/nested.bin.plist",
            .dictionary([
                "level": .integer(0),
                "levelPath": .array([.string("zero")]),
                "levelZeroData": .dictionary([
                    "level": .integer(1),
                    "levelPath": .array([.string("zero"), .string("one")]),
                    "levelOneData": .dictionary([
                        "level": .integer(2),
                        "levelPath": .array([.string("zero"), .string("one"), .string("two")]),
                        "sampleUrl": .url("https://example.com/foo/bar?a=b#hash"),
                    ]),
                ]),
            ])
        ),
        (
            "php-nskeyedunarchiver/ArchivedData/miscTypes.bin.plist",
            .instance(
                "TestDummy",
                [
                    "url": .url("https://example.com/foo/bar?a=b#hash"),
                    "regex": .instance(
                        "NSRegularExpression",
                        ["NSOptions": .integer(0), "NSPattern": .string("(.*)")]
                    ),
                ]
            )
        ),
        (
            "php-nskeyedunarchiver/ArchivedData/collections.bin.plist",
            .instance(
                "TestDummy",
                [
                    "set": .set([.string("is"), .string("not"), .string("ordered"), .string("set")]),
                    "arrayOfStrings": .array([.string("foo"), .string("bar"), .string("baz")]),
                    "arrayOfInts": .array([.integer(1), .integer(2), .integer(3)]),
                    "dictionary": .dictionary(["baz": .string("aaa"), "foo": .string("bar")]),
                ]
            )
        ),
        (
            "bpylist2/circular_archive.plist",
            .instance("crap.Foo", ["title": .string("hello"), "recursive": .cycle(1)])
        ),
        (
            "bpylist2/recursive_archive.plist",
            .instance(
                "crap.Foo",
                [
                    "title": .string("hello"),
                    "recursive": .instance("crap.Foo", ["title": .string("yo"), "recursive": .null]),
                ]
            )
        ),
        (
            "bpylist2/complex_archive.plist",
            .instance(
                "crap.Foo",
                [
                    "title": .string("yo"), "count": .integer(42), "active": .bool(true),
                    "categories": .array([.string("banana"), .string("apple")]),
                    "metadata": .dictionary(["fruit": .string("kiwi"), "veg": .string("asparagus")]),
                ]
            )
        ),
        (
            "bpylist2/dataclass_archive.plist",
            .instance(
                "FooDataclass",
                [
                    "int_field": .integer(5), "str_field": .string("hello"), "float_field": .real(3.15),
                    "list_field": .array([.string("foo"), .string("bar"), .string("baz")]),
                ]
            )
        ),
        // No `$class`: a plain dictionary, as Foundation reads it; `$classy` is a class description.
        (
            "bpylist2/missing_uid_archive.plist",
            .plist([
                "title": .string("yo"),
                "$classy": .instance(
                    "$class",
                    ["chain": .array([.string("crap.Foo"), .string("NSCoder"), .string("NSObject")])]
                ),
            ])
        ),
    ]

    /// The broken fixtures: each throws this code.
    static let broken: [(path: String, code: ArchiveError.Code)] = [
        ("php-nskeyedunarchiver/BrokenData/invalidReference.bin.plist", .corrupt),
        ("php-nskeyedunarchiver/BrokenData/objectWithNoClassName.bin.plist", .corrupt),
        ("php-nskeyedunarchiver/BrokenData/objectWithNonStringClassName.bin.plist", .corrupt),
        ("bpylist2/invalid_uid_archive.plist", .corrupt),
        ("bpylist2/no_objects_archive.plist", .corrupt),
    ]

    @Test func everyFixtureIsCovered() throws {
        let covered = Set(Self.readable.map(\.path) + Self.broken.map(\.path) + ["fq/recentapps.sfl2"])
        #expect(covered == Set(KeyedArchiveFixtures.paths))
    }

    @Test(.needsKeyedArchiveFixtures, arguments: readable.map(\.path))
    func fixtureReadsCompletely(path: String) throws {
        let archive = try KeyedArchive(data: try KeyedArchiveFixtures.data(path))
        let expected = try #require(Self.readable.first { $0.path == path }?.root)
        #expect(archive.top.keys.sorted() == ["root"])
        #expect(try KeyedArchiveTree(archive, try #require(archive.root)) == expected)
    }

    @Test(.needsKeyedArchiveFixtures, arguments: broken.map { ($0.path, "\($0.code)") })
    func brokenFixtureThrowsTypedError(path: String, code: String) throws {
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchive(data: try KeyedArchiveFixtures.data(path))
        }
        #expect("\(error.code)" == code)
    }

    /// A real macOS SharedFileList file: ten recent apps with names, bookmarks and UUIDs.
    @Test(.needsKeyedArchiveFixtures) func recentAppsDecodesIntoCodableStructs() throws {
        struct RecentApps: Decodable {
            struct Item: Decodable {
                var Name: String
                var Bookmark: Data
                var uuid: UUID
                var visibility: Int
                var CustomItemProperties: [String: String]
            }
            var items: [Item]
            var properties: [String: Int]
        }
        let apps = try KeyedArchive.decode(RecentApps.self, from: try KeyedArchiveFixtures.data("fq/recentapps.sfl2"))
        #expect(
            apps.items.map(\.Name) == [
                "Terminal", "Spotify", "Calculator", "Preview", "Alacritty", "DB Browser for SQLite",
                "System Preferences",
                "Directory Utility", "Activity Monitor", "Safari",
            ]
        )
        #expect(apps.items.allSatisfy { $0.Bookmark.starts(with: Array("book".utf8)) && $0.visibility == 0 })
        #expect(apps.items[0].uuid == UUID(uuidString: "F1931D2B-CEEF-4EC5-A7EB-68D5F66B4619"))
        #expect(apps.properties == ["com.apple.LSSharedFileList.MaxAmount": 10])
    }

    /// References stay references: the shared URL is one object, the cycle is representable.
    @Test(.needsKeyedArchiveFixtures) func sharingAndCyclesAreKeptAsReferences() throws {
        let shared = try KeyedArchive(
            data: try KeyedArchiveFixtures.data("php-nskeyedunarchiver/ArchivedData/reference.bin.plist")
        )
        guard case .dictionary(_, let values) = shared[try #require(shared.root)] else {
            Issue.record("not a dictionary")
            return
        }
        #expect(values[0] == values[1])
        let cyclic = try KeyedArchive(
            data: try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/circularReference.plist")
        )
        let root = try #require(cyclic.root)
        #expect(cyclic[root] == .array([root]))
        #expect(cyclic.classChain(of: root) == ["NSMutableArray", "NSArray", "NSObject"])
    }
}
