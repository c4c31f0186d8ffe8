// Runs the archivist tool and worker processes: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistInspection
import ArchivistTestSupport
import Foundation
import Testing
@testable import Archivist
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `archivist verify` finds each kind of damage a root can suffer — a flipped byte, a
/// truncation, an entry under another key's name, a folder where an entry belongs, a stray
/// temporary, an index that disagrees with the files — and `--repair` fixes all of it while
/// another process keeps writing to the root.
@Suite struct VerifyRepairTests {
    /// Damages every entry of `fixture`, one way each; returns each damaged entry's path below
    /// the root with the kind of finding it must produce.
    static func damage(_ fixture: ToolRootFixture) throws -> [(path: String, kind: String)] {
        let root = fixture.root
        func relative(_ url: URL) -> String { String(url.path.dropFirst(root.path.count + 1)) }
        var expected: [(String, String)] = []

        let flipped = try fixture.file(.productList)  // a flipped payload byte
        var bytes = try Data(contentsOf: flipped)
        bytes[bytes.count - 3] ^= 0x40
        try bytes.write(to: flipped)
        expected.append((relative(flipped), "corrupt"))

        let truncated = try fixture.file(.apiStrategy, "/v1/orders")  // a truncation
        #expect(truncate(truncated.path, 30) == 0)
        expected.append((relative(truncated), "corrupt"))
        expected.append((relative(truncated), "index"))  // its size is not the index's

        let moved = try fixture.file(.apiStrategy, "/v1/users")  // under another key's name
        let misplaced = moved.deletingLastPathComponent().appendingPathComponent(MD5.hexDigest(of: "/v1/other"))
        try FileManager.default.moveItem(at: moved, to: misplaced)
        expected.append((relative(misplaced), "misplaced"))
        expected.append((relative(misplaced), "index"))  // a file the index does not count
        expected.append((relative(moved), "index"))  // and a record without its file

        let replaced = try fixture.file(.shortLived)  // a folder where an entry belongs
        try FileManager.default.removeItem(at: replaced)
        try FileManager.default.createDirectory(at: replaced, withIntermediateDirectories: false)
        expected.append((relative(replaced), "not a file"))
        expected.append((relative(replaced), "index"))  // the index counts an entry file there

        let unlinked = try fixture.file(.userOrderList)  // the index off: a file gone behind its back
        #expect(unlink(unlinked.path) == 0)
        expected.append((relative(unlinked), "index"))

        let message = try fixture.file(.message)  // a flipped header byte
        var header = try Data(contentsOf: message)
        header[20] ^= 0x01
        try header.write(to: message)
        expected.append((relative(message), "corrupt"))

        // A temporary of a writer long gone (older than TemporaryName.abandonAge).
        let temporary = flipped.deletingLastPathComponent().appendingPathComponent(".tmp-99999.1.2.3")
        try Data(repeating: 1, count: 100).write(to: temporary)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3_600)],
            ofItemAtPath: temporary.path
        )
        expected.append((relative(temporary), "stray temporary"))
        return expected
    }

    @Test func verifyFindsEachKindOfDamage() throws {
        let fixture = try ToolRootFixture()
        let clean = try ToolRun(["verify", fixture.root.path, "--json"])
        #expect(clean.status == 0, "\(clean.output)")
        #expect(try clean.object()["damaged"] as? Bool == false)

        let expected = try Self.damage(fixture)
        let run = try ToolRun(["verify", fixture.root.path, "--json"])
        #expect(run.status == 1)
        let report = try run.object()
        #expect(report["damaged"] as? Bool == true)
        let findings = try report.member("findings", as: [[String: Any]].self)
        for (path, kind) in expected {
            #expect(
                findings.contains { $0["path"] as? String == path && $0["kind"] as? String == kind },
                "no \(kind) finding for \(path) in \(findings)"
            )
        }
        #expect(findings.count == expected.count, "\(findings)")
        #expect(!run.output.contains("StorageError"), "the reasons name no internal type: \(run.output)")
        let index = try report.member("index", as: [String: Any].self)
        #expect(index["agrees"] as? Bool == false)

        let text = try ToolRun(["verify", fixture.root.path])
        #expect(text.status == 1)
        #expect(text.output.contains("\(expected.count) problems found:"))
        #expect(text.output.contains("stray temporary: "))
    }

    @Test func verifyNamesADamagedEntryByTypeAndParameterWhereItsHeaderReads() throws {
        let fixture = try ToolRootFixture()
        func relative(_ url: URL) -> String { String(url.path.dropFirst(fixture.root.path.count + 1)) }
        let orders = try fixture.file(.apiStrategy, "/v1/orders")  // the payload cut short
        #expect(truncate(orders.path, off_t(ToolRootFixture.size(orders) - 3)) == 0)
        let products = try fixture.file(.productList)  // a payload byte flipped
        var bytes = try Data(contentsOf: products)
        bytes[bytes.count - 3] ^= 0x40
        try bytes.write(to: products)
        let message = try fixture.file(.message)  // the header's own bytes
        var header = try Data(contentsOf: message)
        header[20] ^= 0x01
        try header.write(to: message)

        let run = try ToolRun(["verify", fixture.root.path, "--json"])
        #expect(run.status == 1)
        let findings = try run.object().member("findings", as: [[String: Any]].self)
        func finding(_ url: URL, _ kind: String) throws -> [String: Any] {
            try #require(
                findings.first { $0["path"] as? String == relative(url) && $0["kind"] as? String == kind },
                "\(findings)"
            )
        }
        #expect(try finding(orders, "corrupt")["type"] as? String == "apiStrategy")
        #expect(try finding(orders, "corrupt")["parameter"] as? String == "/v1/orders")
        #expect(try finding(orders, "index")["type"] as? String == "apiStrategy")  // its size is not the index's
        #expect(try finding(products, "corrupt")["type"] as? String == "productList")
        #expect(try finding(products, "corrupt")["parameter"] is NSNull)
        #expect(try finding(message, "corrupt")["type"] is NSNull)

        let text = try ToolRun(["verify", fixture.root.path])
        #expect(
            text.output.contains("  corrupt: apiStrategy \"/v1/orders\" at \(relative(orders)): "),
            "\(text.output)"
        )
        #expect(text.output.contains("  corrupt: productList at \(relative(products)): "), "\(text.output)")
        #expect(text.output.contains("  corrupt: \(relative(message)): "), "\(text.output)")
    }

    /// How many of a `cache-write` worker's keys have a committed version in its progress file
    /// (0 while the file does not exist yet).
    static func committedWrites(_ progress: String) -> Int {
        guard let data = FileManager.default.contents(atPath: progress), data.count > 16 else { return 0 }
        return stride(from: 16, to: data.count - 7, by: 8).count { offset in
            data[offset..<offset + 8].contains { $0 != 0 }
        }
    }

    @Test func repairFixesEveryKindOfDamageWhileAnotherProcessWrites() throws {
        let fixture = try ToolRootFixture()
        let progress = fixture.folder.file("progress").path
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        // Runs until killed: stores, removes and reads back keys of its own type in the same root.
        let writer = try ChildProcess(worker, ["cache-write", fixture.root.path, "0", "11", "0", "48", progress])
        // The repair must overlap the writer's work, and the check below reads its progress file:
        // wait until the writer has committed a first write (a slow start under load is not a
        // writer that stopped).
        let deadline = Date(timeIntervalSinceNow: 600)
        while Self.committedWrites(progress) == 0 && Date() < deadline && waitpid(writer.pid, nil, WNOHANG) == 0 {
            usleep(10_000)
        }
        try #require(Self.committedWrites(progress) > 0, "the writer committed nothing in 10 minutes")
        _ = try Self.damage(fixture)
        let repair = try ToolRun(["verify", fixture.root.path, "--repair", "--json"])
        #expect(waitpid(writer.pid, nil, WNOHANG) == 0, "the writer stopped before the repair was done")
        _ = writer.kill()
        #expect(repair.status == 0, "\(repair.output)\n\(repair.errors)")
        let report = try repair.object()
        #expect(report["damaged"] as? Bool == false, "\(report["findings"] ?? "")")
        let repairs = try report.member("repairs", as: [String].self)
        #expect(repairs.filter { $0.hasPrefix("removed ") }.count == 6, "\(repairs)")
        #expect(repairs.contains("rebuilt the size index from the files"))

        // Every write the writer committed is there, sizes are exact, nothing of the damaged
        // entries is left (the check walks every file and the index).
        let check = try ChildProcess(worker, ["cache-check", fixture.root.path, "1", "48", progress])
        ChildProcess.waitForAll([check])
        let after = try ToolRun(["verify", fixture.root.path])
        #expect(after.status == 0, "\(after.output)")
        #expect(after.output.contains("no damage found"))
    }
}
#endif
