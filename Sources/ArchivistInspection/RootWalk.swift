import Archivist
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What is below a cache root, found by one walk that changes nothing and follows no link:
/// `<location>/[md5(user)/]md5(type)/<md5(parameter) or value>`, plus temporaries, things in
/// the way of entries, and items that are not Archivist's.
package struct RootWalk: Sendable {
    /// The locations a root holds, by folder name.
    package static let locations = ["shared-caches", "user-caches", "user-documents"]

    /// An entry file, or whatever sits where one belongs.
    package struct Item: Sendable {
        /// The path below the root, `shared-caches/<type>/<name>`.
        package var relativePath: String
        /// `shared-caches`, `user-caches` or `user-documents`.
        package var location: String
        /// The user's folder (the MD5 of the user id), for a user-scoped location.
        package var user: String?
        /// The type's folder (the MD5 of its name).
        package var typeFolder: String
        /// The file name: `value` or the MD5 of the parameter.
        package var name: String
        /// `st_size`, and the bytes allocated (`st_blocks` × 512).
        package var size: Int64
        package var allocated: Int64
        /// The last modification, seconds since 1970.
        package var modified: Double
        /// Whether it is a regular file (else a folder, link or FIFO in an entry's place).
        package var isRegularFile: Bool
    }

    /// The root walked.
    package var root: String
    /// Entry files and what sits in entries' places.
    package var entries: [Item] = []
    /// Temporaries (`.tmp-…`) below the root, relative paths, with their modification times.
    package var temporaries: [(relativePath: String, modified: Double, size: Int64)] = []
    /// Items whose names are not Archivist's, relative paths (left alone by the library too).
    package var foreign: [String] = []
    /// Items in `.archivist/trash` (cleared folders still being deleted) and their bytes.
    package var trashItems = 0
    package var trashBytes: Int64 = 0

    /// Whether `path` looks like a cache root: it has an `.archivist` folder.
    package static func isRoot(_ path: String) -> Bool {
        var status = stat()
        return lstat(path + "/.archivist", &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Why `path`, given as a ROOT to `archivist command`, is not one, in words for standard
    /// error: it does not exist; it is a file (in which root, if any); it is a folder inside the
    /// cache root named (run the command on that); or it has no `.archivist` folder.
    ///
    /// ```swift
    /// RootWalk.whyNotARoot("/r/shared-caches", command: "ls")
    /// // "/r/shared-caches is inside the cache root /r; run archivist ls /r"
    /// ```
    ///
    /// - Complexity: Blocking file I/O: an `lstat` per folder from `path` up to `/`.
    package static func whyNotARoot(_ path: String, command: String) -> String {
        var status = stat()
        guard lstat(path, &status) == 0 else { return "\(path): " + Formatting.pathProblem(errno) }
        let enclosing = enclosingRoot(of: path)
        guard status.st_mode & S_IFMT == S_IFDIR else {
            let inRoot =
                enclosing.map { " in the cache root \($0); run archivist \(command) \($0) for the root" }
                ?? ", not a cache root"
            return "\(path) is a file\(inRoot) (archivist inspect \(path) shows the file)"
        }
        if let enclosing {
            return "\(path) is inside the cache root \(enclosing); run archivist \(command) \(enclosing)"
        }
        return "\(path) is not a cache root (it has no .archivist folder)"
    }

    /// The nearest folder above `path` that is a cache root, if any.
    static func enclosingRoot(of path: String) -> String? {
        var url = URL(fileURLWithPath: path).standardizedFileURL
        for _ in 0..<256 where url.path != "/" && !url.path.isEmpty {
            url = url.deletingLastPathComponent()
            if isRoot(url.path) { return url.path }
        }
        return nil
    }

    /// Walks the root at `root`.
    ///
    /// - Complexity: Blocking file I/O: one `readdir` per folder and one `lstat` per item.
    package init(root: String) {
        self.root = root
        for location in Self.locations {
            let depth = location == "shared-caches" ? 1 : 2  // folders between location and entry
            walk(relative: location, location: location, components: [], typeDepth: depth)
        }
        // Entry writes' temporaries, in their folder beside `.archivist`.
        for name in Self.list(root + "/" + DiskStore.temporariesFolderName) where AtomicFile.isTemporary(name[...]) {
            var status = stat()
            let path = DiskStore.temporariesFolderName + "/" + name
            guard lstat(root + "/" + path, &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFREG {
                temporaries.append((path, Self.modified(status), Int64(status.st_size)))
            } else {
                foreign.append(path)
            }
        }
        var trash: (items: Int, bytes: Int64) = (0, 0)
        for name in Self.list(root + "/.archivist/trash") {
            trash.items += 1
            trash.bytes += Self.bytes(below: root + "/.archivist/trash/" + name, depth: 0)
        }
        (trashItems, trashBytes) = trash
    }

    private mutating func walk(relative: String, location: String, components: [String], typeDepth: Int) {
        for name in Self.list(root + "/" + relative) {
            let path = relative + "/" + name
            var status = stat()
            guard lstat(root + "/" + path, &status) == 0 else { continue }
            let isFolder = status.st_mode & S_IFMT == S_IFDIR
            if AtomicFile.isTemporary(name[...]) {
                if status.st_mode & S_IFMT == S_IFREG {
                    temporaries.append((path, Self.modified(status), Int64(status.st_size)))
                } else {
                    foreign.append(path)
                }
                continue
            }
            let isOurs = !name.isEmpty && name.utf8.allSatisfy(Self.isFolderNameByte)
            if components.count < typeDepth {
                // A user's or type's folder.
                if isFolder && isOurs {
                    walk(relative: path, location: location, components: components + [name], typeDepth: typeDepth)
                } else {
                    foreign.append(path)
                }
                continue
            }
            guard name == "value" || (name.count == 32 && name.allSatisfy(\.isHexDigit)) else {
                foreign.append(path)
                continue
            }
            entries.append(
                Item(
                    relativePath: path,
                    location: location,
                    user: typeDepth == 2 ? components[0] : nil,
                    typeFolder: components[typeDepth - 1],
                    name: name,
                    size: Int64(status.st_size),
                    allocated: Int64(status.st_blocks) * 512,
                    modified: Self.modified(status),
                    isRegularFile: status.st_mode & S_IFMT == S_IFREG
                )
            )
        }
    }

    /// The names in the folder at `path` (none when it cannot be listed), sorted.
    static func list(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let item = readdir(dir) {
            let name = withUnsafePointer(to: &item.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// The logical bytes of the files at and below `path` (links not followed, 32 levels at most).
    static func bytes(below path: String, depth: Int) -> Int64 {
        var status = stat()
        guard lstat(path, &status) == 0 else { return 0 }
        guard status.st_mode & S_IFMT == S_IFDIR else { return Int64(status.st_size) }
        guard depth < 32 else { return 0 }
        return list(path).reduce(0) { $0 + bytes(below: path + "/" + $1, depth: depth + 1) }
    }

    /// Whether `byte` may appear in a folder name of a root: ASCII letters, digits, `-`, `_`
    /// (hashes and fixed words, as `FolderPath` requires).
    static func isFolderNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    static func modified(_ status: stat) -> Double {
        #if canImport(Darwin)
        return Double(status.st_mtimespec.tv_sec) + Double(status.st_mtimespec.tv_nsec) / 1e9
        #else
        return Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
        #endif
    }

    /// The entry header of the file at `path`, read without the payload (its first bytes and
    /// names only), or why it cannot be read.
    ///
    /// - Complexity: Blocking file I/O: at most two reads, O(length of the names).
    package static func header(of path: String) -> Result<EntryHeader, CacheError> {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            return .failure(CacheError(.fileSystem, "cannot open: \(String(cString: strerror(errno)))"))
        }
        defer { close(fd) }
        var fixed = [UInt8](repeating: 0, count: 48)
        let got = fixed.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 48, 0) }
        guard got >= 0 else {
            return .failure(CacheError(.fileSystem, "cannot read: \(String(cString: strerror(errno)))"))
        }
        fixed.removeLast(48 - got)
        var names = 0
        if got == 48 {
            // Assembled as a `UInt32` and clamped: in a 32-bit `Int` (arm64_32) a damaged length
            // of 2³¹ or more would come out negative.
            func u32(_ at: Int) -> Int {
                Int(
                    clamping: UInt32(fixed[at]) | UInt32(fixed[at + 1]) << 8 | UInt32(fixed[at + 2]) << 16 | UInt32(
                        fixed[at + 3]
                    ) << 24
                )
            }
            names = min(u32(8), EntryHeader.maxTypeNameLength + 1) + min(u32(12), EntryHeader.maxParameterLength + 1)
        }
        var bytes = fixed
        if names > 0 {
            var more = [UInt8](repeating: 0, count: names)
            let read = more.withUnsafeMutableBytes { pread(fd, $0.baseAddress, names, 48) }
            if read > 0 { bytes += more.prefix(read) }
        }
        do {
            return .success(
                try bytes.withUnsafeBytes { try EntryHeader.decode($0, payloadIncluded: false, path: path) }.0
            )
        } catch let error as StorageError {
            return .failure(CacheError(error))
        } catch {
            return .failure(CacheError(.corruptEntry, "\(error)"))
        }
    }
}
