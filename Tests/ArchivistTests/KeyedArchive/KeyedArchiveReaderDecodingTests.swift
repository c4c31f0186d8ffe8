import Foundation
import Testing

@testable import Archivist
@testable import ArchivistKeyedArchive

/// Swift types read from keyed archives by the pure-Swift reader: Codable structs, the
/// NSCoder-shaped API, archives Foundation wrote on Linux in the test itself, and the bounds.
@Suite struct KeyedArchiveReaderDecodingTests {
    struct Foo: Decodable, Equatable {
        var title: String
        var count: Int
        var active: Bool
        var categories: [String]
        var metadata: [String: String]
    }

    @Test(.needsKeyedArchiveFixtures) func codableStructDecodesFromFixture() throws {
        let foo = try KeyedArchive.decode(
            Foo.self,
            from: try KeyedArchiveFixtures.data("bpylist2/complex_archive.plist")
        )
        #expect(
            foo
                == Foo(
                    title: "yo",
                    count: 42,
                    active: true,
                    categories: ["banana", "apple"],
                    metadata: ["fruit": "kiwi", "veg": "asparagus"]
                )
        )
    }

    @Test(.needsKeyedArchiveFixtures) func foundationValuesDecodeAsSwiftValues() throws {
        struct Complex: Decodable {
            var string: String
            var url: URL
            var uuid: UUID
        }
        let data = try KeyedArchiveFixtures.data("swift-corelibs-foundation/NSKeyedUnarchiver-ComplexTest.plist")
        let complex = try KeyedArchive.decode(Complex.self, from: data)
        #expect(complex.string == "hello")
        #expect(complex.url.absoluteString == "https://www.swift.org/index.xml")
        #expect(complex.uuid == UUID(uuidString: "71DC068E-3420-45FF-919E-3A267D55EC22"))
    }

    final class Node: Decodable {
        let title: String
        let recursive: Node?
    }

    @Test(.needsKeyedArchiveFixtures) func optionalReferenceChainsDecode() throws {
        let node = try KeyedArchive.decode(
            Node.self,
            from: try KeyedArchiveFixtures.data("bpylist2/recursive_archive.plist")
        )
        #expect(node.title == "hello")
        #expect(node.recursive?.title == "yo")
        #expect(node.recursive?.recursive == nil)
    }

    @Test(.needsKeyedArchiveFixtures) func cycleIntoCodableThrowsDepthLimit() throws {
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchive.decode(Node.self, from: try KeyedArchiveFixtures.data("bpylist2/circular_archive.plist"))
        }
        #expect(error.code == .limitExceeded(.depth))
    }

    @Test(.needsKeyedArchiveFixtures) func mismatchNamesTheKeyPath() throws {
        struct Note: Decodable {
            var title: String
            var array: [String]
        }
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchive.decode(Note.self, from: try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/note.plist"))
        }
        #expect(error.code == .typeMismatch)
        #expect(error.codingPath == ["root", "array", "[1]"])
    }

    /// The NSCoder-shaped API on a class written by an Objective-C `encode(with:)`.
    struct Note: KeyedArchiveDecodable {
        var title: String
        var author: String?
        var published: Bool
        var date: Int64
        var missing: Int64
        var hasArray: Bool

        init(from unarchiver: KeyedArchiveUnarchiver) throws {
            title = try unarchiver.decodeRequiredObject(of: String.self, forKey: "title")
            author = try unarchiver.decodeObject(of: String.self, forKey: "author")
            published = try unarchiver.decodeBool(forKey: "published")
            date = try unarchiver.decodeInt64(forKey: "date")
            missing = try unarchiver.decodeInt64(forKey: "missing")
            hasArray = unarchiver.containsValue(forKey: "array")
        }
    }

    @Test(.needsKeyedArchiveFixtures) func coderShapedAPIReadsFields() throws {
        let archive = try KeyedArchive(data: try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/note.plist"))
        let note = try archive.unarchive(Note.self)
        #expect(note.title == "Some cool title")
        #expect(note.author == "Michael Wright")
        #expect(note.published && note.date == 2025 && note.missing == 0 && note.hasArray)
    }

    @Test(.needsKeyedArchiveFixtures) func coderShapedAPIReportsKeyPathAndType() throws {
        struct Strings: KeyedArchiveDecodable {
            init(from unarchiver: KeyedArchiveUnarchiver) throws {
                _ = try unarchiver.decodeObject(of: [String].self, forKey: "array")
            }
        }
        struct WrongScalar: KeyedArchiveDecodable {
            init(from unarchiver: KeyedArchiveUnarchiver) throws { _ = try unarchiver.decodeInt64(forKey: "title") }
        }
        let archive = try KeyedArchive(data: try KeyedArchiveFixtures.data("rust-nskeyedunarchiver/note.plist"))
        let elements = try #require(throws: ArchiveError.self) { try archive.unarchive(Strings.self) }
        #expect(elements.code == .typeMismatch)
        #expect(elements.codingPath == ["root", "array", "[1]"])
        let scalar = try #require(throws: ArchiveError.self) { try archive.unarchive(WrongScalar.self) }
        #expect(scalar.code == .typeMismatch)
        #expect(scalar.codingPath == ["root", "title"])
        #expect(scalar.typeName == "Note")
    }

    final class Foo2: KeyedArchiveDecodable {
        let title: String
        let recursive: Foo2?
        init(from unarchiver: KeyedArchiveUnarchiver) throws {
            title = try unarchiver.decodeRequiredObject(of: String.self, forKey: "title")
            recursive = try unarchiver.decodeObject(of: Foo2.self, forKey: "recursive")
        }
    }

    @Test(.needsKeyedArchiveFixtures) func coderShapedCycleThrowsUnresolvedReference() throws {
        let archive = try KeyedArchive(data: try KeyedArchiveFixtures.data("bpylist2/circular_archive.plist"))
        let error = try #require(throws: ArchiveError.self) { try archive.unarchive(Foo2.self) }
        #expect(error.code == .unresolvedReference)
        #expect(error.codingPath == ["root", "recursive"])
    }

    // MARK: Archives Foundation wrote here

    @Test func foundationArchiveOfEveryValueClassReads() throws {
        let date = Date(timeIntervalSinceReferenceDate: 123_456.5)
        let base = NSURL(string: "https://example.com/dir/")!
        let root = NSDictionary(dictionary: [
            "string": NSString(string: "héllo ✉︎"),
            "mutableString": NSMutableString(string: "mutable"),
            "int": NSNumber(value: -1_234_567_890_123),
            "double": NSNumber(value: 2.5),
            "date": date as NSDate,
            "data": NSData(data: Data([0, 1, 2, 255])),
            "array": NSArray(array: ["a", 1]),
            "mutableArray": NSMutableArray(array: ["m"]),
            "set": NSSet(array: ["x", "y"]),
            "orderedSet": NSOrderedSet(array: ["p", "q"]),
            "uuid": NSUUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            "url": NSURL(string: "file.txt", relativeTo: base as URL)!,
            "null": foundationNull,
            "nested": NSDictionary(dictionary: ["k": "v"]),
        ])
        let data = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: true)
        let archive = try KeyedArchive(data: data)
        let tree = try KeyedArchiveTree(archive, try #require(archive.root))
        #expect(
            tree
                == .dictionary([
                    "string": .string("héllo ✉︎"), "mutableString": .string("mutable"),
                    "int": .integer(-1_234_567_890_123),
                    "double": .real(2.5), "date": .date(date), "data": .data(Data([0, 1, 2, 255])),
                    "array": .array([.string("a"), .integer(1)]), "mutableArray": .array([.string("m")]),
                    "set": .set([.string("x"), .string("y")]), "orderedSet": .orderedSet([.string("p"), .string("q")]),
                    "uuid": .uuid("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
                    "url": .url("https://example.com/dir/file.txt"),
                    "null": .nsNull, "nested": .dictionary(["k": .string("v")]),
                ])
        )
    }

    @Test func codableStructDecodesFromFoundationsArchiveOfACustomClass() throws {
        struct Letter: Decodable {
            var content: String
            var sent: Date
            var reply: Reply?
            struct Reply: Decodable {
                var content: String
                var sent: Date
            }
        }
        let sent = Date(timeIntervalSinceReferenceDate: 700_000_000)
        let letter = SecureLetter(content: "hi", sent: sent, reply: SecureLetter(content: "re: hi", sent: sent + 60))
        let data = try NSKeyedArchiver.archivedData(withRootObject: letter, requiringSecureCoding: true)
        let decoded = try KeyedArchive.decode(Letter.self, from: data)
        #expect(decoded.content == "hi" && decoded.sent == sent)
        #expect(decoded.reply?.content == "re: hi" && decoded.reply?.sent == sent + 60)
        let archive = try KeyedArchive(data: data)
        #expect(archive.classChain(of: try #require(archive.root)).first == NSStringFromClass(SecureLetter.self))
    }

    // MARK: Bounds

    /// A value type copies a shared object once per path: 64 doubling levels would never finish.
    @Test func billionLaughsDecodeThrowsObjectCount() throws {
        struct Nest: Decodable, KeyedArchiveDecodable {
            var children: [Nest]
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                children = []
                while !container.isAtEnd { children.append(try container.decode(Nest.self)) }
            }
            init(from unarchiver: KeyedArchiveUnarchiver) throws {
                children = try unarchiver.decodeElements(of: Nest.self)
            }
        }
        var limits = ArchiveLimits()
        limits.maxObjectCount = 10_000
        let archive = try KeyedArchive(data: Data(KeyedArchiveDAGs.doubling(.array, levels: 64)), limits: limits)
        #expect(archive.objects.count < 100)
        let codable = try #require(throws: ArchiveError.self) { try archive.decode(Nest.self) }
        #expect(codable.code == .limitExceeded(.objectCount))
        let coder = try #require(throws: ArchiveError.self) { try archive.unarchive(Nest.self) }
        #expect(coder.code == .limitExceeded(.objectCount))
    }

    @Test func plistLevelSharingIsBoundedWhileReading() throws {
        var limits = ArchiveLimits()
        limits.maxObjectCount = 10_000
        let error = try #require(throws: ArchiveError.self) {
            try KeyedArchive(data: Data(KeyedArchiveDAGs.plistLevelDoubling(levels: 64)), limits: limits)
        }
        #expect(error.code == .limitExceeded(.objectCount))
    }

    @Test func chainsDeeperThanMaxDepthThrow() throws {
        struct Chain: KeyedArchiveDecodable {
            init(from unarchiver: KeyedArchiveUnarchiver) throws { _ = try unarchiver.decodeElements(of: Chain.self) }
        }
        let archive = try KeyedArchive(data: Data(KeyedArchiveChains.binaryChain(depth: 10_000)))
        let error = try #require(throws: ArchiveError.self) { try archive.unarchive(Chain.self) }
        #expect(error.code == .limitExceeded(.depth))
    }

    @Test func xmlArchivesRead() throws {
        let archive = try KeyedArchive(data: Data(KeyedArchiveChains.xmlChain(depth: 3).utf8))
        #expect(try KeyedArchiveTree(archive, try #require(archive.root)) == .array([.array([.array([])])]))
    }

    class Animal: Decodable {
        let name: String
        let legs: Int
    }

    final class Dog: Animal {
        let breed: String
        private(set) var good = false
        private enum CodingKeys: String, CodingKey { case breed, good }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            breed = try container.decode(String.self, forKey: .breed)
            // The superclass's container is a second container of this same decoder: it must
            // not disturb the first one, read again afterwards.
            try super.init(from: container.superDecoder())
            good = try container.decode(Bool.self, forKey: .good)
        }
    }

    /// Written as instances of a class (so the decoder reads instance shapes, not dictionaries).
    struct Pet: Encodable, KeyedArchiveClassNamed {
        static var keyedArchiveClassChain: [String] { ["Dog", "Animal", "NSObject"] }
        var name: String, legs: Int, breed: String, good: Bool
    }

    /// `superDecoder()` hands out the container's own decoder, so a class and its superclass
    /// read one instance through two containers of one decoder, interleaved.
    @Test func superclassContainerOfTheSameDecoderReadsInterleaved() throws {
        let pets = (0..<3).map { Pet(name: "pet \($0)", legs: 4 - $0, breed: "breed \($0)", good: $0 != 1) }
        let data = try KeyedArchiveWriter.encode(pets)
        let instances = try KeyedArchive(data: data).objects.filter { if case .instance = $0 { true } else { false } }
        #expect(instances.count == pets.count)
        let dogs = try KeyedArchive.decode([Dog].self, from: data)
        #expect(dogs.map(\.name) == ["pet 0", "pet 1", "pet 2"])
        #expect(dogs.map(\.legs) == [4, 3, 2])
        #expect(dogs.map(\.breed) == ["breed 0", "breed 1", "breed 2"])
        #expect(dogs.map(\.good) == [true, false, true])
    }
}
