import Foundation
import Testing

@testable import Archivist

/// A coding key made from any string (the parts of ``SuperMix`` are keyed `p0`, `p1`, …).
private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A small Codable model, written whole through a super encoder's single-value container.
private struct Leaf: Codable, Equatable {
    var name: String
    var numbers: [Int]
}

/// A class shared between several models, to check a super encoder keeps object identity.
private final class Shared: Codable, Archivable {
    var label: String
    init(label: String) { self.label = label }
}

/// What a super encoder holds, and how it is written into it.
private enum SlotValue: Equatable {
    case string(String)
    /// A string written by `String.encode(to:)` straight onto the super encoder.
    case stringDirect(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case data(Data)
    case null
    /// The super encoder opens a keyed container.
    case keyed(Int, String)
    /// The super encoder opens an unkeyed container.
    case unkeyed([String])
    /// A model written through the single-value container.
    case leaf(Leaf)

    static func == (a: SlotValue, b: SlotValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)), (.stringDirect(let x), .stringDirect(let y)): x == y
        case (.int(let x), .int(let y)): x == y
        case (.double(let x), .double(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.data(let x), .data(let y)): x == y
        case (.null, .null): true
        case (.keyed(let x, let s), .keyed(let y, let t)): x == y && s == t
        case (.unkeyed(let x), .unkeyed(let y)): x == y
        case (.leaf(let x), .leaf(let y)): x == y
        default: false
        }
    }

    /// The code ``SuperMix`` writes ahead of its parts, so that decoding knows what to read.
    var code: String {
        switch self {
        case .string: "string"
        case .stringDirect: "stringDirect"
        case .int: "int"
        case .double: "double"
        case .bool: "bool"
        case .data: "data"
        case .null: "null"
        case .keyed: "keyed"
        case .unkeyed: "unkeyed"
        case .leaf: "leaf"
        }
    }

    /// One value of every kind (strings short, long and non-ASCII).
    static let samples: [SlotValue] = [
        .string(""), .string("some string"), .string(String(repeating: "long string ", count: 40)),
        .string("Grüße, 世界 🌍"), .stringDirect("x"), .stringDirect("a direct string of some length"),
        .int(0), .int(-1), .int(.max), .double(0.1), .double(-1e300), .bool(true), .bool(false),
        .data(Data()), .data(Data((0..<300).map { UInt8($0 & 0xFF) })), .null,
        .keyed(42, "in a keyed super container"), .unkeyed(["a", "bb", "Grüße"]), .unkeyed([]),
        .leaf(Leaf(name: "leaf", numbers: [1, 2, 3])),
    ]

    func write(to encoder: any Encoder) throws {
        switch self {
        case .string(let s):
            var c = encoder.singleValueContainer()
            try c.encode(s)
        case .stringDirect(let s): try s.encode(to: encoder)
        case .int(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .double(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .bool(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .data(let v):
            var c = encoder.singleValueContainer()
            try c.encode(v)
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .keyed(let n, let s):
            var c = encoder.container(keyedBy: AnyKey.self)
            try c.encode(n, forKey: AnyKey("n"))
            try c.encode(s, forKey: AnyKey("s"))
        case .unkeyed(let values):
            var c = encoder.unkeyedContainer()
            for v in values { try c.encode(v) }
        case .leaf(let leaf):
            var c = encoder.singleValueContainer()
            try c.encode(leaf)
        }
    }

    static func read(_ code: String, from decoder: any Decoder) throws -> SlotValue {
        switch code {
        case "string": return .string(try decoder.singleValueContainer().decode(String.self))
        case "stringDirect": return .stringDirect(try String(from: decoder))
        case "int": return .int(try decoder.singleValueContainer().decode(Int.self))
        case "double": return .double(try decoder.singleValueContainer().decode(Double.self))
        case "bool": return .bool(try decoder.singleValueContainer().decode(Bool.self))
        case "data": return .data(try decoder.singleValueContainer().decode(Data.self))
        case "null":
            guard try decoder.singleValueContainer().decodeNil() else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "expected nil"))
            }
            return .null
        case "keyed":
            let c = try decoder.container(keyedBy: AnyKey.self)
            // Read in the other order than written.
            let s = try c.decode(String.self, forKey: AnyKey("s"))
            return .keyed(try c.decode(Int.self, forKey: AnyKey("n")), s)
        case "unkeyed":
            var c = try decoder.unkeyedContainer()
            var values: [String] = []
            while !c.isAtEnd { values.append(try c.decode(String.self)) }
            return .unkeyed(values)
        case "leaf": return .leaf(try decoder.singleValueContainer().decode(Leaf.self))
        default: throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "unknown code \(code)"))
        }
    }
}

/// One part of a ``SuperMix``.
private enum Part: Equatable {
    /// A plain field or element.
    case plain(String)
    /// A nested keyed container.
    case nestedKeyed(Int, String)
    /// A nested unkeyed container.
    case nestedUnkeyed([Int])
    /// A super encoder: `superEncoder()` when `forKey` is false (or in an unkeyed container),
    /// else `superEncoder(forKey:)`.
    case superValue(SlotValue, forKey: Bool)

    var code: String {
        switch self {
        case .plain: "plain"
        case .nestedKeyed: "nestedKeyed"
        case .nestedUnkeyed: "nestedUnkeyed"
        case .superValue(let v, let forKey): "super\(forKey ? "ForKey" : ""):\(v.code)"
        }
    }
}

/// A model whose `encode(to:)` writes its parts, in order, into a keyed container (key `p<i>`)
/// or an unkeyed one, after a list of the parts' kinds; `init(from:)` reads them back, keyed
/// parts in reverse order when `readReversed`.
private struct SuperMix: Codable, Archivable, Equatable {
    var parts: [Part]
    var unkeyed = false
    var readReversed = false

    private enum Header: String, CodingKey { case shape, unkeyed, reversed }

    func encode(to encoder: any Encoder) throws {
        if unkeyed {
            var c = encoder.unkeyedContainer()
            try c.encode(true)
            try c.encode(parts.map(\.code))
            for part in parts {
                switch part {
                case .plain(let s): try c.encode(s)
                case .nestedKeyed(let n, let s):
                    var k = c.nestedContainer(keyedBy: AnyKey.self)
                    try k.encode(n, forKey: AnyKey("n"))
                    try k.encode(s, forKey: AnyKey("s"))
                case .nestedUnkeyed(let values):
                    var u = c.nestedUnkeyedContainer()
                    for v in values { try u.encode(v) }
                case .superValue(let v, _): try v.write(to: c.superEncoder())
                }
            }
            return
        }
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.encode(parts.map(\.code), forKey: AnyKey("shape"))
        try c.encode(readReversed, forKey: AnyKey("reversed"))
        for (i, part) in parts.enumerated() {
            let key = AnyKey("p\(i)")
            switch part {
            case .plain(let s): try c.encode(s, forKey: key)
            case .nestedKeyed(let n, let s):
                var k = c.nestedContainer(keyedBy: AnyKey.self, forKey: key)
                try k.encode(n, forKey: AnyKey("n"))
                try k.encode(s, forKey: AnyKey("s"))
            case .nestedUnkeyed(let values):
                var u = c.nestedUnkeyedContainer(forKey: key)
                for v in values { try u.encode(v) }
            case .superValue(let v, let forKey):
                try v.write(to: forKey ? c.superEncoder(forKey: key) : c.superEncoder())
            }
        }
    }

    init(parts: [Part], unkeyed: Bool = false, readReversed: Bool = false) {
        self.parts = parts
        self.unkeyed = unkeyed
        self.readReversed = readReversed
    }

    init(from decoder: any Decoder) throws {
        // Keyed first: an archive's failed `container(keyedBy:)` leaves the value unread, where
        // a failed `unkeyedContainer()` would count as the value's single read.
        guard let c = try? decoder.container(keyedBy: AnyKey.self) else {
            var c = try decoder.unkeyedContainer()
            unkeyed = try c.decode(Bool.self)
            let shape = try c.decode([String].self)
            parts = []
            for code in shape {
                switch code {
                case "plain": parts.append(.plain(try c.decode(String.self)))
                case "nestedKeyed":
                    let k = try c.nestedContainer(keyedBy: AnyKey.self)
                    let s = try k.decode(String.self, forKey: AnyKey("s"))
                    parts.append(.nestedKeyed(try k.decode(Int.self, forKey: AnyKey("n")), s))
                case "nestedUnkeyed":
                    var u = try c.nestedUnkeyedContainer()
                    var values: [Int] = []
                    while !u.isAtEnd { values.append(try u.decode(Int.self)) }
                    parts.append(.nestedUnkeyed(values))
                default:
                    let pieces = code.split(separator: ":").map(String.init)
                    let value = try SlotValue.read(pieces[1], from: c.superDecoder())
                    parts.append(.superValue(value, forKey: pieces[0] == "superForKey"))
                }
            }
            return
        }
        let shape = try c.decode([String].self, forKey: AnyKey("shape"))
        readReversed = try c.decode(Bool.self, forKey: AnyKey("reversed"))
        var read = [Part?](repeating: nil, count: shape.count)
        let order = readReversed ? Array(shape.indices.reversed()) : Array(shape.indices)
        for i in order {
            let key = AnyKey("p\(i)")
            switch shape[i] {
            case "plain": read[i] = .plain(try c.decode(String.self, forKey: key))
            case "nestedKeyed":
                let k = try c.nestedContainer(keyedBy: AnyKey.self, forKey: key)
                let s = try k.decode(String.self, forKey: AnyKey("s"))
                read[i] = .nestedKeyed(try k.decode(Int.self, forKey: AnyKey("n")), s)
            case "nestedUnkeyed":
                var u = try c.nestedUnkeyedContainer(forKey: key)
                var values: [Int] = []
                while !u.isAtEnd { values.append(try u.decode(Int.self)) }
                read[i] = .nestedUnkeyed(values)
            default:
                let pieces = shape[i].split(separator: ":").map(String.init)
                let forKey = pieces[0] == "superForKey"
                let decoder = try forKey ? c.superDecoder(forKey: key) : c.superDecoder()
                read[i] = .superValue(try SlotValue.read(pieces[1], from: decoder), forKey: forKey)
            }
        }
        parts = read.map { $0! }
    }
}

/// A graph node: models with super encoders that share an object through one.
private final class SuperNode: Codable, Archivable {
    var mix: SuperMix
    var shared: Shared
    var next: SuperNode?

    init(mix: SuperMix, shared: Shared, next: SuperNode? = nil) {
        self.mix = mix
        self.shared = shared
        self.next = next
    }

    private enum CodingKeys: String, CodingKey { case mix, before, after, next }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        var before = c.nestedUnkeyedContainer(forKey: .before)
        try before.encode(1)
        // The shared object through a super encoder, between nested containers.
        var slot = c.superEncoder().singleValueContainer()
        try slot.encode(shared)
        var after = c.nestedContainer(keyedBy: CodingKeys.self, forKey: .after)
        try after.encode(2, forKey: .mix)
        try c.encodeIfPresent(next, forKey: .next)
        try c.encode(mix, forKey: .mix)
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        mix = try c.decode(SuperMix.self, forKey: .mix)
        next = try c.decodeIfPresent(SuperNode.self, forKey: .next)
        #expect(try c.nestedContainer(keyedBy: CodingKeys.self, forKey: .after).decode(Int.self, forKey: .mix) == 2)
        shared = try c.superDecoder().singleValueContainer().decode(Shared.self)
        var before = try c.nestedUnkeyedContainer(forKey: .before)
        #expect(try before.decode(Int.self) == 1)
    }
}

/// A base class whose part of a model (written through `superEncoder()`) itself holds nested
/// containers and a super encoder of its own.
private class SuperBase: Codable {
    var tags: [String]
    var note: String
    init(tags: [String], note: String) {
        self.tags = tags
        self.note = note
    }
    private enum CodingKeys: String, CodingKey { case tags, inner, note }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        var tags = c.nestedUnkeyedContainer(forKey: .tags)
        for tag in self.tags { try tags.encode(tag) }
        try note.encode(to: c.superEncoder(forKey: .note))
        var inner = c.nestedContainer(keyedBy: CodingKeys.self, forKey: .inner)
        try inner.encode(self.tags.count, forKey: .tags)
    }
    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        note = try String(from: c.superDecoder(forKey: .note))
        let inner = try c.nestedContainer(keyedBy: CodingKeys.self, forKey: .inner)
        var tags = try c.nestedUnkeyedContainer(forKey: .tags)
        var values: [String] = []
        while !tags.isAtEnd { values.append(try tags.decode(String.self)) }
        self.tags = values
        #expect(try inner.decode(Int.self, forKey: .tags) == values.count)
    }
}

private final class SuperDerived: SuperBase, Archivable {
    var title: String
    init(title: String, tags: [String], note: String) {
        self.title = title
        super.init(tags: tags, note: note)
    }
    private enum CodingKeys: String, CodingKey { case title, list }
    override func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        var list = c.nestedUnkeyedContainer(forKey: .list)
        try list.encode(title)
        try super.encode(to: c.superEncoder())
        try c.encode(title, forKey: .title)
    }
    required init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        title = try c.decode(String.self, forKey: .title)
        try super.init(from: c.superDecoder())
        var list = try c.nestedUnkeyedContainer(forKey: .list)
        #expect(try list.decode(String.self) == title)
    }
}

@Suite struct ArchiveCodableSuperEncoderTests {
    /// Every super-encoder value, in a keyed container through `superEncoder()` and
    /// `superEncoder(forKey:)` and in an unkeyed one, with nested containers and plain fields
    /// around it in several orders.
    private static var mixes: [SuperMix] {
        var mixes: [SuperMix] = []
        for value in SlotValue.samples {
            for (forKey, unkeyed) in [(false, false), (true, false), (false, true)] {
                let s = Part.superValue(value, forKey: forKey)
                let k = Part.nestedKeyed(7, "nested keyed")
                let u = Part.nestedUnkeyed([1, 2, 3])
                let p = Part.plain("plain")
                let layouts: [[Part]] = [
                    [s], [s, k, u], [k, s, u], [k, u, s], [u, s, k], [p, s, p], [s, p, k, p, u, p],
                    [k, s, Part.superValue(.string("second"), forKey: true)],
                ]
                for layout in layouts {
                    mixes.append(SuperMix(parts: layout, unkeyed: unkeyed))
                    if !unkeyed { mixes.append(SuperMix(parts: layout, readReversed: true)) }
                }
            }
        }
        return mixes
    }

    @Test func theReportedModelRoundTrips() throws {
        let mix = SuperMix(parts: [
            .superValue(.string("some string!"), forKey: false), .nestedKeyed(1, "a"), .nestedUnkeyed([1, 2]),
        ])
        #expect(try Archive.decode(SuperMix.self, from: Archive.encode(mix)) == mix)
    }

    @Test func everySuperEncoderValueRoundTripsAroundNestedContainers() throws {
        for mix in Self.mixes {
            let json = try JSONDecoder().decode(SuperMix.self, from: JSONEncoder().encode(mix))
            #expect(json == mix, "JSON: \(mix)")
            do {
                let copy = try Archive.decode(SuperMix.self, from: Archive.encode(mix))
                #expect(copy == mix)
            } catch {
                Issue.record("\(mix): \(error)")
            }
        }
    }

    @Test func arraysOfSuperEncoderModelsRoundTrip() throws {
        let mixes = Self.mixes
        #expect(try Archive.decode([SuperMix].self, from: Archive.encode(mixes)) == mixes)
        // A reused thread decoder, with key indexes learnt from earlier archives.
        #expect(try Archive.decode([SuperMix].self, from: Archive.encode(mixes.reversed())) == mixes.reversed())
    }

    @Test func nestedSuperEncodersRoundTrip() throws {
        // A super value that is itself a model with super encoders.
        let inner = SuperMix(parts: [.nestedKeyed(1, "x"), .superValue(.string("inner"), forKey: false)])
        struct Outer: Codable, Archivable, Equatable {
            var inner: SuperMix
            var tail: String
            enum CodingKeys: String, CodingKey { case list, tail }
            init(inner: SuperMix, tail: String) {
                self.inner = inner
                self.tail = tail
            }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                var list = c.nestedUnkeyedContainer(forKey: .list)
                try list.encode(tail)
                try inner.encode(to: c.superEncoder())
                try c.encode(tail, forKey: .tail)
            }
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                tail = try c.decode(String.self, forKey: .tail)
                inner = try SuperMix(from: c.superDecoder())
                var list = try c.nestedUnkeyedContainer(forKey: .list)
                #expect(try list.decode(String.self) == tail)
            }
        }
        let outer = Outer(inner: inner, tail: "tail")
        #expect(try JSONDecoder().decode(Outer.self, from: JSONEncoder().encode(outer)) == outer)
        #expect(try Archive.decode(Outer.self, from: Archive.encode(outer)) == outer)
        #expect(try Archive.decode([Outer].self, from: Archive.encode([outer, outer])) == [outer, outer])
    }

    @Test func inheritanceThroughSuperEncoderWithNestedContainersRoundTrips() throws {
        let model = SuperDerived(
            title: "derived",
            tags: ["a", "Grüße", String(repeating: "t", count: 200)],
            note: "a note of some length"
        )
        let copy = try Archive.decode(SuperDerived.self, from: Archive.encode(model))
        #expect(copy.title == model.title && copy.tags == model.tags && copy.note == model.note)
        let json = try JSONDecoder().decode(SuperDerived.self, from: JSONEncoder().encode(model))
        #expect(json.title == model.title && json.tags == model.tags && json.note == model.note)
        let many = try Archive.decode([SuperDerived].self, from: Archive.encode([model, model, model]))
        #expect(many.count == 3 && many.allSatisfy { $0.note == model.note && $0.tags == model.tags })
        #expect(many[0] === many[1])
    }

    @Test func graphsShareObjectsThroughSuperEncoders() throws {
        let shared = Shared(label: "shared")
        let other = Shared(label: "other")
        let mixes = Self.mixes
        let last = SuperNode(mix: mixes[3], shared: shared)
        let middle = SuperNode(mix: mixes[5], shared: other, next: last)
        let first = SuperNode(mix: mixes[0], shared: shared, next: middle)
        let nodes = [first, middle, last, SuperNode(mix: mixes[1], shared: other)]
        let copy = try Archive.decode([SuperNode].self, from: Archive.encode(nodes))
        #expect(copy.map(\.mix) == nodes.map(\.mix))
        #expect(copy.map(\.shared.label) == ["shared", "other", "shared", "other"])
        #expect(copy[0].shared === copy[2].shared && copy[1].shared === copy[3].shared)
        #expect(copy[0].shared !== copy[1].shared)
        #expect(copy[0].next === copy[1] && copy[1].next === copy[2])
    }

    @Test func anUnwrittenSuperEncoderDecodesAsNil() throws {
        struct Unwritten: Codable, Archivable {
            enum CodingKeys: String, CodingKey { case a, b }
            init() {}
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                _ = c.superEncoder()
                var n = c.nestedUnkeyedContainer(forKey: .a)
                try n.encode(1)
                try c.encode("b", forKey: .b)
            }
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                #expect(try c.superDecoder().singleValueContainer().decodeNil())
                #expect(try c.decode(String.self, forKey: .b) == "b")
                var n = try c.nestedUnkeyedContainer(forKey: .a)
                #expect(try n.decode(Int.self) == 1)
            }
        }
        _ = try Archive.decode(Unwritten.self, from: Archive.encode(Unwritten()))
    }

    @Test func aSecondValueIntoOneSuperEncoderThrows() throws {
        struct Twice: Codable, Archivable {
            init() {}
            init(from decoder: any Decoder) throws {}
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: AnyKey.self)
                var slot = c.superEncoder().singleValueContainer()
                try slot.encode("one")
                try slot.encode("two")
            }
        }
        let error = #expect(throws: ArchiveError.self) { try Archive.encode(Twice()) }
        #expect(error?.code == .invalidValue)
    }

    @Test func aNestedKeyedContainerInARootUnkeyedContainerRoundTrips() throws {
        // No super encoder: reading a nested record's field left the reader inside it, after
        // the root array had moved it to its end ("bytes after the root value").
        struct Row: Codable, Archivable, Equatable {
            var n: Int
            var s: String
            enum CodingKeys: String, CodingKey { case n, s }
            init(n: Int, s: String) {
                self.n = n
                self.s = s
            }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.unkeyedContainer()
                var k = c.nestedContainer(keyedBy: CodingKeys.self)
                try k.encode(n, forKey: .n)
                try c.encode(s)
            }
            init(from decoder: any Decoder) throws {
                var c = try decoder.unkeyedContainer()
                let k = try c.nestedContainer(keyedBy: CodingKeys.self)
                s = try c.decode(String.self)
                n = try k.decode(Int.self, forKey: .n)
            }
        }
        let rows = [Row(n: 1, s: "a"), Row(n: 2, s: "b")]
        #expect(try JSONDecoder().decode([Row].self, from: JSONEncoder().encode(rows)) == rows)
        #expect(try Archive.decode(Row.self, from: Archive.encode(rows[0])) == rows[0])
        #expect(try Archive.decode([Row].self, from: Archive.encode(rows)) == rows)
    }

    /// Bytes as the encoder wrote them before the fix: a super encoder's single primitive
    /// value was followed by a null (the slot was closed as if unwritten). Where such an
    /// archive decoded (the super value last in its record, read in the order written), it
    /// still does.
    @Test func archivesWithTheOldNullAfterASuperValueStillDecode() throws {
        struct Titled: Codable, Archivable, Equatable {
            var title: String
            var note: String
            var oldLayout = false
            enum CodingKeys: String, CodingKey { case title }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(title, forKey: .title)
                let slot = try #require(c.superEncoder() as? SlotEncoder)
                if oldLayout {
                    // The old write: the value counted as an element, the slot left open.
                    try CodableWriter(archive: slot.archive, target: slot.target).element(note)
                } else {
                    var single = slot.singleValueContainer()
                    try single.encode(note)
                }
            }
            init(title: String, note: String, oldLayout: Bool = false) {
                self.title = title
                self.note = note
                self.oldLayout = oldLayout
            }
            init(from decoder: any Decoder) throws {
                let c = try decoder.container(keyedBy: CodingKeys.self)
                // In this order: read the other way, the old null (0x00) stands where the next
                // key's index is looked for first, and is key 0, `title`: such archives never
                // decoded, before the fix or after.
                title = try c.decode(String.self, forKey: .title)
                note = try c.superDecoder().singleValueContainer().decode(String.self)
            }
        }
        let old = Titled(title: "title", note: "a note of some length", oldLayout: true)
        let oldBytes = try Archive.encode([old, old])
        let newBytes = try Archive.encode(
            [Titled(title: old.title, note: old.note)] + [Titled(title: old.title, note: old.note)]
        )
        #expect(oldBytes.count == newBytes.count + 2)
        let expected = [Titled(title: old.title, note: old.note), Titled(title: old.title, note: old.note)]
        #expect(try Archive.decode([Titled].self, from: oldBytes) == expected)
        #expect(try Archive.decode([Titled].self, from: newBytes) == expected)
    }
}
