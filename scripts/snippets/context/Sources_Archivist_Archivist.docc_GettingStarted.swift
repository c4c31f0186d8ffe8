// What GettingStarted.md's snippets take for granted. Never run: only compiled.
import Archivist
import Foundation

class Animal: Archivable {
    var name: String
    init(name: String) { self.name = name }
    func encode(to archive: ArchiveEncoder) throws { try archive.encode(name, forKey: "name") }
    required init(from archive: ArchiveDecoder) throws { name = try archive.decode(String.self, forKey: "name") }
    class var archiveTypeName: String { "Animal" }
}

final class Dog: Animal {
    override class var archiveTypeName: String { "Dog" }
}

var data: Data { Data() }
