// Runs the archivist tool as a process: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistInspection
import ArchivistTestSupport
import Foundation
import Testing
@testable import Archivist

/// The `archivist` tool run as a process on roots the library made: `ls`, `inspect`, `stats`,
/// `clear`, and what every command answers to `--help` and to a bad command line.
@Suite struct ArchivistToolTests {
    @Test func listsEachLocationUserAndTypeWithCountsBytesAndExpiry() throws {
        let fixture = try ToolRootFixture()
        let run = try ToolRun(["ls", fixture.root.path, "--json"])
        #expect(run.status == 0, "\(run.errors)")
        let listing = try run.object()
        #expect(try listing.member("root", as: String.self) == fixture.root.path)
        let groups = try listing.member("groups", as: [[String: Any]].self)
        func group(_ type: String) throws -> [String: Any] {
            try #require(groups.first { $0["type"] as? String == type }, "no group \(type) in \(groups)")
        }
        #expect(groups.count == 5)
        let alice = MD5.hexDigest(of: "alice")
        let expected: [(type: String, location: String, user: String?, entries: Int, expired: Int, files: [URL])] = [
            ("productList", "shared-caches", nil, 1, 0, [try fixture.file(.productList)]),
            (
                "apiStrategy", "shared-caches", nil, 2, 0,
                [try fixture.file(.apiStrategy, "/v1/orders"), try fixture.file(.apiStrategy, "/v1/users")]
            ),
            ("shortLived", "shared-caches", nil, 1, 1, [try fixture.file(.shortLived)]),
            ("userOrderList", "user-caches", alice, 1, 0, [try fixture.file(.userOrderList)]),
            ("message", "user-documents", alice, 1, 0, [try fixture.file(.message)]),
        ]
        for entry in expected {
            let found = try group(entry.type)
            #expect(found["location"] as? String == entry.location)
            #expect(found["user"] as? String == entry.user)
            #expect(try found.int("entries") == entry.entries)
            #expect(try found.int("expired") == entry.expired)
            #expect(try found.int("bytes") == entry.files.map(ToolRootFixture.size).reduce(0, +))
            #expect(try found.int("unreadable") == 0)
            #expect(found["oldest"] is String && found["newest"] is String)
        }
        // The index counts what ls counts.
        #expect(groups.map { (($0["bytes"] as? NSNumber)?.intValue ?? 0) }.reduce(0, +) == fixture.cache.totalSize)
    }

    @Test func listsEveryEntryWithItsTypeNameParameterSizeAndExpiry() throws {
        let fixture = try ToolRootFixture()
        let run = try ToolRun(["ls", fixture.root.path, "--entries", "--json"])
        #expect(run.status == 0)
        let entries = try run.object().member("entries", as: [[String: Any]].self)
        #expect(entries.count == 6)
        let users = try #require(entries.first { $0["parameter"] as? String == "/v1/users" })
        #expect(users["type"] as? String == "apiStrategy")
        #expect(try users.int("size") == ToolRootFixture.size(try fixture.file(.apiStrategy, "/v1/users")))
        #expect(users["expiry"] is NSNull)
        #expect(users["expired"] as? Bool == false)
        #expect(
            users["path"] as? String
                == "shared-caches/\(MD5.hexDigest(of: "apiStrategy"))/\(MD5.hexDigest(of: "/v1/users"))"
        )
        let stale = try #require(entries.first { $0["type"] as? String == "shortLived" })
        #expect(stale["parameter"] is NSNull)
        #expect(stale["expired"] as? Bool == true)
        let message = try #require(entries.first { $0["type"] as? String == "message" })
        #expect(message["expiry"] is String)
        #expect(message["expired"] as? Bool == false)

        let text = try ToolRun(["ls", fixture.root.path, "--entries"])
        #expect(text.status == 0)
        #expect(text.output.contains("apiStrategy"))
        #expect(text.output.contains("\"/v1/orders\""))
        #expect(text.output.contains("expired"))
        #expect(text.output.split(separator: "\n").contains { $0.hasPrefix("total") && $0.contains(" 6 ") })
    }

    @Test func listsAnEntryWhoseHeaderIsDamagedWithTheReasonInTheToolsWords() throws {
        let fixture = try ToolRootFixture()
        let file = try fixture.file(.productList)
        var bytes = try Data(contentsOf: file)
        bytes[0] ^= 0xFF  // the magic word
        try bytes.write(to: file)
        let run = try ToolRun(["ls", fixture.root.path, "--entries", "--json"])
        #expect(run.status == 0, "\(run.errors)")
        let entries = try run.object().member("entries", as: [[String: Any]].self)
        let damaged = try #require(entries.first { $0["problem"] is String }, "\(entries)")
        #expect(damaged["problem"] as? String == "not an Archivist entry (bad magic)")
        #expect(entries.count { $0["problem"] is String } == 1)
    }

    @Test func inspectsAnEntryWhoseHeaderIsTruncatedShowingItsFirstBytes() throws {
        let fixture = try ToolRootFixture()
        let file = try fixture.file(.productList)
        #expect(truncate(file.path, 30) == 0)
        let run = try ToolRun(["inspect", file.path, "--json"])
        let inspection = try run.object()
        #expect(inspection["kind"] as? String == "cache entry")
        #expect(
            inspection["damage"] as? [String] == ["the entry header does not read: truncated header"],
            "\(run.output)"
        )
        let nodes = try inspection.member("nodes", as: [[String: Any]].self)
        #expect(
            (nodes.first { $0["key"] as? String == "first bytes" }?["value"] as? String)?.hasPrefix("41524345") == true,
            "\(nodes)"
        )
    }

    @Test func inspectsACacheEntryFileHeaderAndPayload() throws {
        let fixture = try ToolRootFixture()
        let file = try fixture.file(.productList)
        let run = try ToolRun(["inspect", file.path, "--json"])
        #expect(run.status == 0, "\(run.output)")
        let inspection = try run.object()
        #expect(inspection["kind"] as? String == "cache entry")
        #expect(try inspection.int("size") == ToolRootFixture.size(file))
        #expect((inspection["damage"] as? [Any])?.isEmpty == true)
        let nodes = try inspection.member("nodes", as: [[String: Any]].self)
        let header = try #require(nodes.first { $0["key"] as? String == "entry header" })
        let fields = try header.member("children", as: [[String: Any]].self)
        #expect(fields.first { $0["key"] as? String == "type name" }?["value"] as? String == "productList")
        #expect((fields.first { $0["key"] as? String == "payload" }?["value"] as? String)?.hasSuffix(" ok") == true)
        #expect(fields.first { $0["key"] as? String == "place" }?["value"] as? String == "matches its names")
        let payload = try #require(nodes.first { $0["key"] as? String == "payload" })
        let root = try #require(
            try payload.member("children", as: [[String: Any]].self).first { $0["key"] as? String == "root" }
        )
        #expect(root["kind"] as? String == "array")
        #expect(try root.int("count") == 2)
        let first = try #require(try root.member("children", as: [[String: Any]].self).first)
        let values = try first.member("children", as: [[String: Any]].self)
        #expect(values.first { $0["key"] as? String == "name" }?["value"] as? String == "Tea")
        #expect((values.first { $0["key"] as? String == "price" }?["value"] as? NSNumber)?.doubleValue == 3.5)

        let text = try ToolRun(["inspect", file.path])
        #expect(text.output.contains("type name: \"productList\""))
        #expect(text.output.contains("name: \"Tea\""))
    }

    @Test func inspectShowsSharedObjectsAndCyclesAsReferencesAndElidesLongData() throws {
        let folder = try ScratchFolder()
        let user = makeUser(1, letters: 2)
        user.letters.append(user.letters[0])  // the same letter twice: shared
        let file = folder.file("graph.archive")
        try Archive.encode(user).write(to: file)
        let run = try ToolRun(["inspect", file.path, "--json"])
        #expect(run.status == 0, "\(run.output)")
        let nodes = try run.object().member("nodes", as: [[String: Any]].self)
        let root = try #require(nodes.first { $0["key"] as? String == "root" })
        #expect(root["kind"] as? String == "record")
        #expect(root["type"] as? String == "User")
        #expect(root["id"] as? String == "#0")
        let letters = try #require(
            try root.member("children", as: [[String: Any]].self).first { $0["key"] as? String == "letters" }
        )
        let elements = try letters.member("children", as: [[String: Any]].self)
        #expect(elements.count == 3)
        let back = try #require(
            try elements[0].member("children", as: [[String: Any]].self).first { $0["key"] as? String == "user" }
        )
        #expect(back["kind"] as? String == "reference")
        #expect(back["ref"] as? String == "#0")
        #expect(back["cycle"] as? Bool == true)
        #expect(elements[2]["kind"] as? String == "reference")
        #expect(elements[2]["ref"] as? String == elements[0]["id"] as? String)
        #expect(elements[2]["cycle"] as? Bool == false)

        let blob = folder.file("blob.archive")
        try Archive.encode(Data(repeating: 7, count: 1_000_000)).write(to: blob)
        let data = try ToolRun(["inspect", blob.path])
        #expect(data.output.contains("data, 1,000,000 bytes: 07070707070707070707070707070707…"))
        #expect(data.output.count < 1_000)
    }

    @Test func inspectsARecordStoreFolderItsSnapshotBatchesAndATornTail() throws {
        let folder = try ScratchFolder()
        let directory = folder.url.appendingPathComponent("records")
        do {
            let store = try RecordStore<PetRecord>(directory: directory, configuration: PetRecord.allowingDogs)
            try store.upsert(PetRecord.numbered(0))
            try store.upsert(PetRecord.numbered(1))
            try store.delete(id: "pet-0")
        }
        let clean = try ToolRun(["inspect", directory.path, "--json"])
        #expect(clean.status == 0, "\(clean.output)")
        let inspection = try clean.object()
        #expect(inspection["kind"] as? String == "record store")
        let log = try #require(
            try inspection.member("nodes", as: [[String: Any]].self).first { $0["key"] as? String == "log" }
        )
        #expect((log["detail"] as? String)?.contains("3 batches (2 upserts, 1 delete)") == true)

        // A torn append: a length that promises more bytes than follow.
        let handle = try FileHandle(forWritingTo: directory.appendingPathComponent("records.log"))
        try handle.seekToEnd()
        handle.write(Data([0xFF, 0x00, 0x00, 0x00, 0x01, 0x02]))
        try handle.close()
        let torn = try ToolRun(["inspect", directory.path])
        #expect(torn.status == 1)
        #expect(torn.output.contains("DAMAGE: records.log: a torn entry at byte"))
    }

    @Test func statisticsOfTheToolEqualTheLibrarysAfterAScriptedSequence() throws {
        let fixture = try ToolRootFixture()
        let cache = fixture.cache
        cache.resetStatistics()
        for _ in 0..<4 { _ = try cache.value([Product].self, for: .productList) }  // 4 memory hits
        _ = try cache.value(String.self, for: .apiStrategy, parameter: "/nothing")  // miss
        _ = try cache.value(String.self, for: .shortLived)  // expired read
        try cache.store("again", for: .apiStrategy, parameter: "/v1/orders")  // store
        try cache.removeValue(for: .apiStrategy, parameter: "/v1/orders")  // removal
        let other = try CacheManager<ShopCache>(root: CacheRoot(directory: fixture.root), user: "alice")
        _ = try other.value([Product].self, for: .userOrderList)  // disk hit
        let library = cache.statistics
        let run = try ToolRun(["stats", fixture.root.path, "--json"])
        #expect(run.status == 0)
        let report = try run.object()
        #expect(report["available"] as? Bool == true)
        let types = try report.member("types", as: [[String: Any]].self)
        func counts(_ name: String) throws -> [String: Any] {
            try #require(types.first { $0["type"] as? String == name })
        }
        for (name, expected) in library.types {
            let found = try counts(name)
            #expect(try found.int("memoryHits") == Int(expected.memoryHits), "\(name)")
            #expect(try found.int("diskHits") == Int(expected.diskHits), "\(name)")
            #expect(try found.int("misses") == Int(expected.misses), "\(name)")
            #expect(try found.int("expiredReads") == Int(expected.expiredReads), "\(name)")
            #expect(try found.int("stores") == Int(expected.stores), "\(name)")
            #expect(try found.int("removals") == Int(expected.removals), "\(name)")
            #expect(try found.int("bytesRead") == Int(expected.bytesRead), "\(name)")
            #expect(try found.int("bytesWritten") == Int(expected.bytesWritten), "\(name)")
            #expect(try found.int("timedReads") == Int(expected.timedReads), "\(name)")
        }
        #expect(try counts("productList").int("memoryHits") == 4)
        #expect(try counts("apiStrategy").int("misses") == 1)
        #expect(try counts("apiStrategy").int("stores") == 1)
        #expect(try counts("apiStrategy").int("removals") == 1)
        #expect(try counts("shortLived").int("expiredReads") == 1)
        #expect(try counts("userOrderList").int("diskHits") == 1)
        #expect(try counts("userOrderList")["location"] as? String == "user-caches")
        let total = try report.member("total", as: [String: Any].self)
        #expect(try total.int("reads") == 7)

        let text = try ToolRun(["stats", fixture.root.path])
        #expect(text.output.contains("productList"))
        #expect(text.output.contains("HIT RATE"))
        let reset = try ToolRun(["stats", fixture.root.path, "--reset"])
        #expect(reset.status == 0)
        #expect(cache.statistics.total.reads == 0)
    }

    @Test func clearsATypeThroughTheTrashAndEveryManagerSeesIt() throws {
        let fixture = try ToolRootFixture()
        #expect(fixture.cache.contains(.apiStrategy, parameter: "/v1/orders"))
        let run = try ToolRun(["clear", fixture.root.path, "--type", "apiStrategy", "--json"])
        #expect(run.status == 0, "\(run.errors)")
        let result = try run.object()
        #expect(
            try result.member("folders", as: [String].self) == ["shared-caches/\(MD5.hexDigest(of: "apiStrategy"))"]
        )
        #expect(try result.int("freed") > 10_000)
        #expect(!fixture.cache.contains(.apiStrategy, parameter: "/v1/orders"))
        #expect(try fixture.cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == nil)
        #expect(fixture.cache.contains(.productList))
        let trash = fixture.root.appendingPathComponent(".archivist/trash").path
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: trash)) ?? []).isEmpty)

        let user = try ToolRun(["clear", fixture.root.path, "--user", "alice"])
        #expect(user.status == 0)
        #expect(!fixture.cache.contains(.userOrderList) && !fixture.cache.contains(.message))
        #expect(fixture.cache.contains(.productList))
        #expect(try ToolRun(["clear", fixture.root.path]).status == 0)
        #expect(fixture.cache.totalSize == 0)
    }

    @Test(arguments: ["inspect", "ls", "verify", "stats", "clear", "convert"])
    func everyCommandAnswersHelp(command: String) throws {
        let run = try ToolRun([command, "--help"])
        #expect(run.status == 0)
        #expect(run.output.hasPrefix("usage: archivist \(command)"))
        #expect(run.output.contains("Exit status"))
    }

    @Test func badCommandLinesExitWithTwo() throws {
        let folder = try ScratchFolder()
        #expect(try ToolRun([]).status == 2)
        #expect(try ToolRun(["frobnicate"]).status == 2)
        #expect(try ToolRun(["ls"]).status == 2)
        #expect(try ToolRun(["ls", folder.url.path]).status == 2)  // not a cache root
        #expect(try ToolRun(["ls", "--bogus", folder.url.path]).status == 2)
        #expect(try ToolRun(["convert", "x.plist"]).status == 2)
        #expect(try ToolRun(["convert", "x.plist", "--to", "yaml"]).status == 2)
        let help = try ToolRun(["--help"])
        #expect(help.status == 0)
        #expect(
            ["inspect", "ls", "verify", "stats", "clear", "convert"].allSatisfy { help.output.contains("  \($0) ") }
        )
    }
}
#endif
