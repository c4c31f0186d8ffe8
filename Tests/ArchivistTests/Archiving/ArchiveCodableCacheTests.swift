import Foundation
import Testing

@testable import Archivist

// Models for the decoder's per-coding-key-type containers and its `@BackReference` fast path:
// key types with the same field names, generic models whose `CodingKeys` differ only by the
// generic argument, and models holding back-references of two types next to a plain Codable
// value that is not `Archivable`.

/// Same field names as ``TwinB``, in another order and with other value types.
struct TwinA: Codable, Archivable, Equatable {
    var name: String
    var count: Int
}

struct TwinB: Codable, Archivable, Equatable {
    var count: String
    var name: Int
}

/// Same field names again, but explicit keys whose raw values swap the archived names;
/// archived under ``TwinB``'s name, so it reads a `TwinB` archive.
struct TwinSwapped: Codable, Archivable, Equatable {
    static var archiveTypeName: String { TwinB.archiveTypeName }
    var name: String
    var count: Int
    enum CodingKeys: String, CodingKey {
        case name = "count"
        case count = "name"
    }
}

/// A generic model: `Boxed<Int>.CodingKeys` and `Boxed<String>.CodingKeys` are distinct types.
struct Boxed<Value: Codable & Equatable & Sendable>: Codable, Archivable, Equatable {
    var value: Value
    var tag: String
}

struct Twins: Codable, Archivable, Equatable {
    var a: [TwinA]
    var b: [TwinB]
    var swapped: [TwinSwapped]
    var ints: [Boxed<Int>]
    var strings: [Boxed<String>]
    var nested: [Boxed<Boxed<Int>>]
}

/// A plain Codable value that is not `Archivable`, decoded between back-references.
struct Stamp: Codable, Equatable {
    var code: Int
}

final class Shelf: Codable, Archivable {
    var label: String
    var folders: [Folder] = []
    init(label: String) { self.label = label }
}

final class Folder: Codable, Archivable {
    var title: String
    var cards: [Card] = []
    @BackReference var shelf: Shelf?
    init(title: String) { self.title = title }
}

/// Two back-reference types and a non-`Archivable` field, decoded in turn.
final class Card: Codable, Archivable {
    var text: String
    @BackReference var folder: Folder?
    var stamp: Stamp
    @BackReference var shelf: Shelf?
    @BackReference var spare: Shelf?
    init(text: String, stamp: Int) {
        self.text = text
        self.stamp = Stamp(code: stamp)
    }
}

@Suite struct ArchiveCodableCacheTests {
    @Test func keyTypesWithTheSameFieldNamesKeepTheirOwnContainers() throws {
        let twins = Twins(
            a: (0..<4).map { TwinA(name: "a\($0)", count: $0) },
            b: (0..<4).map { TwinB(count: "b\($0)", name: $0 * 10) },
            swapped: (0..<4).map { TwinSwapped(name: "s\($0)", count: $0 + 100) },
            ints: (0..<3).map { Boxed(value: $0, tag: "int") },
            strings: (0..<3).map { Boxed(value: "v\($0)", tag: "string") },
            nested: (0..<3).map { Boxed(value: Boxed(value: $0, tag: "inner"), tag: "outer") }
        )
        let data = try Archive.encode(twins)
        #expect(try Archive.decode(Twins.self, from: data) == twins)
        // Again with the decoder reused: the containers it kept are for the same archive shape.
        #expect(try Archive.decode(Twins.self, from: data) == twins)
        // Each twin's archive read as the other twin fails on the types, not silently.
        let a = try Archive.encode([TwinA(name: "x", count: 1), TwinA(name: "y", count: 2)])
        #expect(throws: ArchiveError.self) { try Archive.decode([TwinB].self, from: a) }
        #expect(try Archive.decode([TwinA].self, from: a).map(\.count) == [1, 2])
        // The swapped keys read a `TwinB` archive's fields by their archived names.
        let b = try Archive.encode([TwinB(count: "p", name: 5), TwinB(count: "q", name: 6), TwinB(count: "r", name: 7)])
        #expect(
            try Archive.decode([TwinSwapped].self, from: b) == [
                TwinSwapped(name: "p", count: 5), TwinSwapped(name: "q", count: 6), TwinSwapped(name: "r", count: 7),
            ]
        )
    }

    @Test func manyKeyTypesInOneArchive() throws {
        // More key types than the decoder keeps containers for, each model twice or more.
        struct K0: Codable, Archivable, Equatable { var v: Int }
        struct K1: Codable, Archivable, Equatable { var v: Int }
        struct K2: Codable, Archivable, Equatable { var v: Int }
        struct K3: Codable, Archivable, Equatable { var v: Int }
        struct K4: Codable, Archivable, Equatable { var v: Int }
        struct K5: Codable, Archivable, Equatable { var v: Int }
        struct K6: Codable, Archivable, Equatable { var v: Int }
        struct K7: Codable, Archivable, Equatable { var v: Int }
        struct K8: Codable, Archivable, Equatable { var v: Int }
        struct All: Codable, Archivable, Equatable {
            var k0: [K0], k1: [K1], k2: [K2], k3: [K3], k4: [K4], k5: [K5], k6: [K6], k7: [K7], k8: [K8]
            var again: [K0]
        }
        let all = All(
            k0: [K0(v: 0), K0(v: 1)],
            k1: [K1(v: 2), K1(v: 3)],
            k2: [K2(v: 4), K2(v: 5)],
            k3: [K3(v: 6), K3(v: 7)],
            k4: [K4(v: 8), K4(v: 9)],
            k5: [K5(v: 10), K5(v: 11)],
            k6: [K6(v: 12), K6(v: 13)],
            k7: [K7(v: 14), K7(v: 15)],
            k8: [K8(v: 16), K8(v: 17), K8(v: 18)],
            again: [K0(v: 19), K0(v: 20)]
        )
        #expect(try Archive.decode(All.self, from: Archive.encode(all)) == all)
    }

    private func shelves() -> [Shelf] {
        (0..<2).map { s in
            let shelf = Shelf(label: "shelf \(s)")
            shelf.folders = (0..<3).map { f in
                let folder = Folder(title: "folder \(s).\(f)")
                folder.shelf = shelf
                folder.cards = (0..<4).map { c in
                    let card = Card(text: "card \(s).\(f).\(c)", stamp: s * 100 + f * 10 + c)
                    card.folder = folder
                    card.shelf = shelf
                    return card
                }
                return folder
            }
            return shelf
        }
    }

    @Test func backReferencesOfTwoTypesBesideAPlainValueGoToTheirOwnObjects() throws {
        let copy = try Archive.decode([Shelf].self, from: Archive.encode(shelves()))
        #expect(copy.map(\.label) == ["shelf 0", "shelf 1"])
        for (s, shelf) in copy.enumerated() {
            #expect(shelf.folders.count == 3)
            for (f, folder) in shelf.folders.enumerated() {
                #expect(folder.shelf === shelf)
                #expect(folder.title == "folder \(s).\(f)")
                for (c, card) in folder.cards.enumerated() {
                    #expect(card.text == "card \(s).\(f).\(c)")
                    #expect(card.stamp == Stamp(code: s * 100 + f * 10 + c))
                    #expect(card.folder === folder)
                    #expect(card.shelf === shelf)
                    #expect(card.spare == nil)
                }
            }
        }
    }

    @Test func aBackReferenceToAnotherTypeStillThrows() throws {
        // Cards whose `folder` field holds a reference to a shelf.
        final class WrongShelf: Codable, Archivable {
            static var archiveTypeName: String { Shelf.archiveTypeName }
            var label = "x"
            var folders: [WrongFolder] = []
        }
        final class WrongFolder: Codable, Archivable {
            static var archiveTypeName: String { Folder.archiveTypeName }
            var title = "f"
            var cards: [WrongCardObject] = []
            @BackReference var shelf: WrongShelf?
        }
        final class WrongCardObject: Codable, Archivable {
            static var archiveTypeName: String { Card.archiveTypeName }
            var text = "c"
            @BackReference var folder: WrongShelf?
            var stamp = Stamp(code: 1)
            @BackReference var shelf: WrongShelf?
            @BackReference var spare: WrongShelf?
        }
        let shelf = WrongShelf()
        let folder = WrongFolder()
        folder.shelf = shelf
        let card = WrongCardObject()
        card.folder = shelf
        folder.cards = [card]
        shelf.folders = [folder]
        let data = try Archive.encode(shelf)
        let error = #expect(throws: ArchiveError.self) { try Archive.decode(Shelf.self, from: data) }
        #expect(error?.code == .typeMismatch)
        // The decoder is still usable, and its back-reference fast path reads the right type.
        let copy = try Archive.decode([Shelf].self, from: Archive.encode(shelves()))
        #expect(copy[1].folders[2].cards[3].folder === copy[1].folders[2])
    }

    @Test func aBackReferenceOutsideTheArchiveDecoderIsNil() throws {
        let json = try JSONEncoder().encode(shelves())
        let copy = try JSONDecoder().decode([Shelf].self, from: json)
        #expect(copy[0].folders[0].cards[0].folder == nil)
        #expect(copy[0].folders[0].cards[0].stamp == Stamp(code: 0))
    }
}
