import ArchivistKeyedArchive
import Foundation

/// A property list as inspection nodes. A binary plist may share a value between containers,
/// or even make a container contain itself: each container node is written out once (with
/// `#n`, its index in the object table, when it is met again) and later meetings are
/// references, so a "billion laughs" plist prints in proportion to its bytes.
package enum PropertyListTree {
    /// The nodes of `table`: its facts, then the root.
    ///
    /// - Complexity: O(nodes); depth is cut at `maxDepth` levels.
    package static func nodes(_ table: PropertyListTable, maxDepth: Int = 200) -> [InspectionNode] {
        var walker = Walker(table: table, maxDepth: maxDepth)
        let facts: [InspectionNode] = [
            .field("format", "property list (\(table.isBinary ? "binary" : "XML"))"),
            .field("values", Formatting.count(table.nodes.count)),
        ]
        var root = walker.node(table.root, key: "root", depth: 0)
        // A container's id matters only where it is met again.
        var targets = Set<String>()
        collectTargets(root, into: &targets)
        keepIDs(targets, in: &root)
        return [InspectionNode(key: "property list", kind: .section, children: facts), root]
    }

    private static func collectTargets(_ node: InspectionNode, into targets: inout Set<String>) {
        if let target = node.target { targets.insert(target) }
        for child in node.children { collectTargets(child, into: &targets) }
    }

    private static func keepIDs(_ targets: Set<String>, in node: inout InspectionNode) {
        if let id = node.id, !targets.contains(id) { node.id = nil }
        for index in node.children.indices { keepIDs(targets, in: &node.children[index]) }
    }

    private struct Walker {
        let table: PropertyListTable
        let maxDepth: Int
        var shown = Set<Int>()
        var path = Set<Int>()

        mutating func node(_ index: Int, key: String?, depth: Int) -> InspectionNode {
            guard index >= 0, index < table.nodes.count else {
                return InspectionNode(key: key, kind: .reference, target: "#\(index)", detail: "outside the table")
            }
            switch table.nodes[index] {
            case .string(let text): return InspectionNode(key: key, kind: .string, value: .string(text))
            case .data(let bytes):
                return InspectionNode(
                    key: key,
                    kind: .data,
                    value: .string(Formatting.hex(bytes, total: bytes.count)),
                    count: bytes.count,
                    detail: bytes.count > 16 ? "elided" : nil
                )
            case .integer(let number): return InspectionNode(key: key, kind: .integer, value: .integer(number))
            case .unsignedInteger(let number): return InspectionNode(key: key, kind: .integer, value: .unsigned(number))
            case .real(let number): return InspectionNode(key: key, kind: .real, value: .real(number))
            case .bool(let flag): return InspectionNode(key: key, kind: .bool, value: .bool(flag))
            case .date(let seconds):
                return InspectionNode(
                    key: key,
                    kind: .date,
                    value: .string(Formatting.isoDate(Date(timeIntervalSinceReferenceDate: seconds)))
                )
            case .uid(let value): return InspectionNode(key: key, kind: .uid, value: .unsigned(value))
            case .array(let elements):
                return container(index, key: key, depth: depth, kind: .array, count: elements.count) { walker in
                    elements.enumerated().map { walker.node($0.element, key: "[\($0.offset)]", depth: depth + 1) }
                }
            case .dictionary(let keys, let values):
                return container(index, key: key, depth: depth, kind: .dictionary, count: keys.count) { walker in
                    zip(keys, values).map { keyIndex, valueIndex in
                        let label: String
                        if keyIndex >= 0, keyIndex < walker.table.nodes.count,
                            case .string(let text) = walker.table.nodes[keyIndex]
                        {
                            label = Formatting.quoted(text, limit: 80)
                        } else {
                            label = "#\(keyIndex)"
                        }
                        return walker.node(valueIndex, key: label, depth: depth + 1)
                    }
                }
            }
        }

        mutating func container(
            _ index: Int,
            key: String?,
            depth: Int,
            kind: InspectionNode.Kind,
            count: Int,
            children: (inout Walker) -> [InspectionNode]
        ) -> InspectionNode {
            if shown.contains(index) {
                return InspectionNode(key: key, kind: .reference, target: "#\(index)", isCycle: path.contains(index))
            }
            guard depth < maxDepth else {
                return InspectionNode(
                    key: key,
                    kind: kind,
                    count: count,
                    detail: "not shown: deeper than \(maxDepth) levels"
                )
            }
            shown.insert(index)
            path.insert(index)
            let node = InspectionNode(key: key, kind: kind, id: "#\(index)", count: count, children: children(&self))
            path.remove(index)
            return node
        }
    }
}
