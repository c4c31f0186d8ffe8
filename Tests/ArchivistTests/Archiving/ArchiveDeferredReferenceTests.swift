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
}
