import Archivist
import ArchivistKeyedArchive
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `archivist` command line: each subcommand parses its arguments, does its work through
/// the types of this module, and answers with an exit status — 0 when all is well, 1 when
/// damage was found (or the work failed), 2 for a command line it does not accept.
///
/// ```swift
/// var output = ToolOutput()
/// let status = ArchivistTool.run(["ls", "/path/to/root"], output: &output)
/// print(output.standardOutputText)
/// ```
package enum ArchivistTool {
    /// The exit statuses.
    package static let success: Int32 = 0
    package static let damage: Int32 = 1
    package static let usage: Int32 = 2

    /// A subcommand: its name, one line of summary, its help text and what it does.
    struct Command: Sendable {
        var name: String
        var summary: String
        var help: String
        var flags: Set<String>
        var options: Set<String>
        var run: @Sendable (Arguments, inout ToolOutput) throws -> Int32
    }

    static let commands: [Command] = [
        Command(
            name: "inspect",
            summary: "show what a file or record store holds, as a tree",
            help: """
                usage: archivist inspect FILE... [--json]

                Recognises a cache entry file (its header: type name, parameter, dates, sizes and
                checksums, then its payload), a native archive, an NSKeyedArchiver archive (binary
                or XML), a plain property list, a RecordStore folder (snapshot, change log with
                its batches, quarantined parts), and a cache root's own .archivist folder and files
                (the size index snapshot and journal, the shared counters, the marker, the locks).
                Prints a tree: types, keys, values, object ids; shared objects and cycles appear as
                references (→ #3, → @5), a shared string or number as its value (true (shared @5));
                long data is cut, with its size. Bounded by ArchiveLimits: a hostile file gives an
                error, never a crash. A FILE that does not exist or cannot be read is reported on
                standard error.

                  --json   the same as JSON (nodes with key, kind, type, value, id, ref, children;
                           {"path", "error"} for a FILE that cannot be read)

                Exit status: 0 all checked out, 1 damage found (a checksum, a torn tail) or a FILE
                missing or unreadable, 2 usage.
                """,
            flags: ["--json"],
            options: [],
            run: inspect
        ),
        Command(
            name: "ls",
            summary: "list a cache root per location, user and type",
            help: """
                usage: archivist ls ROOT... [--entries] [--json]

                Per location, user (the MD5 folder of the user id) and type: entries, bytes, oldest
                and newest write, entries past their expiry. Type names and parameters come from
                each entry's header. Changes nothing.

                  --entries   also list every entry: type, parameter, size, age, expiry, file
                  --json      the same as JSON

                Exit status: 0, or 2 when ROOT does not exist or is not a cache root (a folder
                inside a root names the root).
                """,
            flags: ["--entries", "--json"],
            options: [],
            run: list
        ),
        Command(
            name: "verify",
            summary: "check every entry, the size index, temporaries and trash",
            help: """
                usage: archivist verify ROOT... [--repair] [--json]

                Reads every entry (header, checksums, that its names hash to its path, that it is a
                regular file), compares the size index with the files, looks for temporaries of
                writers that are gone and for trash. Changes nothing, unless:

                  --repair   removes damaged entries and stray temporaries, rebuilds the index,
                             empties the trash — with the library's own locks, so the processes
                             using the root may go on meanwhile — then verifies again
                  --json     the same as JSON

                Each damaged entry is named by its type and parameter when its header reads, and by
                its path below the root.

                Exit status: 0 no damage (after a repair: none left), 1 damage found, 2 usage.
                """,
            flags: ["--repair", "--json"],
            options: [],
            run: verify
        ),
        Command(
            name: "stats",
            summary: "per-type hit rates and counts from every process",
            help: """
                usage: archivist stats ROOT... [--reset] [--json]

                The statistics every process that opened the root has counted, per type: reads and
                hit rate (memory and disk hits, misses, expired reads), mean read and decode time,
                stores, removals, evictions by reason (byte limit / memory count / expiry), bytes
                read and written, errors by code. Read from the root's shared file, without a lock.
                A process adds its memory hits when it reads statistics, flushes, or exits.

                  --reset   set every counter to zero (for every process) after printing
                  --json    the same as JSON

                Exit status: 0, or 2 when ROOT does not exist or is not a cache root.
                """,
            flags: ["--reset", "--json"],
            options: [],
            run: stats
        ),
        Command(
            name: "clear",
            summary: "clear a root, a type or a user, through the trash",
            help: """
                usage: archivist clear ROOT [--type NAME] [--user ID] [--json]

                As CacheManager.clear: the folders are renamed into .archivist/trash under the
                root's lock and journaled, so every process using the root sees them gone at once;
                then the trash is deleted before the command returns.

                  --type NAME   only this cache type (in the shared caches and every user's folders)
                  --user ID     only this user's caches and documents (with --type: that type)
                  --json        the result as JSON (folders cleared, bytes freed)

                A type or user the root holds nothing of is a usage error, which lists the types
                (from the entries' headers) and user folders (the MD5 of each user id) it holds.

                Exit status: 0 cleared, 1 failed, 2 usage.
                """,
            flags: ["--json"],
            options: ["--type", "--user"],
            run: clear
        ),
        Command(
            name: "convert",
            summary: "write a keyed archive or property list as JSON, XML or binary",
            help: """
                usage: archivist convert FILE --to json|xml|binary [--graph] [--output PATH]

                Reads FILE (a binary or XML property list; NSKeyedArchiver archives are property
                lists) and writes it in the format asked for, to standard output or PATH. References
                (CF$UID) stay references, so an archive converted to XML and back is the same.
                JSON writes dates as ISO 8601, data as base64, a reference as {"CF$UID": n}.
                A native archive or a cache entry is no property list: `archivist inspect --json`
                writes those as JSON.

                  --graph   with --to json, an NSKeyedArchiver archive's object graph resolved
                            instead of its $objects table: {"$class": name, field: value, …} for
                            each object, arrays and dictionaries as JSON's own, strings and numbers
                            as values; an object met again (shared, or a cycle) is {"$ref": n},
                            n being the "$id" it carries where it is written out

                Exit status: 0 written, 1 FILE is missing, does not read or cannot be written so,
                2 usage.
                """,
            flags: ["--graph"],
            options: ["--to", "--output", "-o"],
            run: convert
        ),
    ]

    static let overview = """
        usage: archivist COMMAND [ARGUMENTS] — look inside Archivist caches, archives and stores

        commands:
        \(commands.map { "  " + $0.name.padding(toLength: 9, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

        `archivist COMMAND --help` describes each. Exit status: 0 all well, 1 damage found,
        2 usage.
        """

    /// Runs the command line `arguments` (without the program's name), writing to `output`.
    ///
    /// - Returns: The exit status.
    /// - Complexity: What the subcommand does; see each one's help.
    package static func run(_ arguments: [String], output: inout ToolOutput) -> Int32 {
        guard let name = arguments.first else {
            output.error(overview)
            return usage
        }
        if ["--help", "-h", "help"].contains(name) {
            if name == "help", arguments.count > 1, let command = commands.first(where: { $0.name == arguments[1] }) {
                output.print(command.help)
            } else {
                output.print(overview)
            }
            return success
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            output.error("archivist: unknown command \(name)\n\n" + overview)
            return usage
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            output.print(command.help)
            return success
        }
        do {
            let parsed = try Arguments(rest, flags: command.flags, options: command.options)
            return try command.run(parsed, &output)
        } catch let error as Arguments.UsageError {
            output.error("archivist \(name): \(error.description)\n\n" + command.help)
            return usage
        } catch let refusal as Refusal {
            output.error("archivist \(name): \(refusal.message)")
            return refusal.status
        } catch let error as StorageError {
            output.error("archivist \(name): \(CacheError(error))")  // the library's public words
            return damage
        } catch {
            output.error("archivist \(name): \(error)")
            return damage
        }
    }

    /// A command that cannot do its work with a path or value it was given (a path that does
    /// not exist, a folder that is no cache root, a type the root does not hold): one message
    /// for standard error — without the help text a malformed command line gets — and the
    /// exit status.
    struct Refusal: Error {
        var message: String
        var status: Int32
    }

    // MARK: Subcommands

    private static func inspect(_ arguments: Arguments, _ output: inout ToolOutput) throws -> Int32 {
        guard !arguments.positionals.isEmpty else { throw Arguments.UsageError(description: "inspect needs a FILE") }
        let inspections = arguments.positionals.map { FileInspector.inspect(path: $0) }
        for inspection in inspections {
            if let failure = inspection.failure { output.error("archivist inspect: \(inspection.path): \(failure)") }
        }
        if arguments.has("--json") {
            output.print(
                (inspections.count == 1 ? inspections[0].json : .array(inspections.map(\.json))).text(pretty: true)
            )
        } else {
            let reports = inspections.filter { $0.failure == nil }.map(\.text)
            if !reports.isEmpty { output.print(reports.joined(separator: "\n\n")) }
        }
        return inspections.contains { !$0.damage.isEmpty || $0.failure != nil } ? damage : success
    }

    private static func roots(_ arguments: Arguments, command: String) throws -> [String] {
        guard !arguments.positionals.isEmpty else { throw Arguments.UsageError(description: "needs a ROOT") }
        for root in arguments.positionals where !RootWalk.isRoot(root) {
            throw Refusal(message: RootWalk.whyNotARoot(root, command: command), status: usage)
        }
        return arguments.positionals.map { path in
            var trimmed = path
            while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
            return trimmed
        }
    }

    private static func list(_ arguments: Arguments, _ output: inout ToolOutput) throws -> Int32 {
        let listings = try roots(arguments, command: "ls").map { RootListing(root: $0) }
        let entries = arguments.has("--entries")
        if arguments.has("--json") {
            output.print(
                (listings.count == 1
                    ? listings[0].json(entries: entries) : .array(listings.map { $0.json(entries: entries) })).text(
                        pretty: true
                    )
            )
        } else {
            output.print(listings.map { $0.text(entries: entries) }.joined(separator: "\n\n"))
        }
        return success
    }

    private static func verify(_ arguments: Arguments, _ output: inout ToolOutput) throws -> Int32 {
        var results: [RootVerification] = []
        for root in try roots(arguments, command: "verify") {
            let found = RootVerification(root: root)
            results.append(
                arguments.has("--repair") && (found.isDamaged || found.trashItems > 0)
                    ? try RootVerification.repair(found) : found
            )
        }
        if arguments.has("--json") {
            output.print((results.count == 1 ? results[0].json : .array(results.map(\.json))).text(pretty: true))
        } else {
            output.print(results.map(\.text).joined(separator: "\n\n"))
        }
        return results.contains(where: \.isDamaged) ? damage : success
    }

    private static func stats(_ arguments: Arguments, _ output: inout ToolOutput) throws -> Int32 {
        let reports = try roots(arguments, command: "stats").map { try StatisticsReport(root: $0) }
        if arguments.has("--json") {
            output.print((reports.count == 1 ? reports[0].json : .array(reports.map(\.json))).text(pretty: true))
        } else {
            output.print(reports.map(\.text).joined(separator: "\n\n"))
        }
        if arguments.has("--reset") {
            for report in reports where report.available { _ = try SharedStatistics.reset(rootPath: report.root) }
            if !arguments.has("--json") { output.print("statistics reset") }
        }
        return success
    }

    private static func clear(_ arguments: Arguments, _ output: inout ToolOutput) throws -> Int32 {
        let roots = try roots(arguments, command: "clear")
        guard roots.count == 1 else { throw Arguments.UsageError(description: "clear takes one ROOT") }
        let typeName = arguments.option("--type")
        let user = arguments.option("--user")
        if let unknown = RootClearing.unknownSelection(root: roots[0], typeName: typeName, user: user) {
            throw Refusal(message: unknown, status: usage)
        }
        let result = try RootClearing.clear(root: roots[0], typeName: typeName, user: user)
        output.print(arguments.has("--json") ? result.json.text(pretty: true) : result.text)
        return success
    }

    private static func convert(_ arguments: Arguments, _ output: inout ToolOutput) throws -> Int32 {
        guard arguments.positionals.count == 1 else {
            throw Arguments.UsageError(description: "convert takes one FILE")
        }
        guard let name = arguments.option("--to"), let format = Conversion.Format(rawValue: name) else {
            throw Arguments.UsageError(description: "--to json, xml or binary is needed")
        }
        guard !arguments.has("--graph") || format == .json else {
            throw Arguments.UsageError(
                description: "--graph goes with --to json (XML and binary keep the $objects table)"
            )
        }
        let path = arguments.positionals[0]
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw Refusal(message: "\(path): " + Formatting.pathProblem(errno), status: damage) }
        close(fd)
        guard let input = FileManager.default.contents(atPath: path) else {
            throw Refusal(message: "\(path): cannot be read", status: damage)
        }
        if let refusal = Conversion.notConvertible(input, path: path) {
            throw Refusal(message: refusal, status: damage)
        }
        let converted: Data
        do {
            converted = try Conversion.convert(input, to: format, graph: arguments.has("--graph"))
        } catch {
            let takes =
                PropertyListTable.looksLikePropertyList(input)
                ? "" : " (convert takes binary and XML property lists, NSKeyedArchiver archives among them)"
            output.error("archivist convert: \(path): \(error)" + takes)
            return damage
        }
        if let destination = arguments.option("--output") ?? arguments.option("-o") {
            try converted.write(to: URL(fileURLWithPath: destination), options: .atomic)
        } else {
            output.write(converted)
        }
        return success
    }
}

/// Where the tool writes: standard output and standard error, or buffers in tests.
package struct ToolOutput: Sendable {
    /// Writes bytes to standard output.
    private let writeOutput: @Sendable (Data) -> Void
    /// Writes text to standard error.
    private let writeError: @Sendable (String) -> Void
    /// What was written, when buffering.
    package private(set) var standardOutput = Data()
    package private(set) var standardError = ""
    private let buffers: Bool

    /// Buffers everything (tests read ``standardOutput`` and ``standardError``).
    package init() {
        writeOutput = { _ in }
        writeError = { _ in }
        buffers = true
    }

    /// Writes through the given functions (the tool passes its standard output and error).
    package init(output: @escaping @Sendable (Data) -> Void, error: @escaping @Sendable (String) -> Void) {
        writeOutput = output
        writeError = error
        buffers = false
    }

    /// ``standardOutput`` as text.
    package var standardOutputText: String { String(decoding: standardOutput, as: UTF8.self) }

    /// Writes `text` and a newline to standard output.
    package mutating func print(_ text: String) { write(Data((text + "\n").utf8)) }

    /// Writes `data` to standard output.
    package mutating func write(_ data: Data) {
        if buffers { standardOutput += data } else { writeOutput(data) }
    }

    /// Writes `text` and a newline to standard error.
    package mutating func error(_ text: String) {
        if buffers { standardError += text + "\n" } else { writeError(text + "\n") }
    }
}
