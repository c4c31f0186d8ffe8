import Archivist
import ArchivistKeyedArchive
import Foundation

/// An NSKeyedArchiver archive as inspection nodes: `$top`'s entries, each object written out
/// where it is first met (`@n`, its index in `$objects`) with its class chain and fields, and
/// every later meeting a reference to it — so shared objects and cycles show as references.
/// A string, number, date or other plain value the archive stores once for several places
/// (NSKeyedArchiver uniques them) is shown by its value at each, marked `(shared @n)`.
package enum KeyedArchiveTree {
    /// The nodes of `archive`: a section of its facts, then one node per `$top` entry (`root`
    /// first).
    ///
    /// - Complexity: O(objects and fields); depth is cut at `maxDepth` levels.
    package static func nodes(_ archive: KeyedArchive, format: String, maxDepth: Int = 200) -> [InspectionNode] {
        let instances = archive.objects.filter { if case .instance = $0 { true } else { false } }.count
        var classes = Set<String>()
        for chain in archive.classChains { if let name = chain.first { classes.insert(name) } }
        let facts: [InspectionNode] = [
            .field("format", "NSKeyedArchiver archive (\(format) property list)"),
            .field(
                "objects",
                "\(Formatting.count(archive.objects.count)) (\(Formatting.count(instances, "instance")))"
            ),
            .field("classes", classes.sorted().joined(separator: ", ")),
        ]
        var walker = Walker(archive: archive, maxDepth: maxDepth)
        let topKeys = archive.top.keys.sorted { ($0 == "root" ? 0 : 1, $0) < ($1 == "root" ? 0 : 1, $1) }
        return [InspectionNode(key: "archive", kind: .section, children: facts)]
            + topKeys.map { walker.object(archive.top[$0]!, key: $0, depth: 0) }
    }

    private struct Walker {
        let archive: KeyedArchive
        let maxDepth: Int
        /// Objects already written out.
        var shown = Set<Int>()
        /// Objects on the path being written out.
        var path = Set<Int>()

        mutating func object(_ reference: KeyedArchiveReference, key: String?, depth: Int) -> InspectionNode {
            if reference.isNull { return InspectionNode(key: key, kind: .null) }
            let index = reference.index
            let id = "@\(index)"
            if shown.contains(index) {
                if var value = Self.value(archive[reference], key: key) {
                    value.target = id
                    return value
                }
                return InspectionNode(key: key, kind: .reference, target: id, isCycle: path.contains(index))
            }
            if depth >= maxDepth {
                return InspectionNode(
                    key: key,
                    kind: .reference,
                    target: id,
                    detail: "not shown: deeper than \(maxDepth) levels"
                )
            }
            shown.insert(index)
            path.insert(index)
            defer { path.remove(index) }
            let chain = archive.classChain(of: reference)
            var node: InspectionNode
            switch archive[reference] {
            case .null: node = InspectionNode(key: key, kind: .null)
            case .nsNull: node = InspectionNode(key: key, kind: .null, typeName: "NSNull")
            case .string, .integer, .unsignedInteger, .real, .bool, .data, .date, .uuid:
                node = Self.value(archive[reference], key: key) ?? InspectionNode(key: key, kind: .null)
            case .url(let relative, let base):
                node = InspectionNode(key: key, kind: .url, value: .string(relative))
                if let base, !base.isNull { node.children = [object(base, key: "base", depth: depth + 1)] }
            case .array(let elements): node = container(.array, elements, key: key, depth: depth)
            case .set(let elements): node = container(.set, elements, key: key, depth: depth)
            case .orderedSet(let elements): node = container(.orderedSet, elements, key: key, depth: depth)
            case .dictionary(let keys, let values):
                node = InspectionNode(key: key, kind: .dictionary, count: keys.count)
                for (keyReference, valueReference) in zip(keys, values) {
                    let label: String
                    switch archive[keyReference] {
                    case .string(let text): label = Formatting.quoted(text, limit: 80)
                    case .integer(let number): label = String(number)
                    default: label = "@\(keyReference.index)"
                    }
                    node.children.append(object(valueReference, key: label, depth: depth + 1))
                }
            case .instance(let instance):
                node = InspectionNode(
                    key: key,
                    kind: .instance,
                    typeName: instance.className,
                    detail: instance.classChain.count > 1
                        ? instance.classChain.dropFirst().joined(separator: " < ") : nil
                )
                for (fieldKey, field) in instance.fields.sorted(by: { $0.key < $1.key }) {
                    node.children.append(self.field(field, key: fieldKey, depth: depth + 1))
                }
            case .classDescription(let names):
                node = InspectionNode(
                    key: key,
                    kind: .classDescription,
                    typeName: names.first,
                    detail: names.count > 1 ? names.dropFirst().joined(separator: " < ") : nil
                )
            case .plist(let field):
                node = self.field(field, key: key, depth: depth)
            }
            if let name = chain.first, node.typeName == nil, node.kind != .instance { node.typeName = name }
            node.id = id
            return node
        }

        mutating func container(
            _ kind: InspectionNode.Kind,
            _ elements: [KeyedArchiveReference],
            key: String?,
            depth: Int
        ) -> InspectionNode {
            InspectionNode(
                key: key,
                kind: kind,
                count: elements.count,
                children: elements.enumerated().map { object($0.element, key: "[\($0.offset)]", depth: depth + 1) }
            )
        }

        mutating func field(_ field: KeyedArchiveField, key: String?, depth: Int) -> InspectionNode {
            switch field {
            case .reference(let reference): return object(reference, key: key, depth: depth)
            case .integer(let number): return InspectionNode(key: key, kind: .integer, value: .integer(number))
            case .unsignedInteger(let number): return InspectionNode(key: key, kind: .integer, value: .unsigned(number))
            case .real(let number): return InspectionNode(key: key, kind: .real, value: .real(number))
            case .bool(let flag): return InspectionNode(key: key, kind: .bool, value: .bool(flag))
            case .string(let text): return InspectionNode(key: key, kind: .string, value: .string(text))
            case .data(let bytes): return Self.data(bytes, key: key)
            case .date(let date): return InspectionNode(key: key, kind: .date, value: .string(Formatting.isoDate(date)))
            case .array(let elements):
                guard depth < maxDepth else {
                    return InspectionNode(key: key, kind: .array, count: elements.count, detail: "not shown: too deep")
                }
                return InspectionNode(
                    key: key,
                    kind: .array,
                    count: elements.count,
                    children: elements.enumerated().map {
                        self.field($0.element, key: "[\($0.offset)]", depth: depth + 1)
                    }
                )
            case .dictionary(let entries):
                guard depth < maxDepth else {
                    return InspectionNode(
                        key: key,
                        kind: .dictionary,
                        count: entries.count,
                        detail: "not shown: too deep"
                    )
                }
                return InspectionNode(
                    key: key,
                    kind: .dictionary,
                    count: entries.count,
                    children: entries.sorted { $0.key < $1.key }.map {
                        self.field($0.value, key: Formatting.quoted($0.key, limit: 80), depth: depth + 1)
                    }
                )
            }
        }

        /// The node of a plain value — a string, number, Boolean, data, date or UUID — or `nil`
        /// for an object (shown once, then referred to).
        static func value(_ object: KeyedArchiveObject, key: String?) -> InspectionNode? {
            switch object {
            case .string(let text): InspectionNode(key: key, kind: .string, value: .string(text))
            case .integer(let number): InspectionNode(key: key, kind: .integer, value: .integer(number))
            case .unsignedInteger(let number): InspectionNode(key: key, kind: .integer, value: .unsigned(number))
            case .real(let number): InspectionNode(key: key, kind: .real, value: .real(number))
            case .bool(let flag): InspectionNode(key: key, kind: .bool, value: .bool(flag))
            case .data(let bytes): data(bytes, key: key)
            case .date(let date): InspectionNode(key: key, kind: .date, value: .string(Formatting.isoDate(date)))
            case .uuid(let uuid): InspectionNode(key: key, kind: .uuid, value: .string(uuid.uuidString))
            default: nil
            }
        }

        static func data(_ bytes: Data, key: String?) -> InspectionNode {
            InspectionNode(
                key: key,
                kind: .data,
                value: .string(Formatting.hex(bytes, total: bytes.count)),
                count: bytes.count,
                detail: bytes.count > 16 ? "elided" : nil
            )
        }
    }
}
