import Archivist
import ArchivistKeyedArchive
import Foundation

/// `archivist convert`: a keyed archive or property list written again as JSON, an XML
/// property list or a binary one. Object references (`CF$UID`) stay references, so a keyed
/// archive converted to XML and back is the same archive.
package enum Conversion {
    /// The formats ``convert(_:to:limits:)`` writes.
    package enum Format: String, Sendable, CaseIterable {
        case json, xml, binary
    }

    /// Why a conversion could not be made.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// Why `bytes` cannot be converted when they are a file of Archivist's that is no property
    /// list (a native archive, a cache entry, a record store's change log, a size index
    /// snapshot): what they are, what `convert` takes, and where such a file's JSON comes
    /// from. `nil` for anything else.
    ///
    /// ```swift
    /// Conversion.notConvertible(Archive.encode("x"), path: "x.archive")
    /// // "x.archive is a native archive, not a property list: …"
    /// ```
    package static func notConvertible(_ bytes: Data, path: String) -> String? {
        let what: String
        if ArchiveOutline.hasMagic(bytes) {
            what = "a native archive (Archive.encode)"
        } else if bytes.starts(with: Array("ARCE".utf8)) {
            what = "a cache entry file"
        } else if bytes.starts(with: Array("ARVL".utf8)) {
            what = "a record store's change log"
        } else if bytes.starts(with: Array("ARCI".utf8)) {
            what = "a cache root's size index snapshot"
        } else {
            return nil
        }
        return "\(path) is \(what), not a property list: convert takes binary and XML property lists, "
            + "NSKeyedArchiver archives among them; `archivist inspect --json \(path)` writes it as JSON"
    }

    /// `bytes` (a binary or XML property list, keyed archives included) in `format`; with
    /// `graph`, JSON of a keyed archive is its resolved object graph (``KeyedArchiveGraph``)
    /// rather than its `$objects` table (a plain property list is its own graph).
    ///
    /// JSON has no dates, data or references: dates become ISO 8601 strings, data a base64
    /// string, a `CF$UID` reference `{"CF$UID": n}`, and a dictionary key that is not a string
    /// its text. XML and JSON have no sharing either: a value shared by several containers is
    /// written at each, up to 16 times the plist's own values (a plist built to explode
    /// throws instead), and one that contains itself throws.
    ///
    /// - Throws: ``ArchiveError`` when `bytes` is not a readable property list; ``Failure``
    ///   when it cannot be written in `format`.
    /// - Complexity: O(n) in the size of the output.
    package static func convert(
        _ bytes: Data,
        to format: Format,
        graph: Bool = false,
        limits: ArchiveLimits = ArchiveLimits()
    ) throws -> Data {
        let table = try PropertyListTable(bytes: bytes, limits: limits)
        if graph, format == .json, FileInspector.isKeyedArchive(table) {
            let archive = try KeyedArchive(data: bytes, limits: limits)
            let json = try KeyedArchiveGraph.json(
                archive,
                budget: max(16 * bytes.count, 1 << 20),
                maxDepth: limits.maxDepth
            )
            return Data((json.text(pretty: true) + "\n").utf8)
        }
        switch format {
        case .binary:
            return Data(table.binaryBytes())
        case .json:
            var writer = TreeWriter(table: table, budget: max(16 * table.nodes.count, 1_024), maxDepth: limits.maxDepth)
            return Data((try writer.json(table.root, depth: 0).text(pretty: true) + "\n").utf8)
        case .xml:
            var writer = TreeWriter(table: table, budget: max(16 * table.nodes.count, 1_024), maxDepth: limits.maxDepth)
            var out = """
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0">

                """
            try writer.xml(table.root, depth: 0, into: &out)
            out += "</plist>\n"
            return Data(out.utf8)
        }
    }

    /// Writes the table as a tree, counting what it writes against a budget.
    private struct TreeWriter {
        let table: PropertyListTable
        var budget: Int
        let maxDepth: Int
        var path = Set<Int>()

        mutating func enter(_ index: Int, depth: Int) throws -> PropertyListTable.Node {
            guard index >= 0, index < table.nodes.count else {
                throw Failure(description: "a reference to value \(index) outside the table")
            }
            guard !path.contains(index) else {
                throw Failure(
                    description: "value \(index) contains itself: a property list with a cycle has no JSON or XML form"
                )
            }
            guard depth < maxDepth else { throw Failure(description: "values nest deeper than \(maxDepth) levels") }
            budget -= 1
            guard budget >= 0 else {
                throw Failure(
                    description:
                        "shared values would be written more than 16 times the plist's own values; convert to binary instead"
                )
            }
            return table.nodes[index]
        }

        mutating func json(_ index: Int, depth: Int) throws -> JSONValue {
            switch try enter(index, depth: depth) {
            case .string(let text): return .string(text)
            case .data(let bytes): return .string(Data(bytes).base64EncodedString())
            case .integer(let number): return .int(number)
            case .unsignedInteger(let number): return .unsigned(number)
            case .real(let number): return .double(number)
            case .bool(let flag): return .bool(flag)
            case .date(let seconds): return .string(Formatting.isoDate(Date(timeIntervalSinceReferenceDate: seconds)))
            case .uid(let value): return .object([("CF$UID", .unsigned(value))])
            case .array(let elements):
                path.insert(index)
                defer { path.remove(index) }
                return .array(try elements.map { try json($0, depth: depth + 1) })
            case .dictionary(let keys, let values):
                path.insert(index)
                defer { path.remove(index) }
                var members: [(String, JSONValue)] = []
                for (key, value) in zip(keys, values) {
                    members.append((keyText(key), try json(value, depth: depth + 1)))
                }
                return .object(members)
            }
        }

        func keyText(_ index: Int) -> String {
            guard index >= 0, index < table.nodes.count else { return "#\(index)" }
            switch table.nodes[index] {
            case .string(let text): return text
            case .integer(let number): return String(number)
            case .unsignedInteger(let number): return String(number)
            case .real(let number): return "\(number)"
            case .bool(let flag): return flag ? "true" : "false"
            default: return "#\(index)"
            }
        }

        mutating func xml(_ index: Int, depth: Int, into out: inout String) throws {
            let indent = String(repeating: "\t", count: depth)
            switch try enter(index, depth: depth) {
            case .string(let text): out += indent + "<string>" + Self.escape(text) + "</string>\n"
            case .data(let bytes): out += indent + "<data>" + Data(bytes).base64EncodedString() + "</data>\n"
            case .integer(let number): out += indent + "<integer>\(number)</integer>\n"
            case .unsignedInteger(let number): out += indent + "<integer>\(number)</integer>\n"
            case .real(let number): out += indent + "<real>\(number)</real>\n"
            case .bool(let flag): out += indent + (flag ? "<true/>\n" : "<false/>\n")
            case .date(let seconds):
                out += indent + "<date>" + Self.xmlDate(Date(timeIntervalSinceReferenceDate: seconds)) + "</date>\n"
            case .uid(let value):
                out +=
                    indent + "<dict>\n" + indent + "\t<key>CF$UID</key>\n" + indent + "\t<integer>\(value)</integer>\n"
                    + indent + "</dict>\n"
            case .array(let elements):
                guard !elements.isEmpty else {
                    out += indent + "<array/>\n"
                    return
                }
                path.insert(index)
                defer { path.remove(index) }
                out += indent + "<array>\n"
                for element in elements { try xml(element, depth: depth + 1, into: &out) }
                out += indent + "</array>\n"
            case .dictionary(let keys, let values):
                guard !keys.isEmpty else {
                    out += indent + "<dict/>\n"
                    return
                }
                path.insert(index)
                defer { path.remove(index) }
                out += indent + "<dict>\n"
                for (key, value) in zip(keys, values) {
                    out += indent + "\t<key>" + Self.escape(keyText(key)) + "</key>\n"
                    try xml(value, depth: depth + 1, into: &out)
                }
                out += indent + "</dict>\n"
            }
        }

        static func escape(_ text: String) -> String {
            var out = ""
            for character in text {
                switch character {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                default: out.append(character)
                }
            }
            return out
        }

        /// `2001-01-01T00:00:00Z`: XML plists keep dates to the second.
        static func xmlDate(_ date: Date) -> String {
            let iso = Formatting.isoDate(date)
            return String(iso.prefix(19)) + "Z"
        }
    }
}
