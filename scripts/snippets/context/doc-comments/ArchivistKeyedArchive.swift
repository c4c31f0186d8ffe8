// What the examples in the doc comments of Sources/ArchivistKeyedArchive take for granted.
// Never run: only compiled (scripts/check-snippets.sh). A file's own context replaces a name.
import Archivist
import ArchivistKeyedArchive
import Foundation

final class Letter: NSObject, NSSecureCoding, @unchecked Sendable {
    static var supportsSecureCoding: Bool { true }
    var content = ""
    override init() {}
    func encode(with coder: NSCoder) { coder.encode(content as NSString, forKey: "content") }
    init?(coder: NSCoder) { content = coder.decodeObject(of: NSString.self, forKey: "content") as String? ?? "" }
}

final class User: NSObject, NSSecureCoding, @unchecked Sendable {
    static var supportsSecureCoding: Bool { true }
    override init() {}
    func encode(with coder: NSCoder) {}
    init?(coder: NSCoder) {}
}

final class LineItem: NSObject, NSSecureCoding, @unchecked Sendable {
    static var supportsSecureCoding: Bool { true }
    override init() {}
    func encode(with coder: NSCoder) {}
    init?(coder: NSCoder) {}
}

final class Order: NSObject, NSSecureCoding, Archivable, @unchecked Sendable {
    static var supportsSecureCoding: Bool { true }
    override init() {}
    func encode(with coder: NSCoder) {}
    init?(coder: NSCoder) {}
}

struct Note: Codable, KeyedArchiveDecodable, KeyedArchiveEncodable, Sendable {
    var title: String
    var pinned: Bool
    var keyedArchiveClassChain: [String] { ["MyApp.Note", "NSObject"] }
    init(from unarchiver: KeyedArchiveUnarchiver) throws { title = ""; pinned = false }
    func encode(with archiver: KeyedArchiveArchiver) throws {}
}

enum Outer { struct Note { func encode(with archiver: KeyedArchiveArchiver) throws {} } }

var data: Data { Data() }
var url: URL { URL(fileURLWithPath: "/tmp/archive.plist") }
var letter: Letter { fatalError() }
var order: Order { fatalError() }
var note: Note { fatalError() }
