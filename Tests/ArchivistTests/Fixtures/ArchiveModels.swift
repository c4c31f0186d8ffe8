import Foundation

@testable import Archivist

// Models shared by the archive tests: the seed 002 letters graph written by hand, nodes for
// cycles, a class hierarchy for polymorphism, and a versioned type for migrations.

final class User: Archivable {
    var account: String
    var writeName: String
    var letters: [Letter] = []

    init(account: String, writeName: String) {
        self.account = account
        self.writeName = writeName
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(account, forKey: "account")
        try archive.encode(writeName, forKey: "writeName")
        try archive.encode(letters, forKey: "letters")
    }

    init(from archive: ArchiveDecoder) throws {
        account = try archive.decode(String.self, forKey: "account")
        writeName = try archive.decode(String.self, forKey: "writeName")
        letters = try archive.decode([Letter].self, forKey: "letters")
    }
}

final class Letter: Archivable {
    var pkNumber: Int
    var sender: String
    var content: String
    var date: Date
    var isRead: Bool
    var incoming: Bool
    weak var user: User?

    init(pkNumber: Int, sender: String, content: String, date: Date, isRead: Bool, incoming: Bool) {
        self.pkNumber = pkNumber
        self.sender = sender
        self.content = content
        self.date = date
        self.isRead = isRead
        self.incoming = incoming
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(pkNumber, forKey: "pkNumber")
        try archive.encode(sender, forKey: "sender")
        try archive.encode(content, forKey: "content")
        try archive.encode(date, forKey: "date")
        try archive.encode(isRead, forKey: "isRead")
        try archive.encode(incoming, forKey: "incoming")
        try archive.encodeConditional(user, forKey: "user")
    }

    init(from archive: ArchiveDecoder) throws {
        pkNumber = try archive.decode(Int.self, forKey: "pkNumber")
        sender = try archive.decode(String.self, forKey: "sender")
        content = try archive.decode(String.self, forKey: "content")
        date = try archive.decode(Date.self, forKey: "date")
        isRead = try archive.decode(Bool.self, forKey: "isRead")
        incoming = try archive.decode(Bool.self, forKey: "incoming")
        try archive.decodeReference(User.self, forKey: "user") { [unowned self] in self.user = $0 }
    }
}

func makeUser(_ index: Int, letters: Int) -> User {
    let user = User(account: "user\(index)@example.com", writeName: "Writer \(index)")
    for j in 0..<letters {
        let letter = Letter(
            pkNumber: index * 1_000 + j,
            sender: "sender \(j)",
            content: "Dear \(index), letter \(j) 💌",
            date: Date(timeIntervalSinceReferenceDate: Double(index * 86_400 + j)),
            isRead: j % 2 == 0,
            incoming: j % 3 != 0
        )
        letter.user = user
        user.letters.append(letter)
    }
    return user
}

/// A node whose `next` may close a cycle, so it is decoded as a deferred reference.
final class Node: Archivable {
    var name: String
    var next: Node?

    init(_ name: String) { self.name = name }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(name, forKey: "name")
        try archive.encode(next, forKey: "next")
    }

    init(from archive: ArchiveDecoder) throws {
        name = try archive.decode(String.self, forKey: "name")
        try archive.decodeReference(Node.self, forKey: "next") { [unowned self] in self.next = $0 }
    }
}

/// A linked chain decoded eagerly (no deferral), for depth limits.
final class Chain: Archivable {
    var next: Chain?
    init(next: Chain?) { self.next = next }
    func encode(to archive: ArchiveEncoder) throws { try archive.encode(next, forKey: "next") }
    init(from archive: ArchiveDecoder) throws { next = try archive.decodeIfPresent(Chain.self, forKey: "next") }
}

class Animal: Archivable {
    var name: String
    init(name: String) { self.name = name }
    class var archiveTypeName: String { "Animal" }
    func encode(to archive: ArchiveEncoder) throws { try archive.encode(name, forKey: "name") }
    required init(from archive: ArchiveDecoder) throws { name = try archive.decode(String.self, forKey: "name") }
}

final class Dog: Animal {
    var goodBoy = true
    init(name: String, goodBoy: Bool) {
        self.goodBoy = goodBoy
        super.init(name: name)
    }
    override class var archiveTypeName: String { "Dog" }
    override func encode(to archive: ArchiveEncoder) throws {
        try super.encode(to: archive)
        try archive.encode(goodBoy, forKey: "goodBoy")
    }
    required init(from archive: ArchiveDecoder) throws {
        goodBoy = try archive.decode(Bool.self, forKey: "goodBoy")
        try super.init(from: archive)
    }
}

enum Priority: Int, Codable, Archivable, CaseIterable {
    case low, normal, high
}
