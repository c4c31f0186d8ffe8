import Archivist
import Foundation

// The seed workloads in three dresses: hand-written Archivable, Codable (also fed to
// JSONEncoder and PropertyListEncoder), and NSSecureCoding (for NSKeyedArchiver).

/// A task-list app's task, hand-written.
struct HandTask: Archivable {
    var id: String, name: String, color: String, diligenceTime: Int, isRestMode: Bool, restTime: Int
    var isFocusMode: Bool, musicName: String, isMusicEnabled: Bool, isAlertEnabled: Bool, alertTime: Date

    init(_ i: Int) {
        id = "task-\(i)"
        name = "Task number \(i)"
        color = "#\(String(i % 0xFFFFFF, radix: 16))"
        diligenceTime = 1_500 + i % 600
        isRestMode = i % 2 == 0
        restTime = 300
        isFocusMode = i % 3 == 0
        musicName = "rain-\(i % 7).mp3"
        isMusicEnabled = i % 5 != 0
        isAlertEnabled = i % 4 == 0
        alertTime = Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(i) * 60)
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(id, forKey: "id")
        try archive.encode(name, forKey: "name")
        try archive.encode(color, forKey: "color")
        try archive.encode(diligenceTime, forKey: "diligenceTime")
        try archive.encode(isRestMode, forKey: "isRestMode")
        try archive.encode(restTime, forKey: "restTime")
        try archive.encode(isFocusMode, forKey: "isFocusMode")
        try archive.encode(musicName, forKey: "musicName")
        try archive.encode(isMusicEnabled, forKey: "isMusicEnabled")
        try archive.encode(isAlertEnabled, forKey: "isAlertEnabled")
        try archive.encode(alertTime, forKey: "alertTime")
    }

    init(from archive: ArchiveDecoder) throws {
        id = try archive.decode(String.self, forKey: "id")
        name = try archive.decode(String.self, forKey: "name")
        color = try archive.decode(String.self, forKey: "color")
        diligenceTime = try archive.decode(Int.self, forKey: "diligenceTime")
        isRestMode = try archive.decode(Bool.self, forKey: "isRestMode")
        restTime = try archive.decode(Int.self, forKey: "restTime")
        isFocusMode = try archive.decode(Bool.self, forKey: "isFocusMode")
        musicName = try archive.decode(String.self, forKey: "musicName")
        isMusicEnabled = try archive.decode(Bool.self, forKey: "isMusicEnabled")
        isAlertEnabled = try archive.decode(Bool.self, forKey: "isAlertEnabled")
        alertTime = try archive.decode(Date.self, forKey: "alertTime")
    }
}

/// A task-list app's task, Codable.
struct CodableTask: Codable, Archivable {
    var id: String, name: String, color: String, diligenceTime: Int, isRestMode: Bool, restTime: Int
    var isFocusMode: Bool, musicName: String, isMusicEnabled: Bool, isAlertEnabled: Bool, alertTime: Date

    init(_ t: HandTask) {
        id = t.id
        name = t.name
        color = t.color
        diligenceTime = t.diligenceTime
        isRestMode = t.isRestMode
        restTime = t.restTime
        isFocusMode = t.isFocusMode
        musicName = t.musicName
        isMusicEnabled = t.isMusicEnabled
        isAlertEnabled = t.isAlertEnabled
        alertTime = t.alertTime
    }
}

/// A task-list app's task as an NSSecureCoding object.
final class ObjectTask: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let task: HandTask

    init(_ task: HandTask) { self.task = task }

    func encode(with coder: NSCoder) {
        coder.encode(task.id as NSString, forKey: "id")
        coder.encode(task.name as NSString, forKey: "name")
        coder.encode(task.color as NSString, forKey: "color")
        coder.encode(task.diligenceTime, forKey: "diligenceTime")
        coder.encode(task.isRestMode, forKey: "isRestMode")
        coder.encode(task.restTime, forKey: "restTime")
        coder.encode(task.isFocusMode, forKey: "isFocusMode")
        coder.encode(task.musicName as NSString, forKey: "musicName")
        coder.encode(task.isMusicEnabled, forKey: "isMusicEnabled")
        coder.encode(task.isAlertEnabled, forKey: "isAlertEnabled")
        coder.encode(task.alertTime as NSDate, forKey: "alertTime")
    }

    init?(coder: NSCoder) {
        var t = HandTask(0)
        guard let id = coder.decodeObject(of: NSString.self, forKey: "id"),
            let name = coder.decodeObject(of: NSString.self, forKey: "name"),
            let color = coder.decodeObject(of: NSString.self, forKey: "color"),
            let music = coder.decodeObject(of: NSString.self, forKey: "musicName"),
            let alert = coder.decodeObject(of: NSDate.self, forKey: "alertTime")
        else { return nil }
        t.id = id as String
        t.name = name as String
        t.color = color as String
        t.musicName = music as String
        t.alertTime = alert as Date
        t.diligenceTime = coder.decodeInteger(forKey: "diligenceTime")
        t.isRestMode = coder.decodeBool(forKey: "isRestMode")
        t.restTime = coder.decodeInteger(forKey: "restTime")
        t.isFocusMode = coder.decodeBool(forKey: "isFocusMode")
        t.isMusicEnabled = coder.decodeBool(forKey: "isMusicEnabled")
        t.isAlertEnabled = coder.decodeBool(forKey: "isAlertEnabled")
        task = t
    }
}

/// A messaging app's user with letters that point back at it, hand-written.
final class HandUser: Archivable {
    var account: String, writeName: String
    var letters: [HandLetter] = []

    init(_ i: Int, letters count: Int) {
        account = "user\(i)@example.com"
        writeName = "Writer \(i)"
        letters = (0..<count).map { HandLetter(i * 100 + $0) }
        for letter in letters { letter.user = self }
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(account, forKey: "account")
        try archive.encode(writeName, forKey: "writeName")
        try archive.encode(letters, forKey: "letters")
    }

    init(from archive: ArchiveDecoder) throws {
        account = try archive.decode(String.self, forKey: "account")
        writeName = try archive.decode(String.self, forKey: "writeName")
        letters = try archive.decode([HandLetter].self, forKey: "letters")
    }
}

final class HandLetter: Archivable {
    var pkNumber: Int, sender: String, content: String, dateString: String, isRead: Bool, incoming: Bool
    weak var user: HandUser?

    init(_ i: Int) {
        pkNumber = i
        sender = "sender \(i % 50)"
        content = "Letter \(i): the quick brown fox jumps over the lazy dog."
        dateString = "2026-11-\(10 + i % 20)"
        isRead = i % 2 == 0
        incoming = i % 3 != 0
    }

    func encode(to archive: ArchiveEncoder) throws {
        try archive.encode(pkNumber, forKey: "pkNumber")
        try archive.encode(sender, forKey: "sender")
        try archive.encode(content, forKey: "content")
        try archive.encode(dateString, forKey: "dateString")
        try archive.encode(isRead, forKey: "isRead")
        try archive.encode(incoming, forKey: "incoming")
        try archive.encodeConditional(user, forKey: "user")
    }

    init(from archive: ArchiveDecoder) throws {
        pkNumber = try archive.decode(Int.self, forKey: "pkNumber")
        sender = try archive.decode(String.self, forKey: "sender")
        content = try archive.decode(String.self, forKey: "content")
        dateString = try archive.decode(String.self, forKey: "dateString")
        isRead = try archive.decode(Bool.self, forKey: "isRead")
        incoming = try archive.decode(Bool.self, forKey: "incoming")
        try archive.decodeReference(HandUser.self, forKey: "user") { [unowned self] in self.user = $0 }
    }
}

/// The user and letters graph, Codable; JSON and property lists write the back-reference as null.
final class CodableUser: Codable, Archivable {
    var account: String, writeName: String, letters: [CodableLetter]

    init(_ user: HandUser) {
        account = user.account
        writeName = user.writeName
        letters = user.letters.map(CodableLetter.init)
        for letter in letters { letter.user = self }
    }
}

final class CodableLetter: Codable, Archivable {
    var pkNumber: Int, sender: String, content: String, dateString: String, isRead: Bool, incoming: Bool
    @BackReference var user: CodableUser?

    init(_ l: HandLetter) {
        pkNumber = l.pkNumber
        sender = l.sender
        content = l.content
        dateString = l.dateString
        isRead = l.isRead
        incoming = l.incoming
    }
}

/// The user and letters graph for NSKeyedArchiver, without the back-reference (Foundation on Linux
/// overflows its stack decoding that cycle).
final class ObjectUser: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let account: String, writeName: String, letters: [ObjectLetter]

    init(_ user: HandUser) {
        account = user.account
        writeName = user.writeName
        letters = user.letters.map(ObjectLetter.init)
    }

    func encode(with coder: NSCoder) {
        coder.encode(account as NSString, forKey: "account")
        coder.encode(writeName as NSString, forKey: "writeName")
        coder.encode(letters as NSArray, forKey: "letters")
    }

    init?(coder: NSCoder) {
        guard let account = coder.decodeObject(of: NSString.self, forKey: "account"),
            let writeName = coder.decodeObject(of: NSString.self, forKey: "writeName"),
            let letters = coder.decodeObject(of: [NSArray.self, ObjectLetter.self], forKey: "letters")
                as? [ObjectLetter]
        else { return nil }
        self.account = account as String
        self.writeName = writeName as String
        self.letters = letters
    }
}

final class ObjectLetter: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let pkNumber: Int, sender: String, content: String, dateString: String, isRead: Bool, incoming: Bool

    init(_ l: HandLetter) {
        pkNumber = l.pkNumber
        sender = l.sender
        content = l.content
        dateString = l.dateString
        isRead = l.isRead
        incoming = l.incoming
    }

    func encode(with coder: NSCoder) {
        coder.encode(pkNumber, forKey: "pkNumber")
        coder.encode(sender as NSString, forKey: "sender")
        coder.encode(content as NSString, forKey: "content")
        coder.encode(dateString as NSString, forKey: "dateString")
        coder.encode(isRead, forKey: "isRead")
        coder.encode(incoming, forKey: "incoming")
    }

    init?(coder: NSCoder) {
        guard let sender = coder.decodeObject(of: NSString.self, forKey: "sender"),
            let content = coder.decodeObject(of: NSString.self, forKey: "content"),
            let dateString = coder.decodeObject(of: NSString.self, forKey: "dateString")
        else { return nil }
        pkNumber = coder.decodeInteger(forKey: "pkNumber")
        self.sender = sender as String
        self.content = content as String
        self.dateString = dateString as String
        isRead = coder.decodeBool(forKey: "isRead")
        incoming = coder.decodeBool(forKey: "incoming")
    }
}

/// A news app's story of the day with its image, hand-written and Codable at once (its
/// fields are all primitives, so one type serves both paths).
struct Story: Codable, Archivable {
    var dateToday: Date, title: String, attribute: String, para1: String, image: Data

    init(imageBytes: Int) {
        dateToday = Date(timeIntervalSinceReferenceDate: 785_000_000)
        title = "Morning light"
        attribute = "Photo: Archivist"
        para1 = String(repeating: "A story about the picture. ", count: 40)
        var rng = SystemRandomNumberGenerator()
        image = Data((0..<imageBytes).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }
}

final class ObjectStory: NSObject, NSSecureCoding {
    static var supportsSecureCoding: Bool { true }
    let story: Story

    init(_ story: Story) { self.story = story }

    func encode(with coder: NSCoder) {
        coder.encode(story.dateToday as NSDate, forKey: "dateToday")
        coder.encode(story.title as NSString, forKey: "title")
        coder.encode(story.attribute as NSString, forKey: "attribute")
        coder.encode(story.para1 as NSString, forKey: "para1")
        coder.encode(story.image as NSData, forKey: "image")
    }

    init?(coder: NSCoder) {
        guard let date = coder.decodeObject(of: NSDate.self, forKey: "dateToday"),
            let title = coder.decodeObject(of: NSString.self, forKey: "title"),
            let attribute = coder.decodeObject(of: NSString.self, forKey: "attribute"),
            let para1 = coder.decodeObject(of: NSString.self, forKey: "para1"),
            let image = coder.decodeObject(of: NSData.self, forKey: "image")
        else { return nil }
        var story = Story(imageBytes: 0)
        story.dateToday = date as Date
        story.title = title as String
        story.attribute = attribute as String
        story.para1 = para1 as String
        story.image = image as Data
        self.story = story
    }
}
