import Archivist
import Foundation

/// `archivist ls`: what a cache root holds, per location, user and type — entries, bytes,
/// oldest and newest, expired — and, on request, every entry with its type name and
/// parameter as its header records them.
package struct RootListing: Sendable {
    /// One entry, as its header says.
    package struct Entry: Sendable {
        package var relativePath: String
        package var location: String
        package var user: String?
        /// The type's name from the header; the folder's hash when the header does not read.
        package var typeName: String
        package var parameter: String?
        package var size: Int64
        package var allocated: Int64
        package var written: Date?
        package var expiry: Date?
        /// Why the header does not read, if it does not.
        package var problem: String?
    }

    /// One location, user and type.
    package struct Group: Sendable {
        package var location: String
        package var user: String?
        package var typeName: String
        package var entries = 0
        package var bytes: Int64 = 0
        package var allocated: Int64 = 0
        package var oldest: Date?
        package var newest: Date?
        package var expired = 0
        package var unreadable = 0
    }

    package var root: String
    package var now: Date
    package var entries: [Entry]
    package var groups: [Group]

    /// Lists the root at `root`, judging expiry against `now`.
    ///
    /// - Complexity: Blocking file I/O: a walk of the root and one header read per entry.
    package init(root: String, now: Date = Date()) {
        self.root = root
        self.now = now
        let walk = RootWalk(root: root)
        entries = walk.entries.map { item in
            var entry = Entry(
                relativePath: item.relativePath,
                location: item.location,
                user: item.user,
                typeName: item.typeFolder,
                size: item.size,
                allocated: item.allocated
            )
            guard item.isRegularFile else {
                entry.problem = "not a regular file"
                return entry
            }
            switch RootWalk.header(of: root + "/" + item.relativePath) {
            case .success(let header):
                entry.typeName = header.typeName
                entry.parameter = header.parameter
                entry.written = header.writeDate
                entry.expiry = header.expiry
            case .failure(let error):
                entry.problem = error.message
            }
            return entry
        }
        var byKey: [String: Group] = [:]
        var order: [String] = []
        for entry in entries {
            let key = entry.location + "\u{0}" + (entry.user ?? "") + "\u{0}" + entry.typeName
            if byKey[key] == nil {
                byKey[key] = Group(location: entry.location, user: entry.user, typeName: entry.typeName)
                order.append(key)
            }
            byKey[key]!.entries += 1
            byKey[key]!.bytes += entry.size
            byKey[key]!.allocated += entry.allocated
            if entry.problem != nil { byKey[key]!.unreadable += 1 }
            if let written = entry.written {
                byKey[key]!.oldest = min(byKey[key]!.oldest ?? written, written)
                byKey[key]!.newest = max(byKey[key]!.newest ?? written, written)
            }
            if let expiry = entry.expiry, expiry <= now { byKey[key]!.expired += 1 }
        }
        groups = order.map { byKey[$0]! }.sorted {
            ($0.location, $0.user ?? "", $0.typeName) < ($1.location, $1.user ?? "", $1.typeName)
        }
    }

    /// The listing for people: a table of groups with a total line, then, with `entries`, a
    /// table of every entry.
    package func text(entries showEntries: Bool) -> String {
        var rows: [[String]] = [["LOCATION", "USER", "TYPE", "ENTRIES", "BYTES", "OLDEST", "NEWEST", "EXPIRED"]]
        for group in groups {
            var type = group.typeName
            if group.unreadable > 0 { type += " (\(group.unreadable) unreadable)" }
            rows.append([
                group.location, group.user.map { String($0.prefix(8)) } ?? "-", type, Formatting.count(group.entries),
                Formatting.bytes(group.bytes), group.oldest.map(Formatting.date) ?? "-",
                group.newest.map(Formatting.date) ?? "-", Formatting.count(group.expired),
            ])
        }
        rows.append([
            "total", "", "", Formatting.count(groups.reduce(0) { $0 + $1.entries }),
            Formatting.bytes(groups.reduce(0) { $0 + $1.bytes }), "", "",
            Formatting.count(groups.reduce(0) { $0 + $1.expired }),
        ])
        var text = "\(root)\n" + Formatting.table(rows, rightAligned: [3, 4, 7])
        if showEntries && !entries.isEmpty {
            var lines: [[String]] = [["TYPE", "PARAMETER", "SIZE", "AGE", "EXPIRES", "FILE"]]
            for entry in entries.sorted(by: { ($0.typeName, $0.parameter ?? "") < ($1.typeName, $1.parameter ?? "") }) {
                lines.append([
                    entry.typeName,
                    entry.problem.map { "(\($0))" } ?? entry.parameter.map { Formatting.quoted($0, limit: 60) } ?? "-",
                    Formatting.bytes(entry.size),
                    entry.written.map { Formatting.age(now.timeIntervalSince($0)) } ?? "-",
                    entry.expiry.map { $0 <= now ? "expired" : "in " + Formatting.age($0.timeIntervalSince(now)) }
                        ?? "never",
                    entry.relativePath,
                ])
            }
            text += "\n\n" + Formatting.table(lines, rightAligned: [2, 3])
        }
        return text
    }

    /// The listing as JSON: `root`, `groups` (each with `location`, `user`, `type`,
    /// `entries`, `bytes`, `allocated`, `oldest`, `newest`, `expired`, `unreadable`) and,
    /// with `entries`, `entries` (each with `path`, `location`, `user`, `type`, `parameter`,
    /// `size`, `written`, `expiry`, `expired`, `problem`).
    package func json(entries showEntries: Bool) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("root", .string(root)),
            (
                "groups",
                .array(
                    groups.map { group in
                        .object([
                            ("location", .string(group.location)), ("user", .string(group.user)),
                            ("type", .string(group.typeName)),
                            ("entries", .int(Int64(group.entries))), ("bytes", .int(group.bytes)),
                            ("allocated", .int(group.allocated)),
                            ("oldest", .string(group.oldest.map(Formatting.isoDate))),
                            ("newest", .string(group.newest.map(Formatting.isoDate))),
                            ("expired", .int(Int64(group.expired))), ("unreadable", .int(Int64(group.unreadable))),
                        ])
                    }
                )
            ),
        ]
        if showEntries {
            members.append(
                (
                    "entries",
                    .array(
                        entries.map { entry in
                            .object([
                                ("path", .string(entry.relativePath)), ("location", .string(entry.location)),
                                ("user", .string(entry.user)),
                                ("type", .string(entry.typeName)), ("parameter", .string(entry.parameter)),
                                ("size", .int(entry.size)),
                                ("written", .string(entry.written.map(Formatting.isoDate))),
                                ("expiry", .string(entry.expiry.map(Formatting.isoDate))),
                                ("expired", .bool(entry.expiry.map { $0 <= now } ?? false)),
                                ("problem", .string(entry.problem)),
                            ])
                        }
                    )
                )
            )
        }
        return .object(members)
    }
}
