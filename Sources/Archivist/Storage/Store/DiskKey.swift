/// Where an entry lives inside a ``DiskStore``: a folder and a file name, both made only of
/// hashes and fixed words, never of caller strings.
///
/// ```swift
/// let folder = FolderPath(["shared-caches", MD5.hexDigest(of: "productList")])
/// let key = DiskKey(folder: folder, name: .hashed(MD5.digest(of: "/v1/orders")))
/// ```
package struct DiskKey: Hashable, Sendable {
    /// The folder, relative to the store's root.
    package var folder: FolderPath
    /// The file name within the folder.
    package var name: EntryName

    /// A key for `name` in `folder`.
    package init(folder: FolderPath, name: EntryName) {
        self.folder = folder
        self.name = name
    }

    /// `folder/name`, relative to the store's root.
    package var relativePath: String {
        var path = folder.relativePath
        path.reserveCapacity(path.utf8.count + 33)
        path += "/"
        path += name.fileName
        return path
    }

    /// The folder a scan would take a folder at this key's path for, so that whatever it
    /// counted inside can be dropped from the index together with the folder.
    var shadowingFolder: FolderPath {
        FolderPath(folder.components + [name.fileName])
    }
}

/// A folder below a store's root, as path components.
///
/// Components are restricted to ASCII letters, digits, `-` and `_` (MD5 hex digests and
/// fixed words such as `shared-caches`); anything else is a programming error and traps.
///
/// ```swift
/// let folder = FolderPath(["user-caches", MD5.hexDigest(of: user), MD5.hexDigest(of: "orders")])
/// ```
package struct FolderPath: Hashable, Sendable {
    /// The components, outermost first.
    package let components: [String]
    /// The components joined with `/`.
    package let relativePath: String

    /// A folder from checked components.
    package init(_ components: [String]) {
        for component in components {
            precondition(
                !component.isEmpty && component.utf8.allSatisfy(Self.isAllowed),
                "FolderPath components must be hashes or fixed words"
            )
        }
        self.components = components
        self.relativePath = components.joined(separator: "/")
    }

    /// Whether `folder` is this folder or inside it.
    package func contains(_ folder: FolderPath) -> Bool {
        folder.components.starts(with: components)
    }

    static func isAllowed(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}

/// An entry's file name: the folder's single entry, or the MD5 of a parameter.
package enum EntryName: Hashable, Sendable {
    /// The entry stored without a parameter, in a file named `value`.
    case single
    /// The entry for a parameter, in a file named by the parameter's MD5 in hex.
    case hashed(MD5.Digest)

    /// The name for `parameter` (`nil` is the single entry).
    package init(parameter: String?) {
        self = parameter.map { .hashed(MD5.digest(of: $0)) } ?? .single
    }

    /// Parses a file name back; `nil` for names that are not entries.
    package init?(fileName: Substring) {
        if fileName == "value" {
            self = .single
        } else if let digest = MD5.Digest(hex: fileName) {
            self = .hashed(digest)
        } else {
            return nil
        }
    }

    /// Hashes one word: a digest's two halves folded (an MD5's bits are already mixed), the
    /// single entry as 0. The synthesized hash fed three words (the case and both halves) to
    /// the hasher on every lookup of the size index, and again for each entry when it grew.
    package func hash(into hasher: inout Hasher) {
        switch self {
        case .single: hasher.combine(0 as UInt64)
        case .hashed(let digest): hasher.combine(digest.high ^ digest.low)
        }
    }

    /// The file name.
    package var fileName: String {
        switch self {
        case .single: "value"
        case .hashed(let digest): digest.description
        }
    }

    /// Writes the file name's UTF-8 bytes at the start of `out` (room for 32 at least) and
    /// returns how many: ``fileName`` without a string of its own.
    func writeFileName(into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        switch self {
        case .single:
            for (i, byte) in "value".utf8.enumerated() { out[i] = byte }
            return 5
        case .hashed(let digest):
            precondition(out.count >= 32)
            digest.writeHex(into: out.baseAddress!)
            return 32
        }
    }
}

/// Bytes and entries under a folder.
package struct DiskUsage: Hashable, Sendable {
    /// Sum of the entry files' sizes (`st_size`), headers included.
    package var logicalBytes: Int64 = 0
    /// Sum of the blocks the file system allocated to them (`st_blocks * 512`).
    package var allocatedBytes: Int64 = 0
    /// Number of entry files.
    package var entryCount: Int = 0

    /// Nothing.
    package init() {}

    /// Adds the given bytes and entries (negative to take away), all in one mutation: on a
    /// class's stored usage each mutation is an exclusivity-checked access, and the index
    /// updates the usage of every folder above an entry on each change.
    mutating func add(logical: Int64, allocated: Int64, entries: Int) {
        logicalBytes += logical
        allocatedBytes += allocated
        entryCount += entries
    }

    /// Adds `other`'s bytes and entries, in one mutation.
    mutating func add(_ other: DiskUsage) {
        add(logical: other.logicalBytes, allocated: other.allocatedBytes, entries: other.entryCount)
    }

    static func + (a: DiskUsage, b: DiskUsage) -> DiskUsage {
        var sum = a
        sum.logicalBytes += b.logicalBytes
        sum.allocatedBytes += b.allocatedBytes
        sum.entryCount += b.entryCount
        return sum
    }
}
