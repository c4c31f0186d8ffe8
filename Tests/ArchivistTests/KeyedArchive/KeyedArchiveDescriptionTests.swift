import Foundation
import Testing

@testable import ArchivistKeyedArchive

/// `KeyedArchive`'s description is one line — root class, object count, size — never its table.
@Suite struct KeyedArchiveDescriptionTests {
    @Test func describesTheRootTheObjectCountAndTheSize() throws {
        let strings = (0..<1_200).map { "string \($0)" }
        let data = try KeyedArchiveWriter.encode(strings)
        let archive = try KeyedArchive(data: data)

        let expected =
            "KeyedArchive(root: NSArray, \(KeyedArchive.grouped(archive.objects.count)) objects, "
            + "\(KeyedArchive.size(data.count)))"
        #expect(archive.description == expected)
        #expect(archive.debugDescription == expected)
        #expect(String(describing: archive) == expected)
        #expect(archive.objects.count > 1_200)
        #expect(archive.description.contains(" 1,2"))  // 1,2xx objects, grouped
        #expect(!archive.description.contains("string 7"))
    }

    @Test func namesAnInstanceRootByItsClass() throws {
        struct Note: Codable, KeyedArchiveClassNamed {
            static let keyedArchiveClassChain = ["MyApp.Note", "NSObject"]
            var title: String
        }
        let archive = try KeyedArchive(data: try KeyedArchiveWriter.encode(Note(title: "Groceries")))
        #expect(archive.description.hasPrefix("KeyedArchive(root: MyApp.Note, "))
        #expect(archive.description.hasSuffix(" bytes)"))
    }

    @Test func formatsCountsAndSizes() {
        #expect(KeyedArchive.grouped(0) == "0")
        #expect(KeyedArchive.grouped(999) == "999")
        #expect(KeyedArchive.grouped(1_204) == "1,204")
        #expect(KeyedArchive.grouped(12_345_678) == "12,345,678")
        #expect(KeyedArchive.size(1) == "1 byte")
        #expect(KeyedArchive.size(999) == "999 bytes")
        #expect(KeyedArchive.size(1_000) == "1.00 KB")
        #expect(KeyedArchive.size(1_379) == "1.38 KB")
        #expect(KeyedArchive.size(310_000) == "310 KB")
        #expect(KeyedArchive.size(999_600) == "1.00 MB")
        #expect(KeyedArchive.size(5_420_000) == "5.42 MB")
    }
}
