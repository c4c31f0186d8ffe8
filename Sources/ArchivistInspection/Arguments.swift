/// A command line split into positional arguments, flags and options, by a grammar the
/// command declares: `--name` flags, `--name VALUE` or `--name=VALUE` options, `--` before
/// positionals that start with a dash.
///
/// ```swift
/// let arguments = try Arguments(["ROOT", "--json", "--type", "hots"], flags: ["--json"], options: ["--type"])
/// arguments.positionals    // ["ROOT"]
/// arguments.option("--type")   // "hots"
/// ```
package struct Arguments: Sendable {
    /// A command line the grammar does not accept; the tool exits with status 2.
    package struct UsageError: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    package var positionals: [String] = []
    package var flags: Set<String> = []
    package var options: [String: String] = [:]

    /// Splits `arguments` by the grammar.
    ///
    /// - Throws: ``UsageError`` for an unknown flag or option, an option without its value,
    ///   or one given twice.
    /// - Complexity: O(arguments).
    package init(_ arguments: [String], flags allowedFlags: Set<String>, options allowedOptions: Set<String>) throws {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--" {
                positionals += remaining
                break
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                positionals.append(argument)
                continue
            }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            if allowedFlags.contains(name), value == nil {
                flags.insert(name)
            } else if allowedOptions.contains(name) {
                guard let given = value ?? remaining.popFirst() else {
                    throw UsageError(description: "\(name) needs a value")
                }
                guard options[name] == nil else { throw UsageError(description: "\(name) given twice") }
                options[name] = given
            } else {
                throw UsageError(description: "unknown option \(name)")
            }
        }
    }

    /// Whether the flag was given.
    package func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The option's value, if given.
    package func option(_ name: String) -> String? { options[name] }
}
