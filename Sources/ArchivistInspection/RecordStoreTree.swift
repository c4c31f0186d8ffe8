import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `RecordStore` folder as inspection nodes: the snapshot (its generation and records), the
/// change log (header, then each batch with its upserts and deletes) and the quarantined
/// parts earlier opens set aside. Format: `docs/ArchiveFormat.md`, *The RecordStore change log*.
package enum RecordStoreTree {
    static let snapshotName = "records.snapshot"
    static let logName = "records.log"
    static let quarantinePrefix = "records.log.quarantine-"

    /// Inspects the folder at `folder`.
    ///
    /// - Complexity: Blocking file I/O: reads the snapshot and the log; O(their size).
    static func inspect(folder: String, limits: ArchiveLimits) -> Inspection {
        var inspection = Inspection(path: folder, kind: "record store", byteCount: 0, nodes: [])
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        guard names.contains(snapshotName) || names.contains(logName) else {
            if RootWalk.isRoot(folder) {
                inspection.kind = "cache root"
                inspection.notes.append(
                    "`archivist ls` lists a cache root and `archivist verify` checks it; inspect takes one of its files"
                )
            } else {
                inspection.kind = "unknown"
                inspection.damage.append(
                    "a folder without \(snapshotName) or \(logName): not a record store (point inspect at a file)"
                )
            }
            return inspection
        }
        if let snapshot = read(folder + "/" + snapshotName, limits: limits, into: &inspection) {
            inspection.byteCount += snapshot.count
            var part = Inspection(path: folder, kind: "", byteCount: 0, nodes: [])
            FileInspector.payloadNodes(snapshot, into: &part, limits: limits, setKind: false)
            var section = InspectionNode(
                key: "snapshot",
                kind: .section,
                typeName: snapshotName,
                detail: Formatting.count(snapshot.count, "byte"),
                children: part.nodes
            )
            if let summary = snapshotSummary(part.nodes) { section.detail! += ", " + summary }
            inspection.nodes.append(section)
            inspection.damage += part.damage.map { "\(snapshotName): " + $0 }
        } else if names.contains(snapshotName) == false {
            inspection.nodes.append(.field("snapshot", "none yet (the store has not compacted)"))
        }
        if let log = read(folder + "/" + logName, limits: limits, into: &inspection) {
            inspection.byteCount += log.count
            var part = RecordStoreTree.inspect(log: log, path: folder + "/" + logName, limits: limits)
            part.nodes[0].key = "log"
            inspection.nodes += part.nodes
            inspection.damage += part.damage.map { "\(logName): " + $0 }
        }
        let quarantined = names.filter { $0.hasPrefix(quarantinePrefix) }.sorted()
        if !quarantined.isEmpty {
            inspection.nodes.append(
                InspectionNode(
                    key: "quarantined",
                    kind: .section,
                    count: quarantined.count,
                    children: quarantined.map { name in
                        var status = stat()
                        let size = lstat(folder + "/" + name, &status) == 0 ? Int64(status.st_size) : 0
                        return .field(
                            name,
                            Formatting.count(size, "byte") + " set aside by an open that found them torn or corrupt"
                        )
                    }
                )
            )
            inspection.notes.append(
                Formatting.count(quarantined.count, "quarantined part")
                    + ": damage an earlier open set aside (see RecordStore.recoveredDamage)"
            )
        }
        return inspection
    }

    /// The bytes of the file at `path`, or `nil` when there is none (damage is noted for one
    /// that cannot be read or is too large).
    private static func read(_ path: String, limits: ArchiveLimits, into inspection: inout Inspection) -> Data? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        guard status.st_mode & S_IFMT == S_IFREG else {
            inspection.damage.append("\(path) is not a regular file")
            return nil
        }
        guard status.st_size <= limits.maxTotalBytes else {
            inspection.damage.append("\(path) is larger than ArchiveLimits.maxTotalBytes")
            return nil
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            inspection.damage.append("\(path) cannot be read")
            return nil
        }
        return data
    }

    /// `generation n, k records` from a snapshot's nodes.
    private static func snapshotSummary(_ nodes: [InspectionNode]) -> String? {
        guard let root = nodes.first(where: { $0.key == "root" }) else { return nil }
        var parts: [String] = []
        if let generation = root.children.first(where: { $0.key == "generation" })?.value {
            switch generation {
            case .integer(let value): parts.append("generation \(value)")
            case .unsigned(let value): parts.append("generation \(value)")
            default: break
            }
        }
        if let records = root.children.first(where: { $0.key == "records" }), let count = records.count {
            parts.append(Formatting.count(count, "record"))
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// Inspects `bytes`, a change log: its header, then each entry until the first that is
    /// torn or corrupt (what an open would quarantine).
    ///
    /// - Complexity: O(n) in the size of `bytes`.
    static func inspect(log bytes: Data, path: String, limits: ArchiveLimits) -> Inspection {
        var inspection = Inspection(path: path, kind: "record store log", byteCount: bytes.count, nodes: [])
        let raw = [UInt8](bytes)
        func u16(_ at: Int) -> UInt16 { UInt16(raw[at]) | UInt16(raw[at + 1]) << 8 }
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(UInt32(0)) { $0 | UInt32(raw[at + $1]) << (8 * UInt32($1)) } }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(raw[at + $1]) << (8 * UInt64($1)) } }
        var section = InspectionNode(key: "log", kind: .section, detail: Formatting.count(raw.count, "byte"))
        guard raw.count >= 16, raw.starts(with: Array("ARVL".utf8)), u16(6) == 0, [1, 2].contains(u16(4)) else {
            inspection.damage.append(
                raw.count < 16 ? "shorter than a change-log header" : "an unknown change-log header"
            )
            inspection.nodes = [section]
            return inspection
        }
        let version = Int(u16(4))
        let headerSize = version == 2 ? 24 : 16
        var headerText = "version \(version), generation \(u64(8))"
        if version == 2 {
            if raw.count < 24 || u32(16) != CRC32C.checksum(raw[0..<16]) || u32(20) != 0 {
                inspection.damage.append("the header's checksum fails: an open quarantines the whole log")
                headerText += ", header CRC32C MISMATCH"
            } else {
                headerText += ", header CRC32C ok"
            }
        }
        section.children.append(.field("header", headerText))
        var offset = headerSize
        var entries = 0
        var upserts = 0
        var deletes = 0
        while offset < raw.count {
            guard raw.count - offset >= 4 else {
                inspection.damage.append(
                    "a torn entry at byte \(offset): \(Formatting.count(raw.count - offset, "byte")) of a length"
                )
                break
            }
            let length = Int(clamping: u32(offset))
            guard length <= raw.count - offset - 4 else {
                inspection.damage.append(
                    "a torn entry at byte \(offset): it claims \(Formatting.count(length, "byte")), \(Formatting.count(raw.count - offset - 4)) follow"
                )
                break
            }
            let entry = Data(raw[(offset + 4)..<(offset + 4 + length)])
            var part = Inspection(path: path, kind: "", byteCount: 0, nodes: [])
            FileInspector.payloadNodes(entry, into: &part, limits: limits, setKind: false)
            guard part.damage.isEmpty else {
                inspection.damage.append("a corrupt entry at byte \(offset): " + part.damage.joined(separator: "; "))
                break
            }
            entries += 1
            let batch = part.nodes.first(where: { $0.key == "root" })
            let batchUpserts = batch?.children.first(where: { $0.key == "upserts" })?.count ?? 0
            let batchDeletes = batch?.children.first(where: { $0.key == "deletes" })?.count ?? 0
            upserts += batchUpserts
            deletes += batchDeletes
            section.children.append(
                InspectionNode(
                    key: "entry \(entries)",
                    kind: .section,
                    typeName: "at byte \(offset)",
                    detail: [
                        Formatting.count(length, "byte"), Formatting.count(batchUpserts, "upsert"),
                        Formatting.count(batchDeletes, "delete"),
                    ].joined(separator: ", "),
                    children: part.nodes
                )
            )
            offset += 4 + length
        }
        section.detail! +=
            ", " + Formatting.count(entries, "batch", plural: "batches") + " (" + Formatting.count(upserts, "upsert")
            + ", " + Formatting.count(deletes, "delete") + ")"
        if offset < raw.count {
            section.children.append(
                .field("damaged tail", "from byte \(offset), " + Formatting.count(raw.count - offset, "byte"))
            )
        }
        inspection.nodes = [section]
        return inspection
    }
}
