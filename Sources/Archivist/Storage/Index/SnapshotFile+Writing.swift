import Foundation

extension PersistentIndex.SizeIndex {
    /// The bytes of a snapshot's header that name its format and epoch.
    static let headerLength = 14

    /// The epoch a snapshot's header names; `nil` when it is not this format's magic and version.
    static func epoch(ofHeader header: some Collection<UInt8>) -> UInt64? {
        PersistentIndex.SnapshotFile.epoch(ofHeader: header)
    }

    /// Each folder's saved records, what changed since, and its own usage. The dictionaries
    /// are copy-on-write values and the saved records stay in their files, so taking a
    /// snapshot under the lock costs O(folders), and serializing it can happen outside.
    ///
    /// - Complexity: O(number of folders).
    func snapshot() -> Snapshot {
        var folders: [Snapshot.Folder] = []
        func visit(_ node: PersistentIndex.IndexNode, _ components: [String]) {
            if !node.entries.isEmpty || node.saved != nil {
                // The folder's own entries: its usage less its subfolders'.
                var own = node.usage
                for child in node.children.values {
                    own.add(
                        logical: -child.usage.logicalBytes,
                        allocated: -child.usage.allocatedBytes,
                        entries: -child.usage.entryCount
                    )
                }
                folders.append(
                    Snapshot.Folder(components: components, saved: node.saved, entries: node.entries, usage: own)
                )
            }
            for (name, child) in node.children { visit(child, components + [name]) }
        }
        visit(root, [])
        let files = (file.map { [$0] } ?? []) + bases
        return Snapshot(folders: folders, layers: files.map(\.epoch), layerBytes: files.map(\.byteCount))
    }

    /// Reads a whole snapshot file's bytes (for tools and tests) into the index and its epoch;
    /// `nil` for anything damaged or of another version. The older layers it stacks on are
    /// the bytes `base` gives for their epochs (`nil`: missing, and so is the index); without
    /// `base` they are not read, and the index holds every folder's exact usage but only this
    /// file's records.
    static func deserialize(
        _ bytes: [UInt8],
        base: ((UInt64) -> [UInt8]?)? = nil
    ) -> (PersistentIndex.SizeIndex, UInt64)? {
        func source(_ bytes: [UInt8]) -> (PersistentIndex.SnapshotFile.Source, Int, (Int, Int) -> [UInt8]?) {
            (
                .bytes(bytes), bytes.count,
                { offset, count in
                    guard offset >= 0, count >= 0, bytes.count - offset >= count else { return nil }
                    return Array(bytes[offset..<(offset + count)])
                }
            )
        }
        let (top, length, readAt) = source(bytes)
        guard
            let (file, index) = PersistentIndex.SnapshotFile.open(
                source: top,
                length: length,
                readAt: readAt,
                base: base.map { base in
                    { epoch in
                        guard let bytes = base(epoch) else { return nil }
                        let (layer, length, readAt) = source(bytes)
                        return PersistentIndex.SnapshotFile.openLayer(source: layer, length: length, readAt: readAt)
                    }
                }
            )
        else { return nil }
        return (index, file.epoch)
    }

    /// A point-in-time copy of the index, to be serialized without holding the lock.
    struct Snapshot {
        /// One folder: its records in the snapshot's layers, the records set or removed since
        /// (``DiskStore/Record/removed``), and its own usage.
        struct Folder {
            var components: [String]
            var saved: PersistentIndex.SavedStack?
            var entries: [EntryName: PersistentIndex.Record]
            /// The folder's own entries' usage (not its subfolders').
            var usage: DiskUsage

            /// Calls `body` with each entry, hashed ones in digest order, the single entry
            /// first; `false` when a page of a layer cannot be read.
            ///
            /// - Parameters:
            ///   - oldest: Only the layers from this epoch on are read (the entries set since
            ///     are, always).
            ///   - markers: Whether removal markers (``DiskStore/Record/removed``) are handed
            ///     over too.
            /// - Complexity: O(n × layers + k log k), k the records changed since the snapshot.
            func forEach(
                from oldest: UInt64 = 0,
                markers: Bool = false,
                _ body: (EntryName, PersistentIndex.Record) -> Void
            ) -> Bool {
                if let single = entries[.single], !single.isRemoved { body(.single, single) }
                var changed: [(MD5.Digest, PersistentIndex.Record)] = []
                changed.reserveCapacity(entries.count)
                for (name, record) in entries {
                    if case .hashed(let digest) = name { changed.append((digest, record)) }
                }
                changed.sort { $1.0.isAbove($0.0) }
                var next = 0
                func emitChanged(before digest: MD5.Digest?) {
                    while next < changed.count, digest.map({ $0.isAbove(changed[next].0) }) ?? true {
                        if markers || !changed[next].1.isRemoved { body(.hashed(changed[next].0), changed[next].1) }
                        next += 1
                    }
                }
                if let saved {
                    let whole = saved.forEach(from: oldest, markers: markers) { digest, record in
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
        /// The epochs of the layer files the folders' saved records are read from, newest first;
        /// empty for an index built in memory.
        var layers: [UInt64]
        /// The length in bytes of each of those files.
        var layerBytes: [Int]

        /// The snapshot as one layer file that stacks on nothing (``SnapshotFile``), starting
        /// `epoch`: every record merged; `nil` when a page of a layer it was loaded from cannot
        /// be read.
        ///
        /// - Complexity: O(n × layers) in entries, plus sorting what changed since the last
        ///   snapshot.
        func serialized(epoch: UInt64) -> SerializedSnapshot? {
            serialized(epoch: epoch, merging: layers.count)
        }

        /// The snapshot as a new layer file starting `epoch`, which holds what changed since the
        /// snapshot was loaded, merged with the records of its `merging` newest layers, and
        /// stacks on its other layers — those that still count for a folder: `merging` 0 writes
        /// only what changed, ``layers``' count every record (``serialized(epoch:)``). `nil`
        /// when a page of a layer read cannot be read.
        ///
        /// - Complexity: O(folders + k log k + m × layers), k the records changed since the
        ///   snapshot and m those of the layers merged.
        func serialized(epoch: UInt64, merging: Int) -> SerializedSnapshot? {
            precondition(merging >= 0 && merging <= layers.count, "the layers merged are the snapshot's")
            // The records of the layers from this epoch on are merged into the new one.
            let cutoff = merging == 0 ? UInt64.max : layers[merging - 1]
            var pages: [UInt8] = []
            var directory: [UInt8] = []
            var folderCount: UInt32 = 0
            var pageTotal = 0
            var oldestSince = UInt64.max
            for folder in folders {
                // The layers below the new one that still count for the folder.
                let stacksOn = folder.saved?.layers.contains { $0.file.epoch < cutoff } ?? false
                if stacksOn && folder.usage.entryCount == 0 { continue }
                var single: PersistentIndex.Record?
                var count = 0
                var logical: Int64 = 0
                var allocated: Int64 = 0
                var entryCount = 0
                var fences: [(MD5.Digest, UInt32)] = []
                let firstPage = pageTotal
                var inPage = 0
                func closePage() {
                    let start = pages.count - PersistentIndex.snapshotPageSize
                    fences[fences.count - 1].1 = pages.withUnsafeBytes {
                        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start...]))
                    }
                }
                func add(_ name: EntryName, _ record: PersistentIndex.Record) {
                    if !record.isRemoved {
                        logical += record.logical
                        allocated += record.allocated
                        entryCount += 1
                    }
                    guard case .hashed(let digest) = name else {
                        single = record
                        return
                    }
                    if inPage == 0 {
                        pages.append(contentsOf: repeatElement(0, count: PersistentIndex.snapshotPageSize))
                        fences.append((digest, 0))
                        pageTotal += 1
                    }
                    let at =
                        pages.count - PersistentIndex.snapshotPageSize + inPage * PersistentIndex.snapshotRecordSize
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
                    if inPage == PersistentIndex.recordsPerPage {
                        closePage()
                        inPage = 0
                    }
                }
                // A folder on older layers keeps its removal markers, and its usage is the
                // index's; one on none has every record here, and counts them.
                guard folder.forEach(from: cutoff, markers: stacksOn, add) else { return nil }
                if inPage > 0 { closePage() }
                let since: UInt64
                if stacksOn {
                    since = folder.saved!.since
                    oldestSince = min(oldestSince, since)
                    (logical, allocated, entryCount) = (
                        folder.usage.logicalBytes, folder.usage.allocatedBytes, folder.usage.entryCount
                    )
                } else {
                    since = epoch
                }
                guard entryCount > 0 else { continue }
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
                Self.append(since, &directory)
                Self.append(UInt64(entryCount), &directory)
                Self.append(UInt64(bitPattern: logical), &directory)
                Self.append(UInt64(bitPattern: allocated), &directory)
                Self.append(UInt32(count), &directory)
                Self.append(UInt32(firstPage), &directory)
                for (digest, checksum) in fences {
                    Self.append(digest.high, &directory)
                    Self.append(digest.low, &directory)
                    Self.append(checksum, &directory)
                }
            }
            // The older layers that still count for a folder.
            let stackedOn = layers.dropFirst(merging).filter { $0 >= oldestSince }
            var lead: [UInt8] = [UInt8(stackedOn.count)]
            for base in stackedOn { Self.append(base, &lead) }
            Self.append(folderCount, &lead)
            var head = PersistentIndex.SnapshotFile.magic
            Self.append(PersistentIndex.SnapshotFile.version, &head)
            Self.append(epoch, &head)
            Self.append(UInt32(lead.count + directory.count), &head)
            Self.append(UInt32(pageTotal), &head)
            Self.append(UInt16(0), &head)
            head += lead
            head += directory
            Self.append(CRC32C.checksum(head), &head)
            let pagesStart = PersistentIndex.SnapshotFile.pagesStart(
                afterDirectoryEndingAt: head.count,
                pageCount: pageTotal
            )
            head.append(contentsOf: repeatElement(0, count: pagesStart - head.count))
            return SerializedSnapshot(head: head, pages: pages, bases: Array(stackedOn))
        }

        private static func append<T: FixedWidthInteger>(_ value: T, _ out: inout [UInt8]) {
            withUnsafeBytes(of: value.littleEndian) { out += $0 }
        }
    }

    /// A snapshot file's bytes: the header and directory, then the pages.
    struct SerializedSnapshot {
        var head: [UInt8]
        var pages: [UInt8]
        /// The epochs of the older layers the file stacks on, newest first.
        var bases: [UInt64] = []

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
