import Archivist
import ArchivistKeyedArchive
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `archivist inspect` found in one file or folder: what it is, its tree, and the damage
/// it noticed (a checksum that fails, a torn tail, bytes that do not parse).
package struct Inspection: Sendable {
    /// The file or folder inspected.
    package var path: String
    /// What it is: `cache entry`, `native archive`, `keyed archive`, `property list`,
    /// `record store`, `record store log`, or `unknown`.
    package var kind: String
    /// Its size in bytes (a folder: the files read).
    package var byteCount: Int
    /// The tree.
    package var nodes: [InspectionNode]
    /// Damage found; empty when everything checked out.
    package var damage: [String] = []
    /// Things worth knowing that are not damage (quarantined parts set aside earlier).
    package var notes: [String] = []
    /// Why the path could not be inspected at all — it does not exist, cannot be read, or is
    /// neither a file nor a folder: an error about the command line's path, which the tool
    /// writes to standard error, not damage of a file.
    package var failure: String?

    /// An inspection that could not be made, for `failure`.
    static func failed(_ path: String, _ failure: String) -> Inspection {
        var inspection = Inspection(path: path, kind: "unknown", byteCount: 0, nodes: [])
        inspection.failure = failure
        return inspection
    }

    /// The inspection for people: a title line, the tree, then the damage and notes. (A
    /// ``failure`` is not part of it: the tool writes it to standard error.)
    package var text: String {
        var lines = ["\(path): \(kind), \(Formatting.count(byteCount, "byte"))"]
        lines += nodes.map { $0.text(indent: 1) }
        lines += notes.map { "note: " + $0 }
        lines += damage.map { "DAMAGE: " + $0 }
        return lines.joined(separator: "\n")
    }

    /// The inspection as JSON: `path`, `kind`, `size`, `damage`, `notes` and `nodes` (see
    /// ``InspectionNode/json``); for a ``failure``, `path` and `error` alone.
    package var json: JSONValue {
        if let failure { return .object([("path", .string(path)), ("error", .string(failure))]) }
        return .object([
            ("path", .string(path)), ("kind", .string(kind)), ("size", .int(Int64(byteCount))),
            ("damage", .array(damage.map { .string($0) })), ("notes", .array(notes.map { .string($0) })),
            ("nodes", .array(nodes.map(\.json))),
        ])
    }
}

/// Recognises and reads the files Archivist and Foundation write: a cache entry file (its
/// header, then its payload), a native archive, an NSKeyedArchiver archive, a plain property
/// list, a record store's folder or change log. Every read is bounded by ``ArchiveLimits``;
/// no input traps, hangs or allocates beyond a small multiple of its size.
///
/// ```swift
/// let inspection = FileInspector.inspect(path: "records.snapshot")
/// print(inspection.text)
/// ```
package enum FileInspector {
    /// Inspects the file or folder at `path`.
    ///
    /// - Complexity: Blocking file I/O: reads the file (the folder's store files) once; O(n)
    ///   in their size.
    package static func inspect(path: String, limits: ArchiveLimits = ArchiveLimits()) -> Inspection {
        var status = stat()
        guard lstat(path, &status) == 0 else { return .failed(path, Formatting.pathProblem(errno)) }
        switch status.st_mode & S_IFMT {
        case S_IFDIR:
            if InternalFileTree.isInternalFolder(path) { return InternalFileTree.inspect(folder: path, limits: limits) }
            return RecordStoreTree.inspect(folder: path, limits: limits)
        case S_IFREG:
            guard status.st_size <= limits.maxTotalBytes else {
                return Inspection(
                    path: path,
                    kind: "unknown",
                    byteCount: Int(clamping: status.st_size),
                    nodes: [],
                    damage: [
                        "larger than ArchiveLimits.maxTotalBytes (\(Formatting.count(limits.maxTotalBytes, "byte")))"
                    ]
                )
            }
            let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return .failed(path, "cannot be read: " + Formatting.pathProblem(errno)) }
            close(fd)
            guard let data = FileManager.default.contents(atPath: path) else { return .failed(path, "cannot be read") }
            if let file = InternalFileTree.file(at: path) {
                return InternalFileTree.inspect(bytes: data, file: file, path: path)
            }
            var inspection = inspect(bytes: data, path: path, limits: limits)
            if inspection.kind == "cache entry" { EntryFileTree.checkPlace(path: path, inspection: &inspection) }
            return inspection
        default:
            return .failed(path, "not a regular file or folder (a link, FIFO or device is never followed)")
        }
    }

    /// Inspects `bytes`, the contents of `path`.
    ///
    /// - Complexity: O(n) in the size of `bytes`.
    package static func inspect(bytes: Data, path: String, limits: ArchiveLimits = ArchiveLimits()) -> Inspection {
        if bytes.starts(with: Array("ARCE".utf8)) {
            return EntryFileTree.inspect(bytes: bytes, path: path, limits: limits)
        }
        if ArchiveOutline.hasMagic(bytes) {
            var inspection = Inspection(path: path, kind: "native archive", byteCount: bytes.count, nodes: [])
            payloadNodes(bytes, into: &inspection, limits: limits)
            return inspection
        }
        if bytes.starts(with: Array("ARVL".utf8)) {
            return RecordStoreTree.inspect(log: bytes, path: path, limits: limits)
        }
        if bytes.starts(with: Array("ARCI".utf8)) {
            return InternalFileTree.inspect(bytes: bytes, file: .indexSnapshot, path: path)
        }
        if PropertyListTable.looksLikePropertyList(bytes) {
            var inspection = Inspection(path: path, kind: "property list", byteCount: bytes.count, nodes: [])
            payloadNodes(bytes, into: &inspection, limits: limits)
            return inspection
        }
        return Inspection(
            path: path,
            kind: "unknown",
            byteCount: bytes.count,
            nodes: [
                .field("first bytes", Formatting.hex(bytes, limit: 32))
            ],
            damage: [
                "not a file archivist knows: a cache entry, a native archive, an NSKeyedArchiver archive, a property list, a record store, or a cache root's .archivist file"
            ]
        )
    }

    /// Adds the nodes of `bytes` — a native archive, or a keyed archive or property list — to
    /// `inspection`, with what damage it finds; `kind` becomes the format found.
    static func payloadNodes(
        _ bytes: Data,
        into inspection: inout Inspection,
        limits: ArchiveLimits,
        setKind: Bool = true
    ) {
        if ArchiveOutline.hasMagic(bytes) {
            do {
                let outline = try ArchiveOutline(bytes: bytes, limits: limits)
                inspection.nodes += NativeArchiveTree.nodes(outline)
                if !outline.checksumMatches {
                    inspection.damage.append("the archive's CRC32C does not match its bytes")
                }
            } catch {
                inspection.damage.append("the native archive does not read: \(error)")
            }
            return
        }
        let table: PropertyListTable
        do {
            table = try PropertyListTable(bytes: bytes, limits: limits)
        } catch {
            inspection.damage.append("the property list does not read: \(error)")
            return
        }
        guard isKeyedArchive(table) else {
            inspection.nodes += PropertyListTree.nodes(table, maxDepth: limits.maxDepth)
            return
        }
        do {
            let archive = try KeyedArchive(data: bytes, limits: limits)
            if setKind { inspection.kind = "keyed archive" }
            inspection.nodes += KeyedArchiveTree.nodes(
                archive,
                format: table.isBinary ? "binary" : "XML",
                maxDepth: limits.maxDepth
            )
        } catch {
            // Show the plist underneath: its object table is what a person needs to see why.
            inspection.damage.append("the NSKeyedArchiver archive does not read: \(error)")
            inspection.nodes += PropertyListTree.nodes(table, maxDepth: limits.maxDepth)
        }
    }

    /// Whether the root of `table` is a dictionary with `$archiver` (an NSKeyedArchiver plist).
    static func isKeyedArchive(_ table: PropertyListTable) -> Bool {
        guard table.root >= 0, table.root < table.nodes.count, case .dictionary(let keys, _) = table.nodes[table.root]
        else { return false }
        return keys.contains { $0 >= 0 && $0 < table.nodes.count && table.nodes[$0] == .string("$archiver") }
    }
}
