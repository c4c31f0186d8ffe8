// Runs the archivist tool as a process (Foundation's Process): macOS and Linux only.
#if os(macOS) || os(Linux)
import Foundation
import Testing

/// The `archivist` tool run as a process, as a user runs it: its exit status, standard output
/// and standard error, and its JSON output parsed.
struct ToolRun {
    var status: Int32
    var output: String
    var errors: String

    /// Runs the `archivist` executable `swift test` built beside the tests with `arguments`.
    /// `ARCHIVIST_TOOL` overrides where it is looked for.
    init(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let tool = try #require(
            executableNextToTests(named: "archivist", override: "ARCHIVIST_TOOL"),
            "the archivist executable is not built next to the tests",
            sourceLocation: sourceLocation
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "archivist-tool-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputFile = folder.appendingPathComponent("out")
        let errorFile = folder.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        process.waitUntilExit()
        status = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        output = String(decoding: try Data(contentsOf: outputFile), as: UTF8.self)
        errors = String(decoding: try Data(contentsOf: errorFile), as: UTF8.self)
    }

    /// Standard output parsed as JSON.
    func json(sourceLocation: SourceLocation = #_sourceLocation) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(output.utf8), options: [.fragmentsAllowed])
    }

    /// Standard output parsed as a JSON object.
    func object(sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        try #require(
            try json() as? [String: Any],
            "not a JSON object: \(output.prefix(300))",
            sourceLocation: sourceLocation
        )
    }
}

extension Dictionary where Key == String, Value == Any {
    /// The member `key` as a `T`, or a failed requirement.
    func member<T>(_ key: String, as _: T.Type = T.self, sourceLocation: SourceLocation = #_sourceLocation) throws -> T
    {
        try #require(
            self[key] as? T,
            "member \(key) is \(String(describing: self[key]))",
            sourceLocation: sourceLocation
        )
    }

    /// The integer member `key`.
    func int(_ key: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        try #require(
            (self[key] as? NSNumber)?.intValue,
            "member \(key) is \(String(describing: self[key]))",
            sourceLocation: sourceLocation
        )
    }
}
#endif
