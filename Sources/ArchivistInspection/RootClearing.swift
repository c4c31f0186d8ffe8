import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `archivist clear`: clears a cache root as `CacheManager.clear` does — each folder renamed
/// into the trash under the root's lock and journaled, so every process's sizes and memory
/// tiers drop it at once — then waits for the trash to be deleted.
package enum RootClearing {
    /// What a clear did.
    package struct Result: Sendable {
        /// The folders moved into the trash, relative to the root.
        package var folders: [String]
        /// The logical bytes they held, as the size index counted them.
        package var freed: Int64

        /// The result for people.
        package var text: String {
            folders.isEmpty
                ? "nothing to clear"
                : "cleared \(Formatting.count(folders.count, "folder")), \(Formatting.bytes(freed)) freed:\n"
                    + folders.map { "  " + $0 }.joined(separator: "\n")
        }

        /// The result as JSON: `folders` and `freed`.
        package var json: JSONValue {
            .object([("folders", .array(folders.map { .string($0) })), ("freed", .int(freed))])
        }
    }

    /// Why `typeName` or `user` selects nothing the root at `root` holds — a type with no
    /// folder anywhere in it, a user with no folder of caches or documents — with what it
    /// does hold: the type names its entries' headers record, and its users' folders (a user
    /// is known by the MD5 of its id, which names the folder; the id itself is not stored).
    /// `nil` when both select something (or are not given).
    ///
    /// ```swift
    /// RootClearing.unknownSelection(root: root, typeName: "hots", user: nil)
    /// // "the root /r holds no type \"hots\"; its types: apiStrategy, productList"
    /// ```
    ///
    /// - Complexity: Blocking file I/O: an `lstat` per location and user folder; when the
    ///   selection is unknown, a walk of the root and one header read per type folder.
    package static func unknownSelection(root: String, typeName: String?, user: String?) -> String? {
        func exists(_ relative: String) -> Bool {
            var status = stat()
            return lstat(root + "/" + relative, &status) == 0
        }
        let userLocations = RootWalk.locations.filter { $0 != "shared-caches" }
        var problems: [String] = []
        if let user {
            let folder = MD5.hexDigest(of: user)
            if !userLocations.contains(where: { exists($0 + "/" + folder) }) {
                problems.append("holds nothing of the user \(Formatting.quoted(user)) (folder \(folder))")
            }
        }
        if let typeName {
            let folder = MD5.hexDigest(of: typeName)
            let inUsers = userLocations.contains { location in
                RootWalk.list(root + "/" + location).contains { exists(location + "/" + $0 + "/" + folder) }
            }
            if !exists("shared-caches/" + folder) && !inUsers {
                problems.append("holds no type \(Formatting.quoted(typeName))")
            }
        }
        guard !problems.isEmpty else { return nil }
        // What it holds: each type folder named by the first of its entries whose header reads.
        let walk = RootWalk(root: root)
        var names: [String: String] = [:]
        var users = Set<String>()
        for item in walk.entries {
            if let user = item.user { users.insert(user) }
            guard names[item.typeFolder] == nil, item.isRegularFile,
                case .success(let header) = RootWalk.header(of: root + "/" + item.relativePath)
            else { continue }
            names[item.typeFolder] = header.typeName
        }
        let unnamed = Set(walk.entries.map(\.typeFolder)).subtracting(names.keys).count
        var holds = "the root \(root) " + problems.joined(separator: " and ") + "; "
        if walk.entries.isEmpty {
            holds += "it holds no entries"
        } else {
            holds += "its types: " + Set(names.values).sorted().joined(separator: ", ")
            if unnamed > 0 {
                holds +=
                    (names.isEmpty ? "" : ", and ") + Formatting.count(unnamed, "type folder")
                    + " whose entries' headers do not read"
            }
            holds +=
                users.isEmpty
                ? "; no users"
                : "; its users' folders (the MD5 of each user id): " + users.sorted().joined(separator: ", ")
        }
        return holds
    }

    /// Clears what `typeName` and `user` select in the root at `root`: with neither,
    /// everything; with a type, that type's folder in the shared caches and in every user's
    /// folders (or only `user`'s); with a user alone, that user's caches and documents.
    ///
    /// - Throws: ``CacheError`` when the root cannot be opened or a rename fails.
    /// - Complexity: One `rename` per folder, then the deletion of what it held.
    package static func clear(root: String, typeName: String?, user: String?) throws -> Result {
        let store = try DiskStore.open(at: URL(fileURLWithPath: root, isDirectory: true))
        let userFolder = user.map { MD5.hexDigest(of: $0) }
        var candidates: [[String]] = []
        if typeName == nil && userFolder == nil {
            candidates = RootWalk.locations.map { [$0] }  // everything: each location at once
        } else {
            for location in RootWalk.locations {
                guard location != "shared-caches" else {
                    if let typeName, userFolder == nil { candidates.append([location, MD5.hexDigest(of: typeName)]) }
                    continue
                }
                let users =
                    userFolder.map { [$0] }
                    ?? RootWalk.list(root + "/" + location).filter {
                        !$0.isEmpty && $0.utf8.allSatisfy(RootWalk.isFolderNameByte)
                    }
                for folderOfUser in users {
                    candidates.append([location, folderOfUser] + (typeName.map { [MD5.hexDigest(of: $0)] } ?? []))
                }
            }
        }
        let folders = candidates.filter { components in
            var status = stat()
            return lstat(root + "/" + components.joined(separator: "/"), &status) == 0
        }
        let freed = try store.clear(folders.map(FolderPath.init))
        store.waitForTrash()
        try store.flush()
        return Result(folders: folders.map { $0.joined(separator: "/") }, freed: freed)
    }
}
