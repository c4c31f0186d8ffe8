// Runs the archivist tool as a process: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistInspection
import Foundation
import Testing
@testable import Archivist
@testable import ArchivistKeyedArchive

/// `archivist convert`: keyed archives and property lists written again as XML, binary or
/// JSON, references kept, so a round trip gives the same archive.
@Suite struct ConvertTests {
    static let notePath = "rust-nskeyedunarchiver/note.plist"

    @Test(
        .needsKeyedArchiveFixtures,
        arguments: KeyedArchiveFixtures.expectations.filter { if case .decodes = $0.outcome { true } else { false } }
            .map(\.path)
    )
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
                if case .date(let x) = a, case .date(let y) = b {
                    #expect(abs(x.timeIntervalSince(y)) < 1)
                    continue
                }
                #expect(a == b)
            }
        }
    }

    @Test(.needsKeyedArchiveFixtures) func jsonKeepsReferencesAsUIDObjects() throws {
        let directory = try #require(
            KeyedArchiveFixtures.directory(),
            Comment(rawValue: KeyedArchiveFixtures.missingMessage)
        )
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
        bytes += [8]  // offset table: object 0 at byte 8
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]  // offset size 1, reference size 1
        bytes += [0, 0, 0, 0, 0, 0, 0, 1]  // one object
        bytes += [0, 0, 0, 0, 0, 0, 0, 0]  // top: object 0
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]  // offset table's offset
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

    @Test func aNativeArchiveIsRefusedWithWhatConvertTakesAndWhereItsJSONIs() throws {
        let folder = try ScratchFolder()
        let file = folder.file("archive")
        try Archive.encode("native").write(to: file)
        let run = try ToolRun(["convert", file.path, "--to", "json"])
        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        #expect(run.errors.contains("\(file.path) is a native archive"), "\(run.errors)")
        #expect(run.errors.contains("convert takes binary and XML property lists, NSKeyedArchiver archives among them"))
        #expect(run.errors.contains("archivist inspect --json \(file.path)"))
        #expect(!run.errors.contains("bad magic"))

        let other = folder.file("text")
        try Data("just text".utf8).write(to: other)
        let text = try ToolRun(["convert", other.path, "--to", "xml"])
        #expect(text.status == 1)
        #expect(
            text.errors.contains("(convert takes binary and XML property lists, NSKeyedArchiver archives among them)"),
            "\(text.errors)"
        )
    }

    @Test func aMissingFileIsSaidToBeMissing() throws {
        let missing = "/nonexistent-\(UUID().uuidString).plist"
        let run = try ToolRun(["convert", missing, "--to", "json"])
        #expect(run.status == 1)
        #expect(run.errors == "archivist convert: \(missing): no such file or folder\n", "\(run.errors)")
    }

    @Test func graphWritesTheResolvedObjectsWithSharedOnesAndCyclesAsReferences() throws {
        let folder = try ScratchFolder()
        let file = try SharedValuesArchive.write(in: folder)
        let run = try ToolRun(["convert", file.path, "--to", "json", "--graph"])
        #expect(run.status == 0, "\(run.errors)")
        let graph = try run.object()
        let root = try graph.member("root", as: [String: Any].self)
        #expect(root["$class"] as? String == "Task")
        #expect((root["$id"] as? NSNumber)?.intValue == 1)  // referred to again by the child
        #expect(root["done"] as? Bool == true && root["seen"] as? Bool == true)  // a shared value, written at both
        #expect(root["title"] as? String == "Write the guide" && root["subtitle"] as? String == "Write the guide")
        let subtasks = try root.member("subtasks", as: [[String: Any]].self)
        #expect(subtasks.count == 2)
        #expect(subtasks[0]["$class"] as? String == "Task")
        #expect((subtasks[0]["$id"] as? NSNumber)?.intValue == 7)
        #expect(subtasks[0]["title"] as? String == "Write the guide")
        let parent = try subtasks[0].member("parent", as: [String: Any].self)
        #expect(parent.count == 1 && (parent["$ref"] as? NSNumber)?.intValue == 1)  // the cycle
        #expect(subtasks[1].count == 1 && (subtasks[1]["$ref"] as? NSNumber)?.intValue == 7)  // shared

        // Without --graph, the table as it is.
        let raw = try ToolRun(["convert", file.path, "--to", "json"])
        #expect(try raw.object()["$objects"] is [Any])
        #expect(try ToolRun(["convert", file.path, "--to", "xml", "--graph"]).status == 2)
    }

    @Test(.needsKeyedArchiveFixtures) func graphOfANoteFromAnApplePlatformReadsAsTheNote() throws {
        let directory = try #require(
            KeyedArchiveFixtures.directory(),
            Comment(rawValue: KeyedArchiveFixtures.missingMessage)
        )
        let run = try ToolRun([
            "convert", directory.appendingPathComponent(Self.notePath).path, "--to", "json", "--graph",
        ])
        #expect(run.status == 0, "\(run.errors)")
        let note = try run.object().member("root", as: [String: Any].self)
        #expect(note["title"] as? String == "Some cool title")
        #expect(note["author"] as? String == "Michael Wright")
        #expect(try note.member("array", as: [Any].self).count == 3)
    }
}
#endif
