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
            folders.isEmpty ? "nothing to clear"
                : "cleared \(folders.count) folder\(folders.count == 1 ? "" : "s"), \(Formatting.bytes(freed)) freed:\n"
                    + folders.map { "  " + $0 }.joined(separator: "\n")
        }

        /// The result as JSON: `folders` and `freed`.
        package var json: JSONValue { .object([("folders", .array(folders.map { .string($0) })), ("freed", .int(freed))]) }
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
            candidates = RootWalk.locations.map { [$0] }   // everything: each location at once
        } else {
            for location in RootWalk.locations {
                guard location != "shared-caches" else {
                    if let typeName, userFolder == nil { candidates.append([location, MD5.hexDigest(of: typeName)]) }
                    continue
                }
                let users = userFolder.map { [$0] } ?? RootWalk.list(root + "/" + location).filter {
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
