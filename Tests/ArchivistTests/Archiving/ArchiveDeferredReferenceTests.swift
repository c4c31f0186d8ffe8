import Foundation
import Testing

@testable import Archivist

/// Back-references resolved from the decoder's side table, and the keyed containers the decoder
/// keeps per coding-key type: neither may keep a decoded graph or the decoder alive.
@Suite struct ArchiveDeferredReferenceTests {
    private func mailbox(_ count: Int) -> Mailbox {
        let box = Mailbox(owner: "alice", letters: (0..<count).map { Note(text: "note \($0)") })
        for note in box.letters { note.mailbox = box }
        return box
    }

    @Test func aCodableGraphIsReleasedAndTheDecoderReusedAfterwards() throws {
        let data = try Archive.encode(mailbox(5))
        weak var decoded: Mailbox?
        try {
            let copy = try Archive.decode(Mailbox.self, from: data)
            #expect(copy.letters.count == 5)
            #expect(copy.letters.allSatisfy { $0.mailbox === copy })
            decoded = copy
        }()
        #expect(decoded == nil)
        // Only identities: a reference held here would keep the spare from being kept again.
        #expect(ArchivingThreadCache.current.spareDecoder?.storage.pointee.keyedContainers.isEmpty == true)
        let spare = ArchivingThreadCache.current.spareDecoder.map(ObjectIdentifier.init)
        #expect(spare != nil)
        let again = try Archive.decode(Mailbox.self, from: data)
        #expect(ArchivingThreadCache.current.spareDecoder.map(ObjectIdentifier.init) == spare)
        #expect(again.letters.map(\.text) == (0..<5).map { "note \($0)" })
        #expect(again.letters.allSatisfy { $0.mailbox === again })
    }

    @Test func backReferencesOfTwoModelsInOneArchiveGoToTheirOwnObjects() throws {
        let boxes = [mailbox(3), mailbox(2)]
        boxes[1].owner = "bob"
        let copy = try Archive.decode([Mailbox].self, from: Archive.encode(boxes))
        #expect(copy.map(\.owner) == ["alice", "bob"])
        for box in copy { #expect(box.letters.allSatisfy { $0.mailbox === box }) }
    }

    // MARK: decodeReference (hand-written models)

    @Test func handWrittenBackReferencesToTwoObjectsInTurnGoToTheirOwnObjects() throws {
        // Bob's deputy Alice holds pets that point back at Bob and Alice in turn: both are
        // still being decoded, so the deferred references to the two alternate instead of
        // coming in runs.
        let bob = Keeper(name: "bob")
        let alice = Keeper(name: "alice")
        bob.deputy = alice
        alice.pets = (0..<6).map { Pet(name: "pet \($0)") }
        for (i, pet) in alice.pets.enumerated() { pet.keeper = i % 2 == 0 ? bob : alice }
        let copy = try Archive.decode(Keeper.self, from: Archive.encode(bob))
        let deputy = try #require(copy.deputy)
        #expect(copy.name == "bob" && deputy.name == "alice")
        #expect(deputy.pets.map { $0.keeper?.name } == ["bob", "alice", "bob", "alice", "bob", "alice"])
        for (i, pet) in deputy.pets.enumerated() { #expect(pet.keeper === (i % 2 == 0 ? copy : deputy)) }
    }

    @Test func aBackReferenceToASubclassInstanceIsAssigned() throws {
        let keeper = HeadKeeper(name: "carol")
        keeper.pets = (0..<3).map { Pet(name: "pet \($0)") }
        for pet in keeper.pets { pet.keeper = keeper }
        let data = try Archive.encode(keeper)
        let copy = try Archive.decode(Keeper.self, from: data, options: ArchiveOptions(allowedTypes: [HeadKeeper.self]))
        #expect(copy is HeadKeeper)
        #expect(copy.pets.count == 3 && copy.pets.allSatisfy { $0.keeper === copy })
    }

    @Test func aBackReferenceToAnObjectOfAnotherClassIsATypeMismatch() throws {
        let keeper = Keeper(name: "dave")
        keeper.pets = [Pet(name: "rex")]
        keeper.pets[0].keeper = keeper
        let data = try Archive.encode(keeper)
        let error = #expect(throws: ArchiveError.self) {
            try Archive.decode(Keeper.self, from: data, options: ArchiveOptions(userInfo: [Pet.expectsStranger: true]))
        }
        #expect(error?.code == .typeMismatch)
        // The decoder is still usable for the next archive.
        let copy = try Archive.decode(Keeper.self, from: data)
        #expect(copy.pets[0].keeper === copy)
    }
}

/// A hand-written owner whose pets point back at it (`decodeReference`).
private class Keeper: Archivable {
    var name: String
    var deputy: Keeper?
    var pets: [Pet] = []
    init(name: String) { self.name = name }
    class var archiveTypeName: String { "Keeper" }
    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(name, forKey: "name")
        try archive.encode(deputy, forKey: "deputy")
        try archive.encode(pets, forKey: "pets")
    }
    required init(from archive: ArchiveDecoder) throws {
        name = try archive.decode(String.self, forKey: "name")
        deputy = try archive.decodeIfPresent(Keeper.self, forKey: "deputy")
        pets = try archive.decode([Pet].self, forKey: "pets")
    }
}

private final class HeadKeeper: Keeper {
    override class var archiveTypeName: String { "HeadKeeper" }
}

/// A class no archive in these tests holds.
private final class Stranger: Archivable {
    init() {}
    func encode(to archive: ArchiveEncoder) throws {}
    init(from archive: ArchiveDecoder) throws {}
}

private final class Pet: Archivable {
    /// `userInfo` key: decode the keeper as a ``Stranger``.
    static let expectsStranger = "expectsStranger"
    var name: String
    weak var keeper: Keeper?
    var stranger: Stranger?
    init(name: String) { self.name = name }
    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(name, forKey: "name")
        try archive.encodeConditional(keeper, forKey: "keeper")
    }
    init(from archive: ArchiveDecoder) throws {
        name = try archive.decode(String.self, forKey: "name")
        if archive.userInfo[Self.expectsStranger] != nil {
            try archive.decodeReference(Stranger.self, forKey: "keeper") { [unowned self] in self.stranger = $0 }
        } else {
            try archive.decodeReference(Keeper.self, forKey: "keeper") { [unowned self] in self.keeper = $0 }
        }
    }
}
