import Foundation

extension DiskStore.SizeIndex {
    /// The bytes of a snapshot's header that name its format and epoch.
    static let headerLength = 14

    /// The epoch a snapshot's header names; `nil` when it is not this format's magic and version.
    static func epoch(ofHeader header: some Collection<UInt8>) -> UInt64? {
        DiskStore.SnapshotFile.epoch(ofHeader: header)
    }

    /// Each folder's saved records and what changed since. The dictionaries are copy-on-write
    /// values and the saved records stay in their file, so taking a snapshot under the lock
    /// costs O(folders), and serializing it can happen outside.
    ///
    /// - Complexity: O(number of folders).
    func snapshot() -> Snapshot {
        var folders: [Snapshot.Folder] = []
        func visit(_ node: DiskStore.IndexNode, _ components: [String]) {
            if !node.entries.isEmpty || node.saved != nil {
                folders.append(Snapshot.Folder(components: components, saved: node.saved, entries: node.entries))
            }
            for (name, child) in node.children { visit(child, components + [name]) }
        }
        visit(root, [])
        return Snapshot(folders: folders)
    }

    /// Reads a whole snapshot file's bytes (for tools and tests) into the index and its epoch;
    /// `nil` for anything damaged or of another version.
    static func deserialize(_ bytes: [UInt8]) -> (DiskStore.SizeIndex, UInt64)? {
        guard
            let (file, index) = DiskStore.SnapshotFile.open(
                source: .bytes(bytes),
                length: bytes.count,
                readAt: { offset, count in
                    guard offset >= 0, count >= 0, bytes.count - offset >= count else { return nil }
                    return Array(bytes[offset..<(offset + count)])
                }
            )
        else { return nil }
        return (index, file.epoch)
    }

    /// A point-in-time copy of the index, to be serialized without holding the lock.
    struct Snapshot {
        /// One folder: its records in the snapshot file it was loaded from, and the records
        /// set or removed since (``DiskStore/Record/removed``).
        struct Folder {
            var components: [String]
            var saved: DiskStore.SavedFolder?
            var entries: [EntryName: DiskStore.Record]

            /// Calls `body` with each entry, hashed ones in digest order, the single entry
            /// first; `false` when a page of the snapshot file cannot be read.
            ///
            /// - Complexity: O(n + k log k), k the records changed since the snapshot file.
            func forEach(_ body: (EntryName, DiskStore.Record) -> Void) -> Bool {
                if let single = entries[.single], !single.isRemoved { body(.single, single) }
                var changed: [(MD5.Digest, DiskStore.Record)] = []
                changed.reserveCapacity(entries.count)
                for (name, record) in entries {
                    if case .hashed(let digest) = name { changed.append((digest, record)) }
                }
                changed.sort { $1.0.isAbove($0.0) }
                var next = 0
                func emitChanged(before digest: MD5.Digest?) {
                    while next < changed.count, digest.map({ $0.isAbove(changed[next].0) }) ?? true {
                        if !changed[next].1.isRemoved { body(.hashed(changed[next].0), changed[next].1) }
                        next += 1
                    }
                }
                if let saved {
                    let whole = saved.forEach { digest, record in
                        emitChanged(before: digest)
                        if next < changed.count, changed[next].0 == digest { return }  // set or removed since
                        body(.hashed(digest), record)
                    }
                    guard whole else { return false }
                }
                emitChanged(before: nil)
                return true
            }
        }

        var folders: [Folder]

        /// The snapshot as a file (``SnapshotFile``) starting `epoch`; `nil` when a page of the
        /// snapshot file it was loaded from cannot be read.
        ///
        /// - Complexity: O(n) in entries, plus sorting what changed since the last snapshot file.
        func serialized(epoch: UInt64) -> SerializedSnapshot? {
            var pages: [UInt8] = []
            var directory: [UInt8] = []
            var folderCount: UInt32 = 0
            var pageTotal = 0
            for folder in folders {
                var single: DiskStore.Record?
                var count = 0
                var logical: Int64 = 0
                var allocated: Int64 = 0
                var fences: [(MD5.Digest, UInt32)] = []
                let firstPage = pageTotal
                var inPage = 0
                func closePage() {
                    let start = pages.count - DiskStore.snapshotPageSize
                    fences[fences.count - 1].1 = pages.withUnsafeBytes {
                        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start...]))
                    }
                }
                let whole = folder.forEach { name, record in
                    logical += record.logical
                    allocated += record.allocated
                    guard case .hashed(let digest) = name else {
                        single = record
                        return
                    }
                    if inPage == 0 {
                        pages.append(contentsOf: repeatElement(0, count: DiskStore.snapshotPageSize))
                        fences.append((digest, 0))
                        pageTotal += 1
                    }
                    let at = pages.count - DiskStore.snapshotPageSize + inPage * DiskStore.snapshotRecordSize
                    pages.withUnsafeMutableBytes { raw in
                        raw.storeBytes(of: digest.high.littleEndian, toByteOffset: at, as: UInt64.self)
                        raw.storeBytes(of: digest.low.littleEndian, toByteOffset: at + 8, as: UInt64.self)
                        raw.storeBytes(
                            of: UInt64(bitPattern: record.logical).littleEndian,
                            toByteOffset: at + 16,
                            as: UInt64.self
                        )
                        raw.storeBytes(
                            of: UInt64(bitPattern: record.allocated).littleEndian,
                            toByteOffset: at + 24,
                            as: UInt64.self
                        )
                        raw.storeBytes(
                            of: record.lastAccess.bitPattern.littleEndian,
                            toByteOffset: at + 32,
                            as: UInt64.self
                        )
                    }
                    count += 1
                    inPage += 1
                    if inPage == DiskStore.recordsPerPage {
                        closePage()
                        inPage = 0
                    }
                }
                guard whole else { return nil }
                if inPage > 0 { closePage() }
                guard count > 0 || single != nil else { continue }
                folderCount += 1
                directory.append(UInt8(folder.components.count))
                for component in folder.components {
                    directory.append(UInt8(component.utf8.count))
                    directory += component.utf8
                }
                if let single {
                    directory.append(1)
                    Self.append(UInt64(bitPattern: single.logical), &directory)
                    Self.append(UInt64(bitPattern: single.allocated), &directory)
                    Self.append(single.lastAccess.bitPattern, &directory)
                } else {
                    directory.append(0)
                }
                Self.append(UInt32(count), &directory)
                Self.append(UInt32(firstPage), &directory)
                Self.append(UInt64(bitPattern: logical), &directory)
                Self.append(UInt64(bitPattern: allocated), &directory)
                for (digest, checksum) in fences {
                    Self.append(digest.high, &directory)
                    Self.append(digest.low, &directory)
                    Self.append(checksum, &directory)
                }
            }
            var head = DiskStore.SnapshotFile.magic
            Self.append(DiskStore.SnapshotFile.version, &head)
            Self.append(epoch, &head)
            Self.append(UInt32(directory.count + 4), &head)  // the folder count leads the directory
            Self.append(UInt32(pageTotal), &head)
            Self.append(UInt16(0), &head)
            Self.append(folderCount, &head)
            head += directory
            Self.append(CRC32C.checksum(head), &head)
            let pagesStart = DiskStore.SnapshotFile.pagesStart(afterDirectoryEndingAt: head.count, pageCount: pageTotal)
            head.append(contentsOf: repeatElement(0, count: pagesStart - head.count))
            return SerializedSnapshot(head: head, pages: pages)
        }

        private static func append<T: FixedWidthInteger>(_ value: T, _ out: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { out += $0 }
        }
    }

    /// A snapshot file's bytes: the header and directory, then the pages.
    struct SerializedSnapshot {
        var head: [UInt8]
        var pages: [UInt8]

        /// The file's length.
        var byteCount: Int { head.count + pages.count }

        /// Calls `body` with the file's bytes, in order, as the chunks of one write.
        func withChunks<R>(_ body: ([UnsafeRawBufferPointer]) throws -> R) rethrows -> R {
            try head.withUnsafeBytes { head in
                try pages.withUnsafeBytes { pages in try body([head, pages]) }
            }
        }

        /// The whole file in one array (tests and tools).
        var bytes: [UInt8] { head + pages }
    }
}
