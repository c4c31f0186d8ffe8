import Archivist
import Foundation

/// A native archive (`docs/ArchiveFormat.md`) as inspection nodes: the header's facts, then
/// the root value, objects written out where they are defined and every other meeting shown
/// as a reference to `#id`.
package enum NativeArchiveTree {
    /// The nodes of `outline`: a section of the archive's facts and the root value.
    ///
    /// - Complexity: O(values in the archive).
    package static func nodes(_ outline: ArchiveOutline) -> [InspectionNode] {
        var facts: [InspectionNode] = [
            .field("format", "native archive, version \(outline.version)"),
            .field("size", Formatting.count(outline.byteCount, "byte")),
            .field(
                "checksum",
                String(format: "CRC32C %08x ", outline.storedChecksum) + (outline.checksumMatches ? "ok" : "MISMATCH")
            ),
        ]
        if !outline.types.isEmpty {
            facts.append(.field("types", outline.types.map { "\($0.name) v\($0.version)" }.joined(separator: ", ")))
        }
        facts.append(.field("keys", "\(outline.keys.count)"))
        if outline.objectCount > 0 {
            var text = "\(Formatting.count(outline.objectCount))"
            if !outline.undefinedObjects.isEmpty {
                text +=
                    " (never archived, read as nil: "
                    + outline.undefinedObjects.prefix(10).map { "#\($0)" }.joined(separator: ", ")
                    + (outline.undefinedObjects.count > 10 ? ", …" : "") + ")"
            }
            facts.append(.field("objects", text))
        }
        var path = Set<Int>()
        return [
            InspectionNode(key: "archive", kind: .section, children: facts),
            node(outline.root, key: "root", undefined: Set(outline.undefinedObjects), path: &path),
        ]
    }

    /// The node of one value; `path` holds the ids of the objects being defined around it.
    static func node(
        _ value: ArchiveOutline.Value,
        key: String?,
        undefined: Set<Int>,
        path: inout Set<Int>
    ) -> InspectionNode {
        switch value {
        case .null: return InspectionNode(key: key, kind: .null)
        case .bool(let flag): return InspectionNode(key: key, kind: .bool, value: .bool(flag))
        case .signed(let number): return InspectionNode(key: key, kind: .integer, value: .integer(number))
        case .unsigned(let number): return InspectionNode(key: key, kind: .integer, value: .unsigned(number))
        case .float(let number):
            return InspectionNode(key: key, kind: .real, value: .real(Double(number)), detail: "Float")
        case .double(let number): return InspectionNode(key: key, kind: .real, value: .real(number))
        case .string(let text): return InspectionNode(key: key, kind: .string, value: .string(text))
        case .data(let count, let prefix):
            return InspectionNode(
                key: key,
                kind: .data,
                value: .string(Formatting.hex(prefix, total: count)),
                count: count,
                detail: count > 16 ? "elided" : nil
            )
        case .date(let seconds):
            return InspectionNode(
                key: key,
                kind: .date,
                value: .string(Formatting.isoDate(Date(timeIntervalSinceReferenceDate: seconds)))
            )
        case .url(let text): return InspectionNode(key: key, kind: .url, value: .string(text))
        case .uuid(let uuid): return InspectionNode(key: key, kind: .uuid, value: .string(uuid.uuidString))
        case .decimal(let number):
            // Its description, which is exact, where a Double would round.
            return InspectionNode(key: key, kind: .real, value: .string(number.description))
        case .array(let elements):
            return InspectionNode(
                key: key,
                kind: .array,
                count: elements.count,
                children: elements.enumerated().map {
                    node($0.element, key: "[\($0.offset)]", undefined: undefined, path: &path)
                }
            )
        case .dictionary(let pairs):
            return InspectionNode(
                key: key,
                kind: .dictionary,
                count: pairs.count,
                children: pairs.map { pair in
                    let keyText: String
                    switch pair.key {
                    case .string(let text): keyText = Formatting.quoted(text, limit: 80)
                    case .signed(let number): keyText = String(number)
                    case .unsigned(let number): keyText = String(number)
                    default: keyText = node(pair.key, key: nil, undefined: undefined, path: &path).line
                    }
                    return node(pair.value, key: keyText, undefined: undefined, path: &path)
                }
            )
        case .record(let type, let fields):
            return InspectionNode(
                key: key,
                kind: .record,
                typeName: type?.name,
                detail: type.map { $0.version != 0 ? "version \($0.version)" : nil } ?? nil,
                children: fields.map { node($0.value, key: $0.key, undefined: undefined, path: &path) }
            )
        case .object(let id, let inner):
            path.insert(id)
            var result = node(inner, key: key, undefined: undefined, path: &path)
            path.remove(id)
            result.id = "#\(id)"
            return result
        case .reference(let id):
            if undefined.contains(id) {
                return InspectionNode(
                    key: key,
                    kind: .null,
                    target: "#\(id)",
                    detail: "conditional reference to an object never archived"
                )
            }
            return InspectionNode(key: key, kind: .reference, target: "#\(id)", isCycle: path.contains(id))
        }
    }
}
