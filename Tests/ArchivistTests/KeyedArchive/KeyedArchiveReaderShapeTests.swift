import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// Instances of one class share their field names (a shape) whatever order each was written
/// in, and the `Decoder` looks each key up where the previous instance had it first: these
/// check that neither changes what is read.
@Suite struct KeyedArchiveReaderShapeTests {
    /// An XML archive whose root is an NSArray (object 1 its class) of instances of class
    /// `Pair` (object 2), each written with `fields` (key and plist value text) in that order.
    static func archive(_ instances: [[(String, String)]]) -> Data {
        let uid = { (value: Int) in "<dict><key>CF$UID</key><integer>\(value)</integer></dict>" }
        let first = 4
        let elements = instances.indices.map { uid(first + $0) }.joined()
        let objects = instances.map { fields in
            "<dict><key>$class</key>\(uid(2))" + fields.map { "<key>\($0.0)</key>\($0.1)" }.joined() + "</dict>"
        }.joined()
        return Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>$archiver</key><string>NSKeyedArchiver</string>\
            <key>$version</key><integer>100000</integer><key>$top</key><dict><key>root</key>\(uid(3))</dict>\
            <key>$objects</key><array><string>$null</string>\
            <dict><key>$classname</key><string>NSArray</string></dict>\
            <dict><key>$classname</key><string>Pair</string></dict>\
            <dict><key>$class</key>\(uid(1))<key>NS.objects</key><array>\(elements)</array></dict>\
            \(objects)</array></dict></plist>
            """.utf8
        )
    }

    struct Pair: Decodable, Equatable {
        var name: Int
        var count: Int
        var extra: Int?
    }

    static func int(_ value: Int) -> String { "<integer>\(value)</integer>" }

    /// Keys in a different order in each instance, a different key set, and back: every
    /// instance reads its own values, through `fields`, `field(forKey:)` and `decode`.
    @Test func keyOrderAndKeySetVaryPerInstance() throws {
        let instances: [[(String, String)]] = [
            [("name", Self.int(1)), ("count", Self.int(10))],
            [("count", Self.int(20)), ("name", Self.int(2))],
            [("extra", Self.int(300)), ("count", Self.int(30)), ("name", Self.int(3))],
            [("name", Self.int(4)), ("count", Self.int(40))],
            [("count", Self.int(50)), ("name", Self.int(5)), ("extra", Self.int(500))],
            [("count", Self.int(60)), ("name", Self.int(6))],
        ]
        let archive = try KeyedArchive(data: Self.archive(instances))
        for (offset, fields) in instances.enumerated() {
            guard case .instance(let instance) = archive[KeyedArchiveReference(4 + offset)] else {
                Issue.record("object \(4 + offset) is not an instance")
                continue
            }
            #expect(instance.fields.count == fields.count)
            for (key, value) in fields {
                let expected = KeyedArchiveField.integer(Int64(value.dropFirst(9).dropLast(10))!)
                #expect(instance.field(forKey: key) == expected)
                #expect(instance.fields[key] == expected)
            }
            #expect(instance.field(forKey: "$class") == nil)
            #expect(instance.field(forKey: "nam") == nil)
        }
        #expect(
            try archive.decode([Pair].self) == [
                Pair(name: 1, count: 10), Pair(name: 2, count: 20), Pair(name: 3, count: 30, extra: 300),
                Pair(name: 4, count: 40), Pair(name: 5, count: 50, extra: 500), Pair(name: 6, count: 60),
            ]
        )
    }

    /// A key written twice is refused in any instance, also after instances of the same class
    /// whose shape had that key once.
    @Test func repeatedKeyAfterGoodInstancesIsCorrupt() throws {
        let data = Self.archive([
            [("name", Self.int(1)), ("count", Self.int(10))],
            [("name", Self.int(2)), ("name", Self.int(20))],
        ])
        #expect {
            _ = try KeyedArchive(data: data)
        } throws: { error in
            guard let error = error as? ArchiveError else { return false }
            return error.code == .corrupt && error.codingPath == ["$objects", "[5]", "name"]
        }
    }

    /// A `Decodable` that reads different keys per instance (so the lookups predicted from the
    /// previous instance miss) reads the same as the field table says.
    @Test func conditionalKeysDecodeLikeTheTable() throws {
        struct Shape: Decodable, Equatable {
            var kind: Int
            var size: Int
            init(kind: Int, size: Int) {
                self.kind = kind
                self.size = size
            }
            enum CodingKeys: String, CodingKey { case kind, width, radius }
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                kind = try container.decode(Int.self, forKey: .kind)
                size = try container.decode(Int.self, forKey: kind == 0 ? .width : .radius)
            }
        }
        let data = Self.archive([
            [("radius", Self.int(5)), ("kind", Self.int(1))],
            [("kind", Self.int(0)), ("width", Self.int(7)), ("radius", Self.int(99))],
            [("width", Self.int(8)), ("kind", Self.int(0))],
            [("kind", Self.int(1)), ("radius", Self.int(9))],
        ])
        #expect(
            try KeyedArchive(data: data).decode([Shape].self) == [
                Shape(kind: 1, size: 5), Shape(kind: 0, size: 7), Shape(kind: 0, size: 8), Shape(kind: 1, size: 9),
            ]
        )
    }

    /// Key lookups keep `String` equality: a stored name that is canonically equivalent to
    /// the ASCII key asked for (U+212A KELVIN SIGN is `K`) is found, as `==` finds it.
    @Test func canonicallyEquivalentKeyIsFound() throws {
        let archive = try KeyedArchive(data: Self.archive([[("\u{212A}elvin", Self.int(1)), ("name", Self.int(2))]]))
        guard case .instance(let instance) = archive[KeyedArchiveReference(4)] else {
            Issue.record("object 4 is not an instance")
            return
        }
        #expect(instance.field(forKey: "Kelvin") == .integer(1))
        #expect(instance.field(forKey: "name") == .integer(2))
    }

    /// Packed names compare like their strings for short ASCII, and refuse the rest.
    @Test func packedNames() {
        #expect(PackedName("isAlertEnabled") == PackedName("isAlertEnabled"))
        #expect(PackedName("sender") != PackedName("isRead"))
        #expect(PackedName("a") != PackedName("a\u{0}"))
        #expect(PackedName("") == PackedName(""))
        #expect(PackedName("sixteen-bytes-ok") != nil)
        #expect(PackedName("seventeen-bytes-x") == nil)
        #expect(PackedName("caf\u{e9}") == nil)
    }

    /// Our writer's binary archives store each key string once, so instances match their
    /// shape by key node: a round trip of many instances reads back what was written.
    @Test func sharedKeyNodesRoundTrip() throws {
        struct Row: Codable, Equatable {
            var id: Int
            var label: String
            var flag: Bool
        }
        let rows = (0..<50).map { Row(id: $0, label: "row \($0)", flag: $0 % 3 == 0) }
        #expect(try KeyedArchive.decode([Row].self, from: try KeyedArchiveWriter.encode(rows)) == rows)
    }
}
