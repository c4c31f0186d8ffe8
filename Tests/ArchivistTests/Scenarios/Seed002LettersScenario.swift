import Archivist
import Foundation
import Testing

/// Seed 002: a letters cache that was Core Data + MagicalRecord. Letters belong to a user;
/// find-or-create by primary key; saved in the background with a completion; fetched split
/// by incoming/outgoing; and private: another account on the same device sees none of them.
/// Public API only.
@Suite struct Seed002LettersScenario {
    /// A row of the letters table.
    struct LetterRecord: Codable, Archivable, Identifiable, Sendable, Equatable {
        var id: Int  // pkNumber
        var sender: String
        var content: String
        var dateString: String
        var isRead: Bool
        var incoming: Bool
    }

    /// The object graph the letters screen shows: a user with letters pointing back at it.
    final class MailUser: Codable, Archivable {
        var account: String
        var writeName: String
        var letters: [MailLetter]
        init(account: String, writeName: String, letters: [MailLetter]) {
            self.account = account
            self.writeName = writeName
            self.letters = letters
            for letter in letters { letter.user = self }
        }
    }

    final class MailLetter: Codable, Archivable {
        var record: LetterRecord
        @BackReference var user: MailUser?
        init(_ record: LetterRecord) { self.record = record }
    }

    enum MailCache: String, CacheType {
        case mailbox
        var location: CacheLocation { .userDocuments }
    }

    private func letter(_ pk: Int, incoming: Bool, _ content: String) -> LetterRecord {
        LetterRecord(
            id: pk,
            sender: incoming ? "pen pal" : "me",
            content: content,
            dateString: "2026-11-\(10 + pk)",
            isRead: !incoming,
            incoming: incoming
        )
    }

    @Test func lettersAreUpsertedSavedInTheBackgroundAndPrivate() async throws {
        try await withTemporaryDirectory { folder in
            let root = folder.appendingPathComponent("letters")
            let alice = try RecordStore<LetterRecord>(directory: root, user: "alice@example.com")

            // Network success: save in the background, with a completion (MagicalRecord's saveWithBlock).
            var batch = RecordBatch<LetterRecord>()
            batch.upsert(letter(1, incoming: true, "Hello Alice"))
            batch.upsert(letter(2, incoming: false, "Hi!"))
            batch.upsert(letter(3, incoming: true, "Are you there?"))
            let saved: Result<Void, StoreError> = await withCheckedContinuation { continuation in
                alice.save(batch) { continuation.resume(returning: $0) }
            }
            #expect((try? saved.get()) != nil)

            // Find-or-create by primary key: pk 1 updated in place, pk 4 created.
            try alice.upsert(letter(1, incoming: true, "Hello Alice (edited)"))
            try alice.upsert(letter(4, incoming: false, "Yes, here"))
            try alice.update(id: 3) { $0.isRead = true }
            #expect(alice.count == 4)
            #expect(alice.record(id: 1)?.content == "Hello Alice (edited)")

            // Network failure: read from disk, outgoing first then incoming, as the seed returns.
            let reopened = try RecordStore<LetterRecord>(directory: root, user: "alice@example.com")
            let outgoing = reopened.records(where: { !$0.incoming }, sortedBy: { $0.id < $1.id })
            let incoming = reopened.records(where: { $0.incoming }, sortedBy: { $0.id < $1.id })
            #expect(outgoing.map(\.id) == [2, 4])
            #expect(incoming.map(\.id) == [1, 3])
            #expect(incoming.allSatisfy { $0.incoming } && incoming[1].isRead)

            // Another account on the same device sees none of Alice's letters.
            let bob = try RecordStore<LetterRecord>(directory: root, user: "bob@example.com")
            #expect(bob.count == 0)
            try bob.upsert(letter(1, incoming: true, "Bob's own letter 1"))
            #expect(
                try RecordStore<LetterRecord>(directory: root, user: "alice@example.com").record(id: 1)?.content
                    == "Hello Alice (edited)"
            )
        }
    }

    @Test func theUserGraphIsCachedPerAccountWithBackReferences() throws {
        try withTemporaryDirectory { folder in
            let records = (1...6).map { letter($0, incoming: $0 % 2 == 0, "letter \($0)") }
            let user = MailUser(account: "alice", writeName: "Alice", letters: records.map(MailLetter.init))

            let aliceCache = try CacheManager<MailCache>(root: CacheRoot(directory: folder), user: "alice")
            try aliceCache.store(user, for: .mailbox)
            let cached = try #require(try aliceCache.value(MailUser.self, for: .mailbox))
            #expect(cached.letters.map(\.record) == records)
            #expect(cached.letters.allSatisfy { $0.user === cached }, "every letter points back at the one user")

            // Bob signs in on the same device: nothing of Alice's is visible, sized or cleared.
            let bobCache = try CacheManager<MailCache>(root: CacheRoot(directory: folder), user: "bob")
            #expect(try bobCache.value(MailUser.self, for: .mailbox) == nil)
            #expect(bobCache.size(of: .mailbox) == 0)
            _ = try bobCache.clear(.user)
            #expect(try aliceCache.value(MailUser.self, for: .mailbox)?.letters.count == 6)

            for letter in user.letters + cached.letters { letter.user = nil }
        }
    }
}
