// Runs the archivist tool as a process: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistInspection
import Foundation
import Testing
@testable import Archivist

/// `archivist inspect` shows a value an NSKeyedArchiver archive stores once for several places
/// (a uniqued number or string) by its value at each, and an object met again as a reference.
@Suite struct InspectSharedValuesTests {
    @Test func aSharedValueIsShownByItsValueWhereverItIsReferredTo() throws {
        let folder = try ScratchFolder()
        let file = try SharedValuesArchive.write(in: folder)
        let text = try ToolRun(["inspect", file.path])
        #expect(text.status == 0, "\(text.output)")
        let lines = text.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains("done: @2 true"), "\(text.output)")
        #expect(lines.contains("seen: true (shared @2)"), "\(text.output)")
        #expect(lines.contains("title: \"Write the guide\" (shared @4)"), "\(text.output)")
        #expect(lines.contains("parent: → @1 (cycle)"), "\(text.output)")
        #expect(lines.contains("[1]: → @7 (shared)"), "\(text.output)")

        let json = try ToolRun(["inspect", file.path, "--json"])
        let nodes = try json.object().member("nodes", as: [[String: Any]].self)
        let root = try #require(nodes.first { $0["key"] as? String == "root" })
        let seen = try #require(
            try root.member("children", as: [[String: Any]].self).first { $0["key"] as? String == "seen" }
        )
        #expect(seen["kind"] as? String == "bool")
        #expect(seen["value"] as? Bool == true)
        #expect(seen["ref"] as? String == "@2")
    }
}
#endif
