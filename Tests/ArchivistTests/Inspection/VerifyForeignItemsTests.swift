import Foundation
import Testing

/// `archivist verify` names the items under a root that are not Archivist's — the first five,
/// then an ellipsis when there are more — and leaves them alone: they are no damage.
@Suite struct VerifyForeignItemsTests {
    @Test(arguments: [5, 6])
    func theFirstFiveForeignItemsAreNamedThenAnEllipsis(count: Int) throws {
        let fixture = try ToolRootFixture()
        let shared = fixture.root.appendingPathComponent("shared-caches", isDirectory: true)
        for index in 1...count {
            try Data("not a cache entry".utf8).write(to: shared.appendingPathComponent("foreign-\(index)"))
        }
        let run = try ToolRun(["verify", fixture.root.path])
        #expect(run.status == 0, "\(run.output)")
        let listed = (1...5).map { "shared-caches/foreign-\($0)" }.joined(separator: ", ")
        #expect(
            run.output.contains("not Archivist's (left alone): " + listed + (count > 5 ? ", …\n" : "\n")),
            "\(run.output)"
        )
        #expect(!run.output.contains("foreign-6"))
        let json = try ToolRun(["verify", fixture.root.path, "--json"])
        #expect(try json.object().member("foreign", as: [String].self).count == count, "the JSON lists them all")
    }
}
