import ArchivistInspection
import Foundation
import Testing

@testable import Archivist

/// An entry moved into another type's folder — keeping its file name, so it sits exactly where
/// that type's entry belongs — is misplaced: `archivist verify` reports it, `--repair` removes
/// it, and that type's reads then miss instead of failing with an entry mismatch.
@Suite struct VerifyMovedEntryTests {
    @Test(arguments: [false, true])
    func anEntryInAnotherTypesFolderIsFoundAndRemoved(replacing: Bool) throws {
        let fixture = try ToolRootFixture()
        let root = fixture.root
        func relative(_ url: URL) -> String { String(url.path.dropFirst(root.path.count + 1)) }
        // The product list's `value` file, moved to where `hots`' entry belongs (none there yet)
        // or over the `shortLived` entry.
        let moved = try fixture.file(.productList)
        let typeFolder = moved.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(
                MD5.hexDigest(of: (replacing ? ShopCache.shortLived : .hots).rawValue),
                isDirectory: true
            )
        try FileManager.default.createDirectory(
            at: typeFolder,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let target = typeFolder.appendingPathComponent("value")
        if replacing { try FileManager.default.removeItem(at: target) }
        try FileManager.default.moveItem(at: moved, to: target)

        let run = try ToolRun(["verify", root.path, "--json"])
        #expect(run.status == 1, "\(run.output)")
        let findings = try run.object().member("findings", as: [[String: Any]].self)
        #expect(
            findings.contains { $0["path"] as? String == relative(target) && $0["kind"] as? String == "misplaced" },
            "no misplaced finding for \(relative(target)) in \(findings)"
        )

        let repair = try ToolRun(["verify", root.path, "--repair", "--json"])
        #expect(repair.status == 0, "\(repair.output)\n\(repair.errors)")
        let report = try repair.object()
        #expect(report["damaged"] as? Bool == false, "\(report["findings"] ?? "")")
        let repairs = try report.member("repairs", as: [String].self)
        // A repair line names the entry as its header does, then where it was: "removed
        // productList at shared-caches/…/value: …".
        #expect(repairs.contains { $0.hasPrefix("removed ") && $0.contains(" at \(relative(target)): ") }, "\(repairs)")
        #expect(!FileManager.default.fileExists(atPath: target.path), "the misplaced entry was kept")

        // A manager opened after the repair: a miss for both types, no error; the rest is intact.
        let cache = try CacheManager<ShopCache>(root: CacheRoot(directory: root), user: "alice")
        #expect(try cache.value(String.self, for: replacing ? .shortLived : .hots) == nil)
        #expect(try cache.value([Product].self, for: .productList) == nil)
        #expect(try cache.value(String.self, for: .apiStrategy, parameter: "/v1/orders") == "orders strategy")
        #expect(cache.totalUsage.entryCount == (replacing ? 4 : 5))
    }
}
