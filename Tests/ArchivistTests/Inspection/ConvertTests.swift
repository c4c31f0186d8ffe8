import ArchivistInspection
import Foundation
import Testing
@testable import Archivist
@testable import ArchivistKeyedArchive

/// `archivist convert`: keyed archives and property lists written again as XML, binary or
/// JSON, references kept, so a round trip gives the same archive.
@Suite struct ConvertTests {
    static let notePath = "rust-nskeyedunarchiver/note.plist"

    @Test(.needsKeyedArchiveFixtures, arguments: KeyedArchiveFixtures.expectations.filter { if case .decodes = $0.outcome { true } else { false } }.map(\.path))
    func aKeyedArchiveSurvivesXMLAndBinaryRoundTrips(path: String) throws {
        let original = try KeyedArchiveFixtures.data(path)
        let folder = try ScratchFolder()
        let input = folder.file("input")
        try original.write(to: input)
        let xml = folder.file("archive.xml")
        let toXML = try ToolRun(["convert", input.path, "--to", "xml", "--output", xml.path])
        #expect(toXML.status == 0, "\(toXML.errors)")
        #expect(String(decoding: try Data(contentsOf: xml), as: UTF8.self).hasPrefix("<?xml"))
        let binary = try ToolRun(["convert", xml.path, "--to", "binary", "-o", folder.file("archive.bin").path])
        #expect(binary.status == 0, "\(binary.errors)")
        let back = try Data(contentsOf: folder.file("archive.bin"))
        #expect(back.starts(with: Array("bplist00".utf8)))
        let expected = try KeyedArchive(data: original)
        for converted in [try Data(contentsOf: xml), back] {
            let archive = try KeyedArchive(data: converted)
            #expect(archive.objects.count == expected.objects.count)
            #expect(archive.top == expected.top)
            // XML keeps dates to the second; everything else must be equal.
            for (a, b) in zip(archive.objects, expected.objects) {
                if case .date(let x) = a, case .date(let y) = b { #expect(abs(x.timeIntervalSince(y)) < 1); continue }
                #expect(a == b)
            }
        }
    }

    @Test(.needsKeyedArchiveFixtures) func jsonKeepsReferencesAsUIDObjects() throws {
        let directory = try #require(KeyedArchiveFixtures.directory(), Comment(rawValue: KeyedArchiveFixtures.missingMessage))
        let run = try ToolRun(["convert", directory.appendingPathComponent(Self.notePath).path, "--to", "json"])
        #expect(run.status == 0)
        let archive = try run.object()
        #expect(archive["$archiver"] as? String == "NSKeyedArchiver")
        #expect((archive["$version"] as? NSNumber)?.intValue == 100_000)
        let top = try archive.member("$top", as: [String: Any].self)
        let root = try top.member("root", as: [String: Any].self)
        #expect((root["CF$UID"] as? NSNumber)?.intValue == 1)
        let objects = try archive.member("$objects", as: [Any].self)
        #expect(objects.first as? String == "$null")
        #expect(objects.contains { $0 as? String == "Some cool title" })
    }

    @Test func aPlistThatContainsItselfConvertsToBinaryOnly() throws {
        // bplist00: one array (object 0) whose only element is itself.
        var bytes = Array("bplist00".utf8) + [0xA1, 0x00]
        let table = bytes.count
        bytes += [8]                                     // offset table: object 0 at byte 8
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]                // offset size 1, reference size 1
        bytes += [0, 0, 0, 0, 0, 0, 0, 1]                // one object
        bytes += [0, 0, 0, 0, 0, 0, 0, 0]                // top: object 0
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]     // offset table's offset
        let folder = try ScratchFolder()
        let file = folder.file("loop.plist")
        try Data(bytes).write(to: file)
        let xml = try ToolRun(["convert", file.path, "--to", "xml"])
        #expect(xml.status == 1)
        #expect(xml.errors.contains("contains itself"))
        #expect(try ToolRun(["convert", file.path, "--to", "binary", "-o", folder.file("out").path]).status == 0)
        let inspect = try ToolRun(["inspect", file.path])
        #expect(inspect.status == 0)
        #expect(inspect.output.contains("→ #0 (cycle)"))
    }

    @Test func somethingThatIsNotAPropertyListFailsWithOne() throws {
        let folder = try ScratchFolder()
        let file = folder.file("archive")
        try Archive.encode("native").write(to: file)
        let run = try ToolRun(["convert", file.path, "--to", "json"])
        #expect(run.status == 1)
        #expect(!run.errors.isEmpty)
    }
}
