import ArchivistInspection
import Foundation
import Testing

/// The tool's own argument parsing, and its commands called in the process (as the
/// executable calls them) with their output buffered.
@Suite struct ArgumentsTests {
    @Test func flagsOptionsAndPositionalsSplitByTheGrammar() throws {
        let parsed = try Arguments(
            ["ROOT", "--json", "--type", "hots", "--user=alice", "--", "--odd"],
            flags: ["--json"],
            options: ["--type", "--user"]
        )
        #expect(parsed.positionals == ["ROOT", "--odd"])
        #expect(parsed.has("--json"))
        #expect(parsed.option("--type") == "hots")
        #expect(parsed.option("--user") == "alice")
    }

    @Test(arguments: [
        (["--nope"], "unknown option --nope"),
        (["--type"], "--type needs a value"),
        (["--type", "a", "--type", "b"], "--type given twice"),
        (["--json=yes"], "unknown option --json"),
    ])
    func commandLinesOutsideTheGrammarAreUsageErrors(arguments: [String], message: String) {
        #expect(throws: Arguments.UsageError.self) { try Arguments(arguments, flags: ["--json"], options: ["--type"]) }
        do {
            _ = try Arguments(arguments, flags: ["--json"], options: ["--type"])
        } catch {
            #expect("\(error)" == message)
        }
    }

    @Test func runningInTheProcessBuffersOutputAndAnswersWithTheStatus() {
        var output = ToolOutput()
        #expect(ArchivistTool.run(["help", "verify"], output: &output) == ArchivistTool.success)
        #expect(output.standardOutputText.hasPrefix("usage: archivist verify ROOT..."))
        var failing = ToolOutput()
        #expect(ArchivistTool.run(["inspect"], output: &failing) == ArchivistTool.usage)
        #expect(failing.standardError.contains("inspect needs a FILE"))
        var missing = ToolOutput()
        #expect(
            ArchivistTool.run(["inspect", "/nonexistent/archivist-file"], output: &missing) == ArchivistTool.damage
        )
        #expect(missing.standardOutputText.isEmpty)
        #expect(missing.standardError == "archivist inspect: /nonexistent/archivist-file: no such file or folder\n")
    }

    @Test func jsonTextKeepsKeyOrderAndEscapes() {
        let value = JSONValue.object([
            ("b", .int(1)), ("a", .string("line\n\"quoted\"\u{1}")), ("c", .array([.null, .bool(true), .double(2)])),
        ])
        #expect(value.text() == #"{"b":1,"a":"line\n\"quoted\"\u0001","c":[null,true,2.0]}"#)
        #expect(JSONValue.double(.nan).text() == #""nan""#)
    }
}
