import Archivist
import ArchivistKeyedArchive
import Foundation

/// A cache entry file (`EntryHeader` then a payload) as inspection nodes: the header's names,
/// dates, sizes and checksums, then the payload's own tree.
package enum EntryFileTree {
    /// Inspects `bytes`, a cache entry file.
    ///
    /// - Complexity: O(n) in the size of `bytes`.
    static func inspect(bytes: Data, path: String, limits: ArchiveLimits) -> Inspection {
        var inspection = Inspection(path: path, kind: "cache entry", byteCount: bytes.count, nodes: [])
        let parsed: (header: EntryHeader, length: Int)
        do {
            parsed = try bytes.withUnsafeBytes { try EntryHeader.decode($0, payloadIncluded: false, path: path) }
        } catch {
            inspection.damage.append("the entry header does not read: \(Formatting.reason(error))")
            inspection.nodes = [.field("first bytes", Formatting.hex(bytes, limit: 48))]
            return inspection
        }
        let header = parsed.header
        let payload = bytes.dropFirst(parsed.length)
        let now = Date()
        var fields: [InspectionNode] = [
            InspectionNode(key: "type name", kind: .string, value: .string(header.typeName)),
            header.parameter.map { InspectionNode(key: "parameter", kind: .string, value: .string($0)) }
                ?? .field("parameter", "none (the type's single entry)"),
            .field(
                "written",
                Formatting.date(header.writeDate) + " (" + Formatting.age(now.timeIntervalSince(header.writeDate))
                    + " ago)"
            ),
            .field(
                "expires",
                header.expiry.map {
                    Formatting.date($0)
                        + ($0 <= now
                            ? " (expired " + Formatting.age(now.timeIntervalSince($0)) + " ago)"
                            : " (" + Formatting.age(now.timeIntervalSince($0)) + ")")
                } ?? "never"
            ),
            .field("header", Formatting.count(parsed.length, "byte") + ", CRC32C ok"),
        ]
        var payloadText =
            Formatting.count(header.payloadLength, "byte") + ", "
            + String(format: "CRC32C %08x", header.payloadChecksum)
        if payload.count != header.payloadLength {
            let problem =
                payload.count < header.payloadLength
                ? "truncated: \(Formatting.count(payload.count)) of "
                    + Formatting.count(header.payloadLength, "payload byte") + " present"
                : Formatting.count(payload.count - header.payloadLength, "byte") + " after the payload"
            inspection.damage.append(problem)
            payloadText += " (" + problem + ")"
        } else if CRC32C.checksum(payload) != header.payloadChecksum {
            inspection.damage.append("the payload's CRC32C does not match the header's")
            payloadText += " MISMATCH"
        } else {
            payloadText += " ok"
        }
        fields.append(.field("payload", payloadText))
        inspection.nodes = [InspectionNode(key: "entry header", kind: .section, children: fields)]
        var content = Inspection(path: path, kind: inspection.kind, byteCount: 0, nodes: [])
        if ArchiveOutline.hasMagic(Data(payload)) || PropertyListTable.looksLikePropertyList(Data(payload)) {
            FileInspector.payloadNodes(Data(payload), into: &content, limits: limits, setKind: false)
        } else {
            content.nodes = [.field("bytes", Formatting.hex(payload, limit: 32))]
            content.damage.append("the payload is neither a native archive nor a property list")
        }
        inspection.nodes.append(InspectionNode(key: "payload", kind: .section, children: content.nodes))
        inspection.damage += content.damage
        return inspection
    }

    /// Adds whether the entry file at `path` sits where its names say: in the folder named by
    /// the MD5 of its type name, under the MD5 of its parameter (or `value`). Checked only when
    /// its folder looks like a type's folder (32 hex digits).
    static func checkPlace(path: String, inspection: inout Inspection) {
        guard case .string(let typeName)? = inspection.nodes.first?.children.first?.value else { return }
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().lastPathComponent
        guard folder.count == 32, folder.allSatisfy(\.isHexDigit) else { return }
        let parameter: String? = {
            let node = inspection.nodes.first?.children.dropFirst().first
            if node?.kind == .string, case .string(let text)? = node?.value { return text }
            return nil
        }()
        let expectedFile = parameter.map { MD5.hexDigest(of: $0) } ?? "value"
        var problems: [String] = []
        if folder != MD5.hexDigest(of: typeName) { problems.append("its folder is not the MD5 of its type name") }
        if url.lastPathComponent != expectedFile {
            problems.append("its file name is not \(parameter == nil ? "value" : "the MD5 of its parameter")")
        }
        inspection.nodes[0].children.append(
            .field("place", problems.isEmpty ? "matches its names" : problems.joined(separator: "; "))
        )
        if !problems.isEmpty { inspection.damage.append("misplaced: " + problems.joined(separator: "; ")) }
    }
}
