import Archivist
import ArchivistKeyedArchive
import Foundation

/// An NSKeyedArchiver archive's object graph as JSON (`archivist convert --to json --graph`):
/// what the archive means rather than how `$objects` stores it.
///
/// - `$top` becomes an object of its keys, `root` first.
/// - An instance is `{"$class": name, field: value, …}`, its fields sorted by key.
/// - Arrays, sets and ordered sets are JSON arrays; a dictionary is a JSON object (a key that
///   is not a string written as its text, or `@n`).
/// - Strings, numbers, Booleans, dates (ISO 8601), data (base64), UUIDs and URLs are values,
///   written at every place that refers to them, even where the archive stores them once.
/// - An object referred to more than once carries `"$id": n` (its index in `$objects`, the
///   `@n` of `archivist inspect`) where it is written out — an array or dictionary then as
///   `{"$id": n, "$class": name, "$elements": […]}` or `"$entries": {…}` — and every later
///   meeting, a cycle included, is `{"$ref": n}`. So the output grows with the archive, never
///   with its expansion.
///
/// ```swift
/// let json = try KeyedArchiveGraph.json(try KeyedArchive(data: bytes), budget: 16 * bytes.count)
/// print(json.text(pretty: true))   // {"root": {"$class": "Note", "title": "Some cool title", …}}
/// ```
package enum KeyedArchiveGraph {
    /// The graph of `archive` as JSON.
    ///
    /// - Parameters:
    ///   - budget: The most characters of strings and data the output may hold: a value the
    ///     archive stores once is written wherever it is referred to, and a hostile archive
    ///     may refer to a long one many times.
    ///   - maxDepth: The deepest nesting written.
    /// - Throws: ``Conversion/Failure`` past `budget` or `maxDepth`.
    /// - Complexity: O(objects and fields, plus the output).
    package static func json(_ archive: KeyedArchive, budget: Int, maxDepth: Int = 200) throws -> JSONValue {
        var writer = Writer(archive: archive, budget: budget, maxDepth: maxDepth)
        writer.countReferences()
        let keys = archive.top.keys.sorted { ($0 == "root" ? 0 : 1, $0) < ($1 == "root" ? 0 : 1, $1) }
        return .object(try keys.map { ($0, try writer.object(archive.top[$0]!, depth: 0)) })
    }

    private struct Writer {
        let archive: KeyedArchive
        var budget: Int
        let maxDepth: Int
        /// How many references point at each object (`$top` included).
        var referenceCounts: [Int] = []
        /// Objects written out.
        var written = Set<Int>()

        init(archive: KeyedArchive, budget: Int, maxDepth: Int) {
            (self.archive, self.budget, self.maxDepth) = (archive, budget, maxDepth)
        }

        mutating func countReferences() {
            referenceCounts = Array(repeating: 0, count: archive.objects.count)
            func count(_ reference: KeyedArchiveReference) {
                if reference.index > 0, reference.index < referenceCounts.count {
                    referenceCounts[reference.index] += 1
                }
            }
            func count(_ field: KeyedArchiveField) {
                switch field {
                case .reference(let reference): count(reference)
                case .array(let elements): elements.forEach(count)
                case .dictionary(let entries): entries.values.forEach(count)
                default: break
                }
            }
            archive.top.values.forEach(count)
            for object in archive.objects {
                switch object {
                case .array(let elements), .set(let elements), .orderedSet(let elements): elements.forEach(count)
                case .dictionary(let keys, let values): (keys + values).forEach(count)
                case .url(_, let base?): count(base)
                case .instance(let instance): instance.fields.values.forEach(count)
                case .plist(let field): count(field)
                default: break
                }
            }
        }

        /// Takes `cost` from the budget.
        mutating func spend(_ cost: Int) throws {
            budget -= cost
            guard budget >= 0 else {
                throw Conversion.Failure(
                    description:
                        "the graph would repeat shared values beyond 16 times the archive's size; without --graph the $objects table is written as it is"
                )
            }
        }

        mutating func object(_ reference: KeyedArchiveReference, depth: Int) throws -> JSONValue {
            guard !reference.isNull else { return .null }
            let index = reference.index
            guard depth < maxDepth else {
                throw Conversion.Failure(description: "objects nest deeper than \(maxDepth) levels")
            }
            try spend(8)
            switch archive[reference] {
            case .null, .nsNull: return .null
            case .string(let text):
                try spend(text.utf8.count)
                return .string(text)
            case .integer(let number): return .int(number)
            case .unsignedInteger(let number): return .unsigned(number)
            case .real(let number): return .double(number)
            case .bool(let flag): return .bool(flag)
            case .data(let bytes):
                try spend(bytes.count * 4 / 3)
                return .string(bytes.base64EncodedString())
            case .date(let date): return .string(Formatting.isoDate(date))
            case .uuid(let uuid): return .string(uuid.uuidString)
            case .url(let relative, nil):
                try spend(relative.utf8.count)
                return .string(relative)
            default: break
            }
            // An object: written out once, referred to after.
            if written.contains(index) { return .object([("$ref", .int(Int64(index)))]) }
            written.insert(index)
            let shared = index < referenceCounts.count && referenceCounts[index] > 1
            let identity: [(String, JSONValue)] = shared ? [("$id", .int(Int64(index)))] : []
            let className = archive.classChain(of: reference).first
            switch archive[reference] {
            case .url(let relative, let base?):
                try spend(relative.utf8.count)
                return .object(
                    [("$class", .string(className ?? "NSURL"))] + identity
                        + [("relative", .string(relative)), ("base", try object(base, depth: depth + 1))]
                )
            case .array(let elements), .set(let elements), .orderedSet(let elements):
                let values = JSONValue.array(try elements.map { try object($0, depth: depth + 1) })
                return shared ? .object(identity + [("$class", .string(className)), ("$elements", values)]) : values
            case .dictionary(let keys, let values):
                var members: [(String, JSONValue)] = []
                for (key, value) in zip(keys, values) {
                    members.append((keyText(key), try object(value, depth: depth + 1)))
                }
                return shared
                    ? .object(identity + [("$class", .string(className)), ("$entries", .object(members))])
                    : .object(members)
            case .instance(let instance):
                var members: [(String, JSONValue)] = [("$class", .string(instance.className))] + identity
                for (key, field) in instance.fields.sorted(by: { $0.key < $1.key }) {
                    members.append((key, try self.field(field, depth: depth + 1)))
                }
                return .object(members)
            case .classDescription(let names):
                return .object([("$classes", .array(names.map { .string($0) }))] + identity)
            case .plist(let field):
                let value = try self.field(field, depth: depth)
                return shared ? .object(identity + [("$value", value)]) : value
            default:
                return .null  // the values above
            }
        }

        mutating func field(_ field: KeyedArchiveField, depth: Int) throws -> JSONValue {
            guard depth < maxDepth else {
                throw Conversion.Failure(description: "objects nest deeper than \(maxDepth) levels")
            }
            try spend(8)
            switch field {
            case .reference(let reference): return try object(reference, depth: depth)
            case .integer(let number): return .int(number)
            case .unsignedInteger(let number): return .unsigned(number)
            case .real(let number): return .double(number)
            case .bool(let flag): return .bool(flag)
            case .string(let text):
                try spend(text.utf8.count)
                return .string(text)
            case .data(let bytes):
                try spend(bytes.count * 4 / 3)
                return .string(bytes.base64EncodedString())
            case .date(let date): return .string(Formatting.isoDate(date))
            case .array(let elements): return .array(try elements.map { try self.field($0, depth: depth + 1) })
            case .dictionary(let entries):
                return .object(
                    try entries.sorted { $0.key < $1.key }.map { ($0.key, try self.field($0.value, depth: depth + 1)) }
                )
            }
        }

        /// A dictionary key as JSON's string key: a string as it is, a number as its digits,
        /// anything else as `@n`.
        func keyText(_ reference: KeyedArchiveReference) -> String {
            switch archive[reference] {
            case .string(let text): text
            case .integer(let number): String(number)
            case .unsignedInteger(let number): String(number)
            default: "@\(reference.index)"
            }
        }
    }
}
