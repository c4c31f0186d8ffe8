import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `archivist verify`: checks every entry of a cache root (header, checksum, that its names
/// hash to its path, that it is a regular file), the size index against the files, stray
/// temporaries and the trash; with `repair`, removes what is damaged and rebuilds the index,
/// through the library's own locks, so the root's processes can keep working meanwhile.
package struct RootVerification: Sendable {
    /// One thing found wrong.
    package struct Finding: Sendable, Equatable {
        /// `corrupt`, `misplaced`, `not a file`, `stray temporary`, `index`.
        package var kind: String
        /// The path below the root (empty for the index as a whole).
        package var path: String
        package var reason: String
        /// The type name and parameter the entry's header records, when there is an entry
        /// file at `path` whose header reads: what a person knows the entry by.
        package var typeName: String?
        package var parameter: String?

        /// The entry as a person knows it: its type name and parameter, where its header
        /// reads, and its path (`productList at shared-caches/…/value`).
        package var subject: String {
            guard let typeName else { return path }
            return typeName + (parameter.map { " " + Formatting.quoted($0, limit: 80) } ?? "") + " at " + path
        }
    }

    package var root: String
    /// Entry files checked, and their bytes.
    package var entries = 0
    package var bytes: Int64 = 0
    package var findings: [Finding] = []
    /// Temporaries of live writers (not damage).
    package var liveTemporaries = 0
    /// Items in the trash still being deleted (not damage).
    package var trashItems = 0
    package var trashBytes: Int64 = 0
    /// Items whose names are not Archivist's (left alone).
    package var foreign: [String] = []
    /// Entry files too large to read whole, not checked (``largestChecked``).
    package var skipped: [String] = []

    /// The largest entry file checked: a payload of the default `ArchiveLimits.maxTotalBytes`
    /// and the longest names a header records.
    static let largestChecked =
        Int64(ArchiveLimits().maxTotalBytes)
        + Int64(EntryHeader.maxTypeNameLength + EntryHeader.maxParameterLength + 48)
    /// The index compared with the files.
    package var index: DiskStore.IndexComparison?
    /// What a repair did, one line each.
    package var repairs: [String] = []

    /// Whether damage was found.
    package var isDamaged: Bool { !findings.isEmpty }

    /// Verifies the root at `root`. Changes nothing.
    ///
    /// - Complexity: Blocking file I/O: reads every entry file whole, O(bytes under the root),
    ///   then the index under the root's lock held shared.
    package init(root: String) {
        self.root = root
        let walk = RootWalk(root: root)
        var files: [String: Int64] = [:]
        for item in walk.entries {
            guard item.isRegularFile else {
                findings.append(
                    Finding(
                        kind: "not a file",
                        path: item.relativePath,
                        reason: "a folder, link or FIFO where an entry belongs; a read reports it as a corrupt entry"
                    )
                )
                continue
            }
            entries += 1
            bytes += item.size
            files[item.relativePath] = item.size
            // Not read into memory whole: larger than the default ArchiveLimits let a cache
            // write (an app may raise them), so not judged either.
            guard item.size <= Self.largestChecked else {
                skipped.append(item.relativePath)
                continue
            }
            if let finding = Self.check(root: root, item: item) { findings.append(finding) }
        }
        let now = TemporaryName.currentTime()
        for temporary in walk.temporaries {
            let name = temporary.relativePath.split(separator: "/").last ?? ""
            if TemporaryName.isAbandoned(name, modified: temporary.modified, now: now) {
                findings.append(
                    Finding(
                        kind: "stray temporary",
                        path: temporary.relativePath,
                        reason:
                            "left by a writer that is gone (\(Formatting.count(temporary.size, "byte"))); the next open sweeps it"
                    )
                )
            } else {
                liveTemporaries += 1
            }
        }
        trashItems = walk.trashItems
        trashBytes = walk.trashBytes
        foreign = walk.foreign
        do {
            let comparison = try DiskStore.compareIndex(rootPath: root, files: files)
            index = comparison
            if let reason = comparison.unreadable {
                findings.append(Finding(kind: "index", path: ".archivist/index", reason: reason))
            }
            for path in comparison.unindexed {
                findings.append(
                    Finding(kind: "index", path: path, reason: "an entry file the size index does not count")
                )
            }
            for path in comparison.missing {
                findings.append(
                    Finding(kind: "index", path: path, reason: "the size index counts an entry that is not there")
                )
            }
            for difference in comparison.wrongSize {
                findings.append(
                    Finding(
                        kind: "index",
                        path: difference.path,
                        reason:
                            "the size index counts \(Formatting.count(difference.indexed, "byte")), the file has \(Formatting.count(difference.onDisk))"
                    )
                )
            }
        } catch {
            findings.append(
                Finding(
                    kind: "index",
                    path: ".archivist/lock",
                    reason: "the root's lock cannot be taken: \(Formatting.reason(error))"
                )
            )
        }
        nameEntries()
    }

    /// Fills in the type name and parameter of each finding about an entry file whose header
    /// reads (a payload that fails its checksum, an entry under another key's name, a size the
    /// index records wrong).
    ///
    /// - Complexity: Blocking file I/O: one header read per entry with findings.
    private mutating func nameEntries() {
        var headers: [String: EntryHeader?] = [:]
        for index in findings.indices where ["corrupt", "misplaced", "index"].contains(findings[index].kind) {
            let path = findings[index].path
            guard !path.isEmpty, !path.hasPrefix(".archivist/") else { continue }
            if headers[path] == nil { headers[path] = try? RootWalk.header(of: root + "/" + path).get() }
            guard let header = headers[path] ?? nil else { continue }
            findings[index].typeName = header.typeName
            findings[index].parameter = header.parameter
        }
    }

    /// What is wrong with one entry file, if anything.
    static func check(root: String, item: RootWalk.Item) -> Finding? {
        let path = root + "/" + item.relativePath

        guard let data = FileManager.default.contents(atPath: path) else {
            var status = stat()
            // Removed since the walk (by a process using the root): nothing to check.
            if lstat(path, &status) != 0 && errno == ENOENT { return nil }
            return Finding(kind: "corrupt", path: item.relativePath, reason: "cannot be read")
        }
        do {
            let (header, _) = try data.withUnsafeBytes { try EntryHeader.decode($0, payloadIncluded: true, path: path) }
            let components = item.relativePath.split(separator: "/").map(String.init)
            guard let name = EntryName(fileName: components[components.count - 1][...]) else { return nil }
            let key = DiskKey(folder: FolderPath(Array(components.dropLast())), name: name)
            if let problem = DiskStore.keyProblem(header: header, key: key) {
                return Finding(kind: "misplaced", path: item.relativePath, reason: problem)
            }
            return nil
        } catch {
            return Finding(kind: "corrupt", path: item.relativePath, reason: Formatting.reason(error))
        }
    }

    /// Repairs what `verification` found, through the store's locks (the root's processes
    /// may keep reading and writing), then verifies again.
    ///
    /// Each damaged entry is checked again under its lock and removed only if it is still the
    /// damaged file (one written since stays); abandoned temporaries are removed; the index is
    /// rebuilt by a scan when it disagreed; the trash is emptied.
    ///
    /// - Throws: ``CacheError`` when the root cannot be opened for writing.
    /// - Complexity: Blocking file I/O: O(bytes under the root) for the second verification,
    ///   O(entries) for a rebuilt index.
    package static func repair(_ verification: RootVerification) throws -> RootVerification {
        let store = try DiskStore.open(at: URL(fileURLWithPath: verification.root, isDirectory: true))
        var repairs: [String] = []
        var rebuild = false
        for finding in verification.findings {
            switch finding.kind {
            case "corrupt", "misplaced", "not a file":
                switch try store.repairEntry(relativePath: finding.path) {
                case .removed(let reason): repairs.append("removed \(finding.subject): \(reason)")
                case .sound: repairs.append("kept \(finding.subject): it is sound now (written again since)")
                case .gone: repairs.append("\(finding.subject) is gone already")
                }
                rebuild = rebuild || finding.kind == "not a file"
            case "stray temporary":
                if store.removeAbandonedTemporary(relativePath: finding.path) {
                    repairs.append("removed \(finding.path)")
                }
            default:
                rebuild = true
            }
        }
        if rebuild {
            try store.rebuildIndex()
            repairs.append("rebuilt the size index from the files")
        }
        if verification.trashItems > 0 {
            store.emptyTrashNow()
            repairs.append("emptied the trash")
        }
        store.waitForTrash()
        try store.flush()
        var after = RootVerification(root: verification.root)
        after.repairs = repairs
        return after
    }

    /// The verification for people: what was checked, each finding, what a repair did.
    package var text: String {
        var lines = ["\(root): \(Formatting.count(entries, "entry", plural: "entries")), \(Formatting.bytes(bytes))"]
        if let index {
            if let reason = index.unreadable {
                lines.append("index: unreadable (\(reason))")
            } else {
                lines.append(
                    "index: \(Formatting.count(index.indexedEntries, "entry", plural: "entries")), \(Formatting.bytes(index.indexedBytes))"
                        + (index.agrees ? ", agrees with the files" : ", DISAGREES with the files")
                )
            }
        }
        if liveTemporaries > 0 { lines.append("temporaries of live writers: \(liveTemporaries)") }
        lines.append(
            "trash: "
                + (trashItems == 0
                    ? "empty"
                    : "\(Formatting.count(trashItems, "item")), \(Formatting.bytes(trashBytes)) still being deleted")
        )
        if !foreign.isEmpty {
            lines.append(
                "not Archivist's (left alone): " + foreign.prefix(5).joined(separator: ", ")
                    + (foreign.count > 5 ? ", …" : "")
            )
        }
        if !skipped.isEmpty { lines.append("too large to check: " + skipped.joined(separator: ", ")) }
        for repair in repairs { lines.append("repair: " + repair) }
        if findings.isEmpty {
            lines.append("no damage found")
        } else {
            lines.append("\(Formatting.count(findings.count, "problem")) found:")
            for finding in findings { lines.append("  \(finding.kind): \(finding.subject): \(finding.reason)") }
        }
        return lines.joined(separator: "\n")
    }

    /// The verification as JSON: `root`, `entries`, `bytes`, `damaged`, `findings` (each with
    /// `kind`, `path`, `reason`, and the entry's `type` and `parameter`, `null` where no
    /// header reads), `index` (`entries`, `bytes`, `agrees`, `unreadable`,
    /// `unindexed`, `missing`, `wrongSize`), `liveTemporaries`, `trash`, `foreign`, `skipped`,
    /// `repairs`.
    package var json: JSONValue {
        var indexJSON = JSONValue.null
        if let index {
            indexJSON = .object([
                ("entries", .int(Int64(index.indexedEntries))), ("bytes", .int(index.indexedBytes)),
                ("agrees", .bool(index.agrees)),
                ("unreadable", .string(index.unreadable)), ("unindexed", .array(index.unindexed.map { .string($0) })),
                ("missing", .array(index.missing.map { .string($0) })),
                (
                    "wrongSize",
                    .array(
                        index.wrongSize.map {
                            .object([
                                ("path", .string($0.path)), ("indexed", .int($0.indexed)), ("onDisk", .int($0.onDisk)),
                            ])
                        }
                    )
                ),
            ])
        }
        return .object([
            ("root", .string(root)), ("entries", .int(Int64(entries))), ("bytes", .int(bytes)),
            ("damaged", .bool(isDamaged)),
            (
                "findings",
                .array(
                    findings.map {
                        .object([
                            ("kind", .string($0.kind)), ("path", .string($0.path)), ("reason", .string($0.reason)),
                            ("type", .string($0.typeName)), ("parameter", .string($0.parameter)),
                        ])
                    }
                )
            ),
            ("index", indexJSON), ("liveTemporaries", .int(Int64(liveTemporaries))),
            ("trash", .object([("items", .int(Int64(trashItems))), ("bytes", .int(trashBytes))])),
            ("foreign", .array(foreign.map { .string($0) })), ("skipped", .array(skipped.map { .string($0) })),
            ("repairs", .array(repairs.map { .string($0) })),
        ])
    }
}
