import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The files of a cache root's own `.archivist` folder — the size index snapshot, its
/// journal, the shared counters, the index marker, the lock files — as inspection nodes: what
/// each is and what it records (epoch, entries, folders, records, processes), read from its
/// bytes without a lock (`PersistentIndex.internalFileSummary(of:bytes:)`). The folder itself is
/// shown as a summary of each of them, with its trash and spare folders.
package enum InternalFileTree {
    /// The internal file at `path`, when its name is one of them and it sits in a root's
    /// `.archivist` folder.
    static func file(at path: String) -> PersistentIndex.InternalFile? {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent()
        guard folder.lastPathComponent == ".archivist", RootWalk.isRoot(folder.deletingLastPathComponent().path) else {
            return nil
        }
        return PersistentIndex.InternalFile(rawValue: url.lastPathComponent)
    }

    /// Whether `path` is a root's `.archivist` folder.
    static func isInternalFolder(_ path: String) -> Bool {
        let url = URL(fileURLWithPath: path)
        return url.lastPathComponent == ".archivist" && RootWalk.isRoot(url.deletingLastPathComponent().path)
    }

    /// What each internal file is called in a report.
    static func kind(_ file: PersistentIndex.InternalFile) -> String {
        switch file {
        case .indexSnapshot: "size index snapshot"
        case .journal: "size index journal"
        case .sharedCounters: "shared counters"
        case .marker: "index marker"
        case .lock: "root lock file"
        case .trashLock: "trash lock file"
        }
    }

    /// Inspects `bytes`, the contents of the internal file `file` at `path`.
    ///
    /// - Complexity: O(n) in the size of `bytes`.
    static func inspect(bytes: Data, file: PersistentIndex.InternalFile, path: String) -> Inspection {
        var inspection = Inspection(path: path, kind: kind(file), byteCount: bytes.count, nodes: [])
        inspection.nodes = nodes(file, bytes: [UInt8](bytes), damage: &inspection.damage, notes: &inspection.notes)
        return inspection
    }

    /// The nodes of one internal file; what is wrong goes to `damage`, what is worth knowing
    /// to `notes`.
    private static func nodes(
        _ file: PersistentIndex.InternalFile,
        bytes: [UInt8],
        damage: inout [String],
        notes: inout [String]
    ) -> [InspectionNode] {
        func number<N: BinaryInteger>(_ key: String, _ value: N) -> InspectionNode {
            InspectionNode(key: key, kind: .integer, value: .unsigned(UInt64(clamping: value)))
        }
        switch PersistentIndex.internalFileSummary(of: file, bytes: bytes) {
        case .indexSnapshot(let summary?):
            notes.append(
                "the journal (.archivist/journal) holds the changes since the snapshot; `archivist verify` compares both with the files"
            )
            return [
                .field("what", "the size index as last saved: each folder's entries and bytes, read in place at open"),
                .field("format", "version \(summary.version)"),
                number("epoch", summary.epoch), number("folders", summary.folders), number("entries", summary.entries),
                InspectionNode(
                    key: "bytes",
                    kind: .integer,
                    value: .integer(summary.logicalBytes),
                    detail: Formatting.bytes(summary.logicalBytes) + ", " + Formatting.bytes(summary.allocatedBytes)
                        + " allocated"
                ),
                number("pages", summary.pages),
            ]
        case .indexSnapshot(nil):
            damage.append(
                "the snapshot does not read (damaged, or of a format version this build does not read): the next process to open the root rescans"
            )
            return [
                .field("what", "the size index as last saved"), .field("first bytes", Formatting.hex(bytes, limit: 24)),
            ]
        case .journal(let summary):
            if summary.isDamaged {
                damage.append(
                    "after byte \(summary.wholeBytes) the journal is not a whole, checked record (a writer died while appending, or the file is damaged): the next process to write rescans"
                )
            }
            return [
                .field("what", "every change committed since the size index snapshot, in commit order"),
                InspectionNode(
                    key: "records",
                    kind: .integer,
                    value: .unsigned(UInt64(summary.records)),
                    detail: [
                        Formatting.count(summary.sets, "set"), Formatting.count(summary.removals, "removal"),
                        Formatting.count(summary.clears, "clear"),
                    ].joined(separator: ", ")
                ),
                number("whole records' bytes", summary.wholeBytes),
            ]
        case .sharedCounters(let summary?):
            guard summary.isThisLayout else {
                damage.append("the shared counters are of another layout: the next open reinitialises them and rescans")
                return [.field("what", "the counters every process of the root maps")]
            }
            if summary.intent {
                notes.append(
                    "a writer stopped between a change and its journal record: the next process to take the lock repairs the index"
                )
            }
            return [
                .field("what", "the counters, process slots and statistics every process of the root maps"),
                number("change", summary.change), number("epoch", summary.epoch),
                InspectionNode(
                    key: "intent",
                    kind: .bool,
                    value: .bool(summary.intent),
                    detail: summary.intent ? "a change without its journal record" : nil
                ),
                number("processes", summary.processes),
                summary.statisticsTypes.map {
                    InspectionNode(
                        key: "statistics",
                        kind: .integer,
                        value: .unsigned(UInt64($0)),
                        detail: Formatting.count($0, "type") + "; `archivist stats` shows them"
                    )
                } ?? .field("statistics", "none (the file has no statistics region)"),
            ]
        case .sharedCounters(nil):
            damage.append("shorter than the shared counters: the next open sizes it again")
            return [.field("what", "the counters every process of the root maps")]
        case .marker(let dirty):
            let state =
                switch dirty {
                case true?: "D: a save was due when its writer stopped; the next open rescans"
                case false?: "C: clean"
                case nil: "empty: never written"
                }
            return [.field("what", "whether the size index was left needing a rescan"), .field("state", state)]
        case .lock(let byteCount):
            return [
                .field(
                    "what",
                    (file == .lock ? "the root's lock" : "the lock every walk of the trash takes")
                        + ", taken with flock(2) on this file" + (byteCount == 0 ? ", which holds nothing" : "")
                )
            ]
        }
    }

    /// Inspects the `.archivist` folder at `folder`: each internal file there, its trash and
    /// spare folders.
    ///
    /// - Complexity: Blocking file I/O: reads each internal file once, and walks the trash.
    static func inspect(folder: String, limits: ArchiveLimits) -> Inspection {
        var inspection = Inspection(path: folder, kind: "cache root's internal folder", byteCount: 0, nodes: [])
        for file in PersistentIndex.InternalFile.allCases {
            let path = folder + "/" + file.rawValue
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            guard status.st_mode & S_IFMT == S_IFREG, status.st_size <= limits.maxTotalBytes,
                let bytes = FileManager.default.contents(atPath: path)
            else {
                inspection.damage.append("\(file.rawValue): not a regular file that reads")
                continue
            }
            inspection.byteCount += bytes.count
            var damage: [String] = []
            var notes: [String] = []
            let children = nodes(file, bytes: [UInt8](bytes), damage: &damage, notes: &notes)
            inspection.nodes.append(
                InspectionNode(
                    key: file.rawValue,
                    kind: .section,
                    typeName: kind(file),
                    detail: Formatting.count(bytes.count, "byte"),
                    children: children
                )
            )
            inspection.damage += damage.map { file.rawValue + ": " + $0 }
            inspection.notes += notes.map { file.rawValue + ": " + $0 }
        }
        for name in ["trash", "spare"] {
            let items = RootWalk.list(folder + "/" + name)
            let bytes = items.reduce(Int64(0)) { $0 + RootWalk.bytes(below: folder + "/" + name + "/" + $1, depth: 0) }
            inspection.nodes.append(
                .field(
                    name,
                    Formatting.count(items.count, "item") + ", " + Formatting.bytes(bytes)
                        + (name == "trash"
                            ? " (cleared folders still being deleted)" : " (emptied folders kept for reuse)")
                )
            )
        }
        return inspection
    }
}
