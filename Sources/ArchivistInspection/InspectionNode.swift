/// One line of what `archivist inspect` shows, with the lines below it: a value of an archive
/// or property list, a field of a header, a part of a record store.
///
/// Object graphs are shown as trees whose shared objects and cycles are references: an object
/// is written out in full where it is first met (with its ``id``), and every later meeting is
/// a node of kind ``Kind/reference`` naming that id, marked ``isCycle`` when it points back up
/// the path it is on. So the output grows with the archive, never with its expansion. A plain
/// value stored once for several places (a uniqued string or number) is shown by its value at
/// each, its ``target`` naming where it is stored: `done: true (shared @17)`.
///
/// ```swift
/// let node = InspectionNode(key: "name", kind: .string, value: .string("Tea"))
/// print(node.line)   // name: "Tea"
/// ```
package struct InspectionNode: Sendable, Equatable {
    /// What a node stands for.
    package enum Kind: String, Sendable {
        case null, bool, integer, real, string, data, date, url, uuid, uid
        case array, set
        case orderedSet = "ordered set"
        case dictionary
        /// A keyed record of a native archive.
        case record
        /// An instance of a class in a keyed archive.
        case instance
        /// A class description of a keyed archive (`$classname`, `$classes`).
        case classDescription = "class"
        /// A reference to an object written out elsewhere.
        case reference
        /// A named part: a header, a payload, a log entry.
        case section
        /// A fact about the thing inspected (a size, a checksum, a date) as text.
        case field
    }

    /// A scalar value, as JSON writes it.
    package enum Scalar: Sendable, Equatable {
        case string(String)
        case integer(Int64)
        case unsigned(UInt64)
        case real(Double)
        case bool(Bool)
    }

    /// The field name, dictionary key or element index this node sits under.
    package var key: String?
    package var kind: Kind
    /// The record type or class name.
    package var typeName: String?
    package var value: Scalar?
    /// The object id this node defines (`#3` in a native archive, `@3` in a keyed archive).
    package var id: String?
    /// The object id a reference points at; for a plain value stored once for several places,
    /// where it is stored.
    package var target: String?
    /// Whether a reference points at an object on its own path (a cycle).
    package var isCycle = false
    /// Bytes of a data value, elements of a container.
    package var count: Int?
    /// More text for people: a version, a checksum's verdict, why something is shown cut.
    package var detail: String?
    package var children: [InspectionNode] = []

    /// A node; every part but the kind is optional.
    package init(
        key: String? = nil,
        kind: Kind,
        typeName: String? = nil,
        value: Scalar? = nil,
        id: String? = nil,
        target: String? = nil,
        isCycle: Bool = false,
        count: Int? = nil,
        detail: String? = nil,
        children: [InspectionNode] = []
    ) {
        self.key = key
        self.kind = kind
        self.typeName = typeName
        self.value = value
        self.id = id
        self.target = target
        self.isCycle = isCycle
        self.count = count
        self.detail = detail
        self.children = children
    }

    /// A ``Kind/field`` node: `key: text`.
    package static func field(_ key: String, _ text: String) -> InspectionNode {
        InspectionNode(key: key, kind: .field, value: .string(text))
    }

    /// The node's own line (without its children or indentation).
    package var line: String {
        var parts: [String] = []
        if let id { parts.append(id) }
        switch kind {
        case .null: parts.append("nil")
        case .field:
            if case .string(let text)? = value { parts.append(text) }
        case .string:
            if case .string(let text)? = value { parts.append(Formatting.quoted(text)) }
        case .bool, .integer, .real:
            if let value { parts.append(Self.text(of: value)) }
        case .data:
            var text = "data, " + Formatting.count(count ?? 0, "byte")
            if case .string(let hex)? = value, !hex.isEmpty { text += ": " + hex }
            parts.append(text)
        case .date, .url, .uuid, .uid:
            parts.append(kind.rawValue + (value.map { " " + Self.text(of: $0) } ?? ""))
        case .array, .set, .orderedSet, .dictionary:
            let elements = count ?? children.count
            parts.append(
                [typeName, kind.rawValue].compactMap { $0 }.joined(separator: " ") + ", "
                    + (kind == .dictionary
                        ? Formatting.count(elements, "entry", plural: "entries")
                        : Formatting.count(elements, "element"))
            )
        case .record:
            parts.append((typeName ?? "anonymous") + " (record" + (detail.map { ", " + $0 } ?? "") + ")")
        case .instance, .classDescription:
            // The detail is the superclass chain.
            parts.append((typeName ?? "?") + (detail.map { " < " + $0 } ?? "") + " (" + kind.rawValue + ")")
        case .reference:
            parts.append("→ " + (target ?? "?") + (isCycle ? " (cycle)" : " (shared)"))
        case .section:
            if let typeName { parts.append(typeName) }
        }
        if let target, kind != .reference, kind != .null { parts.append("(shared \(target))") }
        var line = parts.joined(separator: " ")
        if let key { line = key + (line.isEmpty ? "" : ": " + line) }
        if let detail, ![.record, .instance, .classDescription].contains(kind) {
            line += line.isEmpty ? detail : "  [" + detail + "]"
        }
        return line
    }

    private static func text(of scalar: Scalar) -> String {
        switch scalar {
        case .string(let text): text
        case .integer(let value): String(value)
        case .unsigned(let value): String(value)
        case .real(let value): "\(value)"
        case .bool(let value): value ? "true" : "false"
        }
    }

    /// The node and everything below it, one line each, indented two spaces a level.
    ///
    /// - Complexity: O(nodes).
    package func text(indent: Int = 0) -> String {
        var lines: [String] = []
        appendLines(to: &lines, indent: indent)
        return lines.joined(separator: "\n")
    }

    private func appendLines(to lines: inout [String], indent: Int) {
        lines.append(String(repeating: "  ", count: indent) + line)
        for child in children { child.appendLines(to: &lines, indent: indent + 1) }
    }

    /// The node as JSON: `key`, `kind`, then whichever of `type`, `value`, `id`, `ref`,
    /// `cycle`, `count`, `detail` and `children` it has.
    ///
    /// - Complexity: O(nodes).
    package var json: JSONValue {
        var members: [(String, JSONValue)] = []
        if let key { members.append(("key", .string(key))) }
        members.append(("kind", .string(kind.rawValue)))
        if let typeName { members.append(("type", .string(typeName))) }
        if let value {
            switch value {
            case .string(let text): members.append(("value", .string(text)))
            case .integer(let number): members.append(("value", .int(number)))
            case .unsigned(let number): members.append(("value", .unsigned(number)))
            case .real(let number): members.append(("value", .double(number)))
            case .bool(let flag): members.append(("value", .bool(flag)))
            }
        }
        if let id { members.append(("id", .string(id))) }
        if let target { members.append(("ref", .string(target))) }
        if kind == .reference { members.append(("cycle", .bool(isCycle))) }
        if let count { members.append(("count", .int(Int64(count)))) }
        if let detail { members.append(("detail", .string(detail))) }
        if !children.isEmpty { members.append(("children", .array(children.map(\.json)))) }
        return .object(members)
    }
}
