// What the examples of KeyedArchiverBridge+Swift.swift take for granted; never run.
import ArchivistKeyedArchive
import Foundation

struct Letter: KeyedArchiveDecodable {
    var content: String
    init(from unarchiver: KeyedArchiveUnarchiver) throws {
        content = try unarchiver.decodeObject(of: String.self, forKey: "content") ?? ""
    }
}
