import Foundation

extension DiskStore {
    /// What the index knows about one entry file.
    struct Record: Hashable, Sendable {
        var logical: Int64
        var allocated: Int64
        /// Seconds since 1970 of the last read or write, for least-recently-accessed eviction.
        var lastAccess: Double
    }

    /// A folder in the index: its subfolders, its entries, and the usage of everything inside.
    final class IndexNode {
        var usage = DiskUsage()
        var children: [String: IndexNode] = [:]
        /// Keyed by trivially destroyable names, so dropping a folder of 100,000 entries frees
        /// one buffer rather than 100,000 strings.
        var entries: [EntryName: Record] = [:]
    }

    /// The in-memory size index: a tree of folders mirroring the disk, each carrying the total
    /// usage below it, so any folder's size is a walk of a few components.
    ///
    /// Not thread-safe; ``DiskStore`` keeps it behind its state lock.
    struct SizeIndex {
        var root = IndexNode()
        /// The folder an entry was last set in, and its nodes from the root down: sets run in
        /// one folder (a cache type being filled), and this spares each of them the walk — a
        /// `String`-keyed dictionary lookup per component and the path's array. Dropped when a
        /// folder leaves the tree (``detach(_:)``); a node, once in the tree, stays there until
        /// then.
        ///
        /// Held in an object: checking an optional tuple copies it, retaining the folder's array
        /// and string and the path on every set, the journal's replayed ones included. The
        /// `cache-manager` suite's 1 KB set guards both.
        private var lastWalk: Walk?

        /// A folder and its nodes from the root down, for ``lastWalk``.
        private final class Walk {
            let folder: FolderPath
            let path: [IndexNode]
            init(_ folder: FolderPath, _ path: [IndexNode]) { (self.folder, self.path) = (folder, path) }
        }

        /// The node for `folder`, created when `create` is set.
        private func node(_ folder: FolderPath, create: Bool) -> [IndexNode]? {
            // The folders compare by their arrays' and strings' storage first: the caller's
            // `FolderPath` is usually the very value the last set had.
            if let lastWalk, lastWalk.folder == folder { return lastWalk.path }
            // Sized once: grown append by append, the array was reallocated on every set.
            var path: [IndexNode] = []
            path.reserveCapacity(folder.components.count + 1)
            path.append(root)
            var node = root
            for component in folder.components {
                if let child = node.children[component] {
                    node = child
                } else if create {
                    let child = IndexNode()
                    node.children[component] = child
                    node = child
                } else {
                    return nil
                }
                path.append(node)
            }
            return path
        }

        /// The usage of `folder` and everything inside it.
        ///
        /// - Complexity: O(number of components).
        func usage(of folder: FolderPath) -> DiskUsage {
            node(folder, create: false)?.last?.usage ?? DiskUsage()
        }

        /// The record for `key`, if the index has one.
        func record(_ key: DiskKey) -> Record? {
            node(key.folder, create: false)?.last?.entries[key.name]
        }

        /// Records `key` with `record`, replacing any previous record, which it returns. With
        /// `keepingLaterAccess`, a previous record's later last access is kept.
        ///
        /// - Complexity: O(number of components), amortized; O(1) for the folder of the last set.
        @discardableResult
        mutating func set(_ key: DiskKey, _ record: Record, keepingLaterAccess: Bool = false) -> Record? {
            guard let path = node(key.folder, create: true), let leaf = path.last else { return nil }
            if lastWalk?.folder != key.folder { lastWalk = Walk(key.folder, path) }
            let old = leaf.entries.updateValue(record, forKey: key.name)
            if keepingLaterAccess, let old, old.lastAccess > record.lastAccess {
                leaf.entries[key.name]?.lastAccess = old.lastAccess
            }
            for node in path {
                node.usage.logicalBytes += record.logical - (old?.logical ?? 0)
                node.usage.allocatedBytes += record.allocated - (old?.allocated ?? 0)
                node.usage.entryCount += old == nil ? 1 : 0
            }
            return old
        }

        /// Forgets `key`; returns its record if it had one.
        ///
        /// - Complexity: O(number of components).
        @discardableResult
        mutating func remove(_ key: DiskKey) -> Record? {
            guard let path = node(key.folder, create: false), let leaf = path.last,
                  let old = leaf.entries.removeValue(forKey: key.name)
            else { return nil }
            for node in path {
                node.usage.logicalBytes -= old.logical
                node.usage.allocatedBytes -= old.allocated
                node.usage.entryCount -= 1
            }
            return old
        }

        /// Notes a read of `key` at `time`.
        mutating func touch(_ key: DiskKey, at time: Double) {
            guard let leaf = node(key.folder, create: false)?.last else { return }
            leaf.entries[key.name]?.lastAccess = time
        }

        /// Drops `folder` and everything inside it; returns what it held.
        ///
        /// - Complexity: O(number of components): the subtree is unlinked, not walked.
        mutating func detach(_ folder: FolderPath) -> DiskUsage {
            guard let last = folder.components.last,
                  let path = node(FolderPath(Array(folder.components.dropLast())), create: false),
                  let parent = path.last, let gone = parent.children.removeValue(forKey: last)
            else { return DiskUsage() }
            lastWalk = nil   // it may run through the folder just detached
            for node in path {
                node.usage.logicalBytes -= gone.usage.logicalBytes
                node.usage.allocatedBytes -= gone.usage.allocatedBytes
                node.usage.entryCount -= gone.usage.entryCount
            }
            return gone.usage
        }

        /// The entries directly in `folder`, least recently accessed first.
        ///
        /// - Complexity: O(n log n) in the folder's entries.
        func leastRecentlyAccessed(in folder: FolderPath) -> [(EntryName, Record)] {
            guard let leaf = node(folder, create: false)?.last else { return [] }
            return leaf.entries.sorted { $0.value.lastAccess < $1.value.lastAccess }.map { ($0.key, $0.value) }
        }
    }
}

// MARK: - Persistence

extension DiskStore.SizeIndex {
    private static let magic: [UInt8] = Array("ARCI".utf8)
    /// 2: the journal epoch follows the version.
    private static let version: UInt16 = 2

    /// Each folder's path and entries. The dictionaries are copy-on-write values, so taking a
    /// snapshot under the lock costs O(folders), and serializing it can happen outside.
    ///
    /// - Complexity: O(number of folders).
    func snapshot() -> Snapshot {
        var folders: [([String], [EntryName: DiskStore.Record])] = []
        func visit(_ node: DiskStore.IndexNode, _ components: [String]) {
            if !node.entries.isEmpty { folders.append((components, node.entries)) }
            for (name, child) in node.children { visit(child, components + [name]) }
        }
        visit(root, [])
        return Snapshot(folders: folders)
    }

    /// A point-in-time copy of the index, to be serialized without holding the lock.
    struct Snapshot {
        var folders: [([String], [EntryName: DiskStore.Record])]

        /// The index as bytes: magic, version, the journal epoch it starts, then each folder
        /// that holds entries (its path and its records), then a CRC32C of everything before it.
        ///
        /// - Complexity: O(n) in entries.
        func serialized(epoch: UInt64) -> [UInt8] {
            DiskStore.SizeIndex.serialize(folders, epoch: epoch)
        }
    }

    private static func serialize(_ folders: [([String], [EntryName: DiskStore.Record])], epoch: UInt64) -> [UInt8] {
        var out = Self.magic
        Self.append(Self.version, &out)
        Self.append(epoch, &out)
        for (components, entries) in folders {
            out.append(UInt8(components.count))
            for component in components {
                let utf8 = Array(component.utf8)
                out.append(UInt8(utf8.count))
                out += utf8
            }
            Self.append(UInt32(entries.count), &out)
            for (name, record) in entries {
                switch name {
                case .single:
                    out.append(0)
                case .hashed(let digest):
                    out.append(1)
                    Self.append(digest.high, &out)
                    Self.append(digest.low, &out)
                }
                Self.append(UInt64(bitPattern: record.logical), &out)
                Self.append(UInt64(bitPattern: record.allocated), &out)
                Self.append(record.lastAccess.bitPattern, &out)
            }
        }
        out.append(0xFF)   // end of folders
        Self.append(CRC32C.checksum(out), &out)
        return out
    }

    /// The bytes of a snapshot's header: magic, version, the epoch it starts.
    static let headerLength = 14

    /// The epoch a snapshot's header (its first ``headerLength`` bytes) names; `nil` when they
    /// are not this format's magic and version.
    static func epoch(ofHeader header: some Collection<UInt8>) -> UInt64? {
        let header = Array(header.prefix(headerLength))
        guard header.count == headerLength, header.prefix(4).elementsEqual(magic),
              UInt16(header[4]) | UInt16(header[5]) << 8 == version else { return nil }
        return header[6..<14].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// Parses ``Snapshot/serialized(epoch:)`` output into the index and its epoch; `nil` for
    /// anything damaged or of another version, so the caller rescans.
    ///
    /// - Complexity: O(n) in bytes.
    static func deserialize(_ bytes: [UInt8]) -> (DiskStore.SizeIndex, UInt64)? {
        guard bytes.count >= 19, bytes.prefix(4).elementsEqual(magic) else { return nil }
        let body = bytes[..<(bytes.count - 4)]
        var reader = Reader(bytes: bytes, offset: 4)
        guard CRC32C.checksum(body) == Self.loadUInt32(bytes, bytes.count - 4),
              reader.uint16() == version, let epoch = reader.uint64()
        else { return nil }
        var index = DiskStore.SizeIndex()
        while let depth = reader.byte(), depth != 0xFF {
            var components = [String]()
            for _ in 0..<depth {
                guard let length = reader.byte(), let utf8 = reader.bytes(Int(length)) else { return nil }
                let component = String(decoding: utf8, as: UTF8.self)
                guard !component.isEmpty, component.utf8.allSatisfy(FolderPath.isAllowed) else { return nil }
                components.append(component)
            }
            let folder = FolderPath(components)
            guard let count = reader.uint32() else { return nil }
            for _ in 0..<count {
                guard let kind = reader.byte() else { return nil }
                let name: EntryName
                switch kind {
                case 0: name = .single
                case 1:
                    guard let high = reader.uint64(), let low = reader.uint64() else { return nil }
                    name = .hashed(MD5.Digest(high: high, low: low))
                default: return nil
                }
                guard let logical = reader.uint64(), let allocated = reader.uint64(), let access = reader.uint64()
                else { return nil }
                let record = DiskStore.Record(logical: Int64(bitPattern: logical), allocated: Int64(bitPattern: allocated),
                                              lastAccess: Double(bitPattern: access))
                guard record.logical >= 0, record.allocated >= 0 else { return nil }
                index.set(DiskKey(folder: folder, name: name), record)
            }
        }
        guard reader.offset == bytes.count - 4 else { return nil }
        return (index, epoch)
    }

    private static func append<T: FixedWidthInteger>(_ value: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out += $0 }
    }

    private static func loadUInt32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }

    /// A bounds-checked little-endian cursor over the index bytes (the trailing CRC excluded).
    private struct Reader {
        let bytes: [UInt8]
        var offset: Int
        var end: Int { bytes.count - 4 }

        mutating func bytes(_ n: Int) -> ArraySlice<UInt8>? {
            guard n >= 0, end - offset >= n else { return nil }
            defer { offset += n }
            return bytes[offset..<(offset + n)]
        }
        mutating func byte() -> UInt8? { bytes(1)?.first }
        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            guard let slice = bytes(MemoryLayout<T>.size) else { return nil }
            return slice.reversed().reduce(T(0)) { $0 << 8 | T($1) }
        }
        mutating func uint16() -> UInt16? { integer(UInt16.self) }
        mutating func uint32() -> UInt32? { integer(UInt32.self) }
        mutating func uint64() -> UInt64? { integer(UInt64.self) }
    }
}
