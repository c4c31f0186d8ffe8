// Models the native-archive fuzzer decodes its inputs as, one for each decoder path: keyed
// records written by hand (every field type, a version-driven migration), a graph with shared
// instances and deferred back-references, a cycle, polymorphism through `allowedTypes`, and
// Codable values (enums with payloads, nested optionals, a graph through `@BackReference`).
//
// Compiled into the same module as the library sources by `Fuzz/run.sh`, so no `import Archivist`.

import Foundation

/// Every field type of the hand-written API, and a migration keyed on `archive.version`.
struct FuzzRecord: Archivable {
    static var archiveVersion: Int { 2 }

    var flag = true
    var small: Int8 = -8
    var medium: Int32 = .max
    var large: Int64 = .min
    var unsigned: UInt64 = .max
    var ratio: Float = 0.5
    var value = Double.pi
    var text = "héllo, 世界"
    var blob = Data([0, 1, 2, 255])
    var when = Date(timeIntervalSinceReferenceDate: 1_000)
    var link = URL(string: "https://example.com/a?b=c#d")
    var id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()
    var maybe: String? = nil
    var numbers = [1, 2, 3]
    var tags: Set<String> = ["a", "b"]
    var table = [1: "one", 2: "two"]
    var nested: [[Double]] = [[1.5], [], [2.5]]
    var renamedField = "from version 2"

    init() {}

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(flag, forKey: "flag")
        try archive.encode(small, forKey: "small")
        try archive.encode(medium, forKey: "medium")
        try archive.encode(large, forKey: "large")
        try archive.encode(unsigned, forKey: "unsigned")
        try archive.encode(ratio, forKey: "ratio")
        try archive.encode(value, forKey: "value")
        try archive.encode(text, forKey: "text")
        try archive.encode(blob, forKey: "blob")
        try archive.encode(when, forKey: "when")
        try archive.encode(link, forKey: "link")
        try archive.encode(id, forKey: "id")
        try archive.encode(maybe, forKey: "maybe")
        try archive.encode(numbers, forKey: "numbers")
        try archive.encode(tags, forKey: "tags")
        try archive.encode(table, forKey: "table")
        try archive.encode(nested, forKey: "nested")
        try archive.encode(renamedField, forKey: "renamedField")
    }

    init(from archive: ArchiveDecoder) throws {
        flag = try archive.decode(Bool.self, forKey: "flag")
        small = try archive.decode(Int8.self, forKey: "small")
        medium = try archive.decode(Int32.self, forKey: "medium")
        large = try archive.decode(Int64.self, forKey: "large")
        unsigned = try archive.decode(UInt64.self, forKey: "unsigned")
        ratio = try archive.decode(Float.self, forKey: "ratio")
        value = try archive.decode(Double.self, forKey: "value")
        text = try archive.decode(String.self, forKey: "text")
        blob = try archive.decode(Data.self, forKey: "blob")
        when = try archive.decode(Date.self, forKey: "when")
        link = try archive.decodeIfPresent(URL.self, forKey: "link")
        id = try archive.decode(UUID.self, forKey: "id")
        maybe = try archive.decodeIfPresent(String.self, forKey: "maybe")
        numbers = try archive.decode([Int].self, forKey: "numbers")
        tags = try archive.decode(Set<String>.self, forKey: "tags")
        table = try archive.decode([Int: String].self, forKey: "table")
        nested = try archive.decode([[Double]].self, forKey: "nested")
        // Version 1 called the field "oldName".
        renamedField =
            try archive.version >= 2
            ? archive.decode(String.self, forKey: "renamedField")
            : archive.decode(String.self, forKey: "oldName")
    }
}

/// A user owning letters that point back at it (a deferred reference), as in the seed's
/// letters graph; `pinned` shares one of the letters.
final class FuzzUser: Archivable {
    var name: String
    var letters: [FuzzLetter] = []
    var pinned: FuzzLetter?

    init(name: String) { self.name = name }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(name, forKey: "name")
        try archive.encode(letters, forKey: "letters")
        try archive.encode(pinned, forKey: "pinned")
    }

    init(from archive: ArchiveDecoder) throws {
        name = try archive.decode(String.self, forKey: "name")
        letters = try archive.decode([FuzzLetter].self, forKey: "letters")
        pinned = try archive.decodeIfPresent(FuzzLetter.self, forKey: "pinned")
    }
}

final class FuzzLetter: Archivable {
    var text: String
    var read: Bool
    weak var user: FuzzUser?

    init(text: String, read: Bool) {
        self.text = text
        self.read = read
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(text, forKey: "text")
        try archive.encode(read, forKey: "read")
        try archive.encodeConditional(user, forKey: "user")
    }

    init(from archive: ArchiveDecoder) throws {
        text = try archive.decode(String.self, forKey: "text")
        read = try archive.decode(Bool.self, forKey: "read")
        try archive.decodeReference(FuzzUser.self, forKey: "user") { [unowned self] in self.user = $0 }
    }
}

/// A node whose `next` may close a cycle.
final class FuzzNode: Archivable {
    var name: String
    var next: FuzzNode?

    init(_ name: String) { self.name = name }

    /// Clears every `next` along the chain, so a cycle does not keep its nodes alive.
    func breakCycle() {
        var current: FuzzNode? = self
        while let node = current {
            current = node.next
            node.next = nil
        }
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(name, forKey: "name")
        try archive.encode(next, forKey: "next")
    }

    init(from archive: ArchiveDecoder) throws {
        name = try archive.decode(String.self, forKey: "name")
        try archive.decodeReference(FuzzNode.self, forKey: "next") { [unowned self] in self.next = $0 }
    }
}

/// A base class decoded through a subclass the options allow.
class FuzzAnimal: Archivable {
    var name: String
    init(name: String) { self.name = name }
    class var archiveTypeName: String { "FuzzAnimal" }
    func encode(to archive: ArchiveEncoder) throws { try archive.encode(name, forKey: "name") }
    required init(from archive: ArchiveDecoder) throws { name = try archive.decode(String.self, forKey: "name") }
}

final class FuzzDog: FuzzAnimal {
    var goodBoy = true
    init(name: String, goodBoy: Bool) {
        self.goodBoy = goodBoy
        super.init(name: name)
    }
    override class var archiveTypeName: String { "FuzzDog" }
    override func encode(to archive: ArchiveEncoder) throws {
        try super.encode(to: archive)
        try archive.encode(goodBoy, forKey: "goodBoy")
    }
    required init(from archive: ArchiveDecoder) throws {
        goodBoy = try archive.decode(Bool.self, forKey: "goodBoy")
        try super.init(from: archive)
    }
}

/// Codable: keyed and unkeyed containers, enums with payloads, optionals, nested collections.
struct FuzzCodable: Codable, Archivable {
    enum Shape: Codable {
        case circle(radius: Double)
        case polygon([Double], closed: Bool)
        case empty
    }
    enum Color: String, Codable { case red, green }

    var flag = false
    var small: Int8 = -3
    var big: UInt64 = .max
    var text = "Codable ✓"
    var blob = Data(repeating: 7, count: 20)
    var when = Date(timeIntervalSince1970: 1_000_000)
    var link = URL(string: "file:///tmp/x")
    var id = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    var missing: Int? = nil
    var shapes: [Shape] = [.circle(radius: 2), .polygon([1, 2, 3], closed: true), .empty]
    var color = Color.green
    var map = ["a": [1, 2], "b": []]
    var grid: [[String?]] = [["x", nil], []]
}

/// A Codable graph: notes point back at their mailbox through `@BackReference`.
final class FuzzMailbox: Codable, Archivable {
    var owner: String
    var notes: [FuzzNote]
    init(owner: String, notes: [FuzzNote]) {
        self.owner = owner
        self.notes = notes
    }
}

final class FuzzNote: Codable, Archivable {
    var text: String
    @BackReference var mailbox: FuzzMailbox?
    init(text: String) { self.text = text }
}

/// One sample archive of each model, the fuzzer's seeds; `decodeAll` tries an input as each.
enum ArchiveFuzzSamples {
    static func all() throws -> [(name: String, data: Data)] {
        let user = FuzzUser(name: "alice")
        for index in 0..<3 {
            let letter = FuzzLetter(text: "letter \(index) 💌", read: index % 2 == 0)
            letter.user = user
            user.letters.append(letter)
        }
        user.pinned = user.letters.first
        let loop = FuzzNode("a")
        loop.next = FuzzNode("b")
        loop.next?.next = loop
        let dog = FuzzDog(name: "Rex", goodBoy: true)
        let mailbox = FuzzMailbox(owner: "bob", notes: [FuzzNote(text: "hi"), FuzzNote(text: "there")])
        for note in mailbox.notes { note.mailbox = mailbox }
        let samples: [(String, Data)] = [
            ("record", try Archive.encode(FuzzRecord())),
            ("users", try Archive.encode([user])),
            ("loop", try Archive.encode(loop)),
            ("animals", try Archive.encode([FuzzAnimal(name: "cat"), dog, dog])),
            ("codable", try Archive.encode(FuzzCodable())),
            ("mailbox", try Archive.encode(mailbox)),
            ("strings", try Archive.encode(["a", "bb", "ccc", ""])),
            ("dictionary", try Archive.encode(["one": [1.5, -2], "none": [], "big": [1e300]])),
            ("optionals", try Archive.encode([1, nil, -3] as [Int?])),
        ]
        loop.breakCycle()
        user.letters.removeAll()
        return samples
    }

    /// Decodes `data` as every model; a decoded value is encoded again (the encoder must
    /// accept whatever the decoder produced). Only `ArchiveError` may come out.
    static func decodeAll(_ data: Data) {
        let options = ArchiveOptions(allowedTypes: [FuzzDog.self])
        attempt { try Archive.encode(Archive.decode(FuzzRecord.self, from: data)) }
        attempt { try Archive.encode(Archive.decode([FuzzUser].self, from: data)) }
        attempt {
            let node = try Archive.decode(FuzzNode.self, from: data)
            defer { node.breakCycle() }  // a decoded cycle of strong references would leak
            return try Archive.encode(node)
        }
        attempt { try Archive.encode(Archive.decode([FuzzAnimal].self, from: data, options: options)) }
        attempt { try Archive.encode(Archive.decode(FuzzCodable.self, from: data)) }
        attempt { try Archive.encode(Archive.decode(FuzzMailbox.self, from: data)) }
        attempt { try Archive.encode(Archive.decode([String].self, from: data)) }
        attempt { try Archive.encode(Archive.decode([String: [Double]].self, from: data)) }
        attempt { try Archive.encode(Archive.decode([Int?].self, from: data)) }
    }

    private static func attempt(_ body: () throws -> Data) {
        do {
            _ = try body()
        } catch is ArchiveError {
            // The contract: a typed error.
        } catch {
            fatalError("an error that is not an ArchiveError escaped: \(error)")
        }
    }
}
