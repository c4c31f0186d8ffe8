import ArchivistInspection
import Foundation
import Testing

@testable import Archivist

/// The `archivist` tool as a shell user expects it: errors on standard error and the report
/// (or parseable JSON) on standard output, a missing path called missing, a folder inside a
/// root pointed at its root, a type or user the root does not hold refused with what it holds,
/// and counts that agree with their nouns.
@Suite struct ToolShellConventionsTests {
    // Runs the archivist tool as a process: macOS and Linux only.
    #if os(macOS) || os(Linux)
    @Test func inspectingAMissingFileSaysSoOnStandardErrorNotAsDamage() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/file"
        let text = try ToolRun(["inspect", missing])
        #expect(text.status == 1)
        #expect(text.output.isEmpty, "\(text.output)")
        #expect(text.errors.contains("\(missing): no such file"), "\(text.errors)")
        #expect(!text.errors.contains("DAMAGE") && !text.output.contains("DAMAGE"))

        let json = try ToolRun(["inspect", missing, "--json"])
        #expect(json.status == 1)
        let object = try json.object()  // standard output stays JSON
        #expect(object["path"] as? String == missing)
        #expect((object["error"] as? String)?.contains("no such file") == true, "\(object)")
        #expect(json.errors.contains("no such file"), "\(json.errors)")
    }

    @Test func inspectingAMissingFileBesideAGoodOneKeepsTheGoodOnesReport() throws {
        let folder = try ScratchFolder()
        let good = folder.file("good.archive")
        try Archive.encode("fine").write(to: good)
        let missing = folder.file("missing.archive").path
        let run = try ToolRun(["inspect", good.path, missing, "--json"])
        #expect(run.status == 1)
        let reports = try #require(try run.json() as? [[String: Any]], "\(run.output)")
        #expect(reports.count == 2)
        #expect(reports[0]["kind"] as? String == "native archive")
        #expect(reports[1]["error"] as? String == "no such file or folder")
        #expect(run.errors == "archivist inspect: \(missing): no such file or folder\n")
    }

    @Test(arguments: ["ls", "verify", "stats", "clear"])
    func aMissingRootIsSaidNotToExist(command: String) throws {
        let missing = "/nonexistent-\(UUID().uuidString)"
        let run = try ToolRun([command, missing])
        #expect(run.status == 2)
        #expect(run.output.isEmpty)
        #expect(run.errors == "archivist \(command): \(missing): no such file or folder\n", "\(run.errors)")
    }

    @Test func aFolderOrFileInsideARootNamesTheRoot() throws {
        let fixture = try ToolRootFixture()
        let root = fixture.root.standardizedFileURL.path
        let inside = fixture.root.appendingPathComponent("shared-caches").path
        let ls = try ToolRun(["ls", inside])
        #expect(ls.status == 2)
        #expect(
            ls.errors == "archivist ls: \(inside) is inside the cache root \(root); run archivist ls \(root)\n",
            "\(ls.errors)"
        )
        let verify = try ToolRun(["verify", fixture.root.appendingPathComponent(".archivist").path])
        #expect(verify.errors.contains("run archivist verify \(root)"), "\(verify.errors)")

        let file = try fixture.file(.productList).path
        let onFile = try ToolRun(["ls", file])
        #expect(onFile.status == 2)
        #expect(onFile.errors.contains("\(file) is a file in the cache root \(root)"), "\(onFile.errors)")
        #expect(onFile.errors.contains("archivist inspect \(file)"))

        let folder = try ScratchFolder()
        let plain = try ToolRun(["ls", folder.url.path])
        #expect(plain.errors.contains("is not a cache root"), "\(plain.errors)")
    }

    @Test func clearingATypeTheRootDoesNotHoldIsAUsageErrorListingItsTypes() throws {
        let fixture = try ToolRootFixture()
        let run = try ToolRun(["clear", fixture.root.path, "--type", "productLits", "--json"])
        #expect(run.status == 2)
        #expect(run.output.isEmpty)
        #expect(run.errors.contains("holds no type \"productLits\""), "\(run.errors)")
        #expect(
            run.errors.contains("its types: apiStrategy, message, productList, shortLived, userOrderList"),
            "\(run.errors)"
        )
        #expect(run.errors.contains(MD5.hexDigest(of: "alice")))
        #expect(fixture.cache.contains(.productList) && fixture.cache.contains(.apiStrategy, parameter: "/v1/orders"))
    }

    @Test func clearingAUserTheRootDoesNotHoldIsAUsageErrorListingItsUsers() throws {
        let fixture = try ToolRootFixture()
        let run = try ToolRun(["clear", fixture.root.path, "--user", "bob"])
        #expect(run.status == 2)
        #expect(
            run.errors.contains("holds nothing of the user \"bob\" (folder \(MD5.hexDigest(of: "bob")))"),
            "\(run.errors)"
        )
        #expect(
            run.errors.contains("its users' folders (the MD5 of each user id): \(MD5.hexDigest(of: "alice"))"),
            "\(run.errors)"
        )
        #expect(fixture.cache.contains(.userOrderList) && fixture.cache.contains(.message))

        // Both known, but not together: nothing to clear, and no error.
        let none = try ToolRun(["clear", fixture.root.path, "--user", "alice", "--type", "productList"])
        #expect(none.status == 0, "\(none.errors)")
        #expect(none.output == "nothing to clear\n")
        #expect(fixture.cache.contains(.productList))
    }
    #endif

    @Test func countsAgreeWithTheirNouns() {
        #expect(Formatting.count(1, "entry", plural: "entries") == "1 entry")
        #expect(Formatting.count(0, "entry", plural: "entries") == "0 entries")
        #expect(Formatting.count(2, "entry", plural: "entries") == "2 entries")
        #expect(Formatting.count(1, "byte") == "1 byte")
        #expect(Formatting.count(12_345, "byte") == "12,345 bytes")
    }

    // Runs the archivist tool as a process: macOS and Linux only.
    #if os(macOS) || os(Linux)
    @Test func aRootOfOneEntryIsVerifiedAsOneEntry() throws {
        let folder = try ScratchFolder()
        let root = folder.url.appendingPathComponent("root", isDirectory: true)
        let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: root))
        try cache.store("x", for: .apiStrategy, parameter: "/one")
        try cache.flush()
        let run = try ToolRun(["verify", root.path])
        #expect(run.status == 0, "\(run.output)")
        let lines = run.output.split(separator: "\n")
        #expect(
            lines.first?.hasSuffix(": 1 entry, " + Formatting.bytes(Int64(cache.totalSize))) == true,
            "\(run.output)"
        )
        #expect(lines.contains { $0.hasPrefix("index: 1 entry, ") }, "\(run.output)")

        let file = try #require(try cache.info(for: .apiStrategy, parameter: "/one")).fileURL
        let size = ToolRootFixture.size(file)
        let inspect = try ToolRun(["inspect", file.path])
        #expect(inspect.output.hasPrefix("\(file.path): cache entry, \(Formatting.count(size, "byte"))\n"))
        let one = folder.file("one.archive")
        try Archive.encode(Data([7])).write(to: one)
        #expect(try ToolRun(["inspect", one.path]).output.contains("root: data, 1 byte: 07"))
    }
    #endif
}
