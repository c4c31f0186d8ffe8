import Foundation

/// The shared journal: every committed change of every process, in commit order.
///
/// A record is `length (u32) | body | CRC32C of body (u32)`, little-endian; the body is an
/// operation byte (1 set, 2 remove, 3 clear; 4 set and 5 remove of an entry that existed), the
/// folder (depth, then each component's length and bytes), and for set and remove the entry
/// name (0, or 1 and the 16-byte digest), for set the logical size, allocated size and last
/// access, and for 4 and 5 the logical and allocated size the entry had before. Records hold
/// absolute values, not deltas, so a process that applies a record it already knows changes
/// nothing; the sizes before spare a process replaying the journal over a snapshot file the
/// reading of the file's record for each change (``SizeIndex/Previous``).
extension PersistentIndex {
    /// One committed change to the entries under a root.
    enum Change: Hashable, Sendable {
        /// `key`'s file now holds an entry of these sizes.
        case set(DiskKey, Record)
        /// `key`'s file is gone.
        case remove(DiskKey)
        /// The folder and everything inside it is gone.
        case clear(FolderPath)

        /// What the change touched, for memory tiers and change notifications.
        var touched: (folder: FolderPath, name: EntryName?) {
            switch self {
            case .set(let key, _), .remove(let key): (key.folder, key.name)
            case .clear(let folder): (folder, nil)
            }
        }
    }

    /// Appends `change`'s record to `out`; `before` is what the entry held before it.
    ///
    /// - Complexity: O(length of the folder's components).
    static func encode(_ change: Change, before: Record? = nil, into out: inout [UInt8]) {
        let count = encodedCount(change, before: before)
        let recordBytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            encode(change, before: before, count: count, at: UnsafeMutableRawPointer(buffer.baseAddress!))
            initialized = count
        }
        if out.isEmpty { out = recordBytes } else { out += recordBytes }
    }

    /// The length in bytes of `change`'s record.
    ///
    /// - Complexity: O(number of the folder's components).
    static func encodedCount(_ change: Change, before: Record? = nil) -> Int {
        let folder: FolderPath
        let name: EntryName?
        let hasRecord: Bool
        switch change {
        case .set(let key, _): (folder, name, hasRecord) = (key.folder, key.name, true)
        case .remove(let key): (folder, name, hasRecord) = (key.folder, key.name, false)
        case .clear(let cleared): (folder, name, hasRecord) = (cleared, nil, false)
        }
        var bodyCount = 2  // operation, depth
        for component in folder.components { bodyCount += 1 + component.utf8.count }
        switch name {
        case nil: break
        case .single: bodyCount += 1
        case .hashed: bodyCount += 17
        }
        if hasRecord { bodyCount += 24 }
        if before != nil, name != nil { bodyCount += 16 }
        return bodyCount + 8
    }

    /// Writes `change`'s record, ``encodedCount(_:before:)`` bytes (passed as `count`), at `base`.
    ///
    /// Written in place, the caller's memory sized first: building the body in an array of its
    /// own, appended piece by piece (the components through their UTF-8 views), makes every set
    /// allocate and copy under the cross-process lock, and an array for the record (made
    /// outside a specialization of `Array`) adds a run-time metadata lookup. The
    /// `cache-manager` suite's 1 KB set and the `processes` suite's lock holds guard it.
    ///
    /// - Complexity: O(length of the folder's components).
    static func encode(_ change: Change, before: Record? = nil, count: Int, at base: UnsafeMutableRawPointer) {
        let operation: UInt8
        let folder: FolderPath
        let name: EntryName?
        let record: Record?
        switch change {
        case .set(let key, let sizes):
            (operation, folder, name, record) = (before == nil ? 1 : 4, key.folder, key.name, sizes)
        case .remove(let key): (operation, folder, name, record) = (before == nil ? 2 : 5, key.folder, key.name, nil)
        case .clear(let cleared): (operation, folder, name, record) = (3, cleared, nil, nil)
        }
        let bodyCount = count - 8
        let raw = UnsafeMutableRawBufferPointer(start: base, count: count)
        var at = 0
        func put<T: FixedWidthInteger>(_ value: T) {
            raw.storeBytes(of: value.littleEndian, toByteOffset: at, as: T.self)
            at += MemoryLayout<T>.size
        }
        put(UInt32(bodyCount))
        put(operation)
        put(UInt8(folder.components.count))
        for component in folder.components {
            var component = component
            component.withUTF8 { bytes in
                put(UInt8(bytes.count))
                if let start = bytes.baseAddress { (base + at).copyMemory(from: start, byteCount: bytes.count) }
                at += bytes.count
            }
        }
        switch name {
        case nil: break
        case .single: put(UInt8(0))
        case .hashed(let digest):
            put(UInt8(1))
            put(digest.high)
            put(digest.low)
        }
        if let record {
            put(UInt64(bitPattern: record.logical))
            put(UInt64(bitPattern: record.allocated))
            put(record.lastAccess.bitPattern)
        }
        if let before, name != nil {
            put(UInt64(bitPattern: before.logical))
            put(UInt64(bitPattern: before.allocated))
        }
        put(CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[4..<(4 + bodyCount)])))
        assert(at == count, "a journal record's size was counted wrong")
    }

    /// The whole records at the start of `bytes`, and how many bytes they took. `damaged` says
    /// the records stopped at bytes that are not a whole, checked record (a writer died while
    /// appending, or the file was damaged) rather than at the end.
    ///
    /// - Complexity: O(n) in bytes.
    static func decodeJournal(_ bytes: ArraySlice<UInt8>) -> JournalRecords {
        var previous: PreviousFolder?
        return decodeJournal(bytes, previous: &previous)
    }

    /// ``decodeJournal(_:)`` starting from, and leaving in `previous`, the last folder decoded.
    static func decodeJournal(_ bytes: ArraySlice<UInt8>, previous: inout PreviousFolder?) -> JournalRecords {
        var records = JournalRecords()
        // About one record per 64 bytes: the arrays grow once or twice, not a dozen times.
        records.changes.reserveCapacity(bytes.count / 64)
        records.before.reserveCapacity(bytes.count / 64)
        (records.consumed, records.damaged) = forEachRecord(in: bytes, previous: &previous) { change, before in
            records.changes.append(change)
            records.before.append(before)
        }
        return records
    }

    /// Decodes the whole records at the start of `bytes` in order, handing each change, with
    /// what its entry held before, to `body` — an open applies them straight to the index,
    /// with no array of them in between. Returns the bytes the whole records took, and whether
    /// they stopped at bytes that are not a whole, checked record (see ``decodeJournal(_:)``).
    ///
    /// Read through a raw pointer, each integer one unaligned load: an open replays up to
    /// ``compactionThreshold`` bytes of records, and reading them through slices and
    /// byte-by-byte folds cost several times the replay itself (the `scale` suite's open of a
    /// million entries guards it).
    ///
    /// - Complexity: O(n) in bytes.
    static func forEachRecord(
        in bytes: ArraySlice<UInt8>,
        previous: inout PreviousFolder?,
        _ body: (Change, Record?) -> Void
    ) -> (consumed: Int, damaged: Bool) {
        bytes.withUnsafeBytes { raw -> (Int, Bool) in
            var offset = 0
            while offset < raw.count {
                guard raw.count - offset >= 8 else { return (offset, true) }  // before the load below
                let stored = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                guard let length = journalRecordLength(stored: stored, remaining: raw.count - offset) else {
                    return (offset, true)
                }
                let record = UnsafeRawBufferPointer(rebasing: raw[(offset + 4)..<(offset + 4 + length)])
                let checksum = UInt32(
                    littleEndian: raw.loadUnaligned(fromByteOffset: offset + 4 + length, as: UInt32.self)
                )
                guard CRC32C.checksum(record) == checksum,
                    let (change, before) = decodeChange(record, previous: &previous)
                else {
                    return (offset, true)
                }
                body(change, before)
                offset += 8 + length
            }
            return (offset, false)
        }
    }

    /// The body length of the record whose frame starts `remaining` bytes before the end of
    /// the bytes read, as its first word `stored` gives it; `nil` when no whole, intact record
    /// can be that long (fewer than a frame's 8 bytes remain, the length is above a body's
    /// 4,096 bytes, or it runs past the end): damage, which the caller counts as such.
    ///
    /// The stored word is compared as a `UInt64` before it becomes a `Width`: on Apple Watch
    /// hardware (arm64_32) `Int` is 32 bits, and converting a damaged length of 2³¹ or more
    /// first would trap at every open instead of calling for a rescan. Generic over the width
    /// so that `IntegerWidthTests` evaluates this very check in `Int32`.
    ///
    /// - Complexity: O(1).
    @inline(__always)
    static func journalRecordLength<Width: FixedWidthInteger & SignedInteger>(
        stored: UInt32,
        remaining: Width
    ) -> Width? {
        guard remaining >= 8 else { return nil }
        let room = UInt64(remaining - 8)  // ≥ 0, so the conversion is exact
        guard UInt64(stored) <= UInt64(maxJournalRecordBytes - 8), UInt64(stored) <= room else { return nil }
        return Width(stored)  // ≤ room, which is a `Width`: exact
    }

    /// Journal records decoded: the changes, what each one's entry held before, and where
    /// they stopped.
    struct JournalRecords {
        var changes: [Change] = []
        /// What each change's entry held before it, as its record says (`nil`: nothing, or a
        /// clear).
        var before: [Record?] = []
        /// The bytes the whole records took.
        var consumed = 0
        /// Whether the records stopped at bytes that are not a whole, checked record.
        var damaged = false

        /// Applies every change to `index`, in order.
        func apply(to index: inout SizeIndex) {
            var run = SizeIndex.Replay(expecting: changes.count)
            for i in changes.indices { index.replay(changes[i], before: before[i], in: &run) }
            index.finish(&run)
        }
    }

    /// The last folder a record named, with its bytes in the journal: one writer's records run
    /// in one folder, and a record naming it again takes this value instead of building its
    /// strings, array and path again — and, being the very value, it matches the size index's
    /// last folder by storage rather than by characters (the `processes` suite's 1 KB cache
    /// stores, which replay each other's records, guard it).
    struct PreviousFolder {
        /// A copy, so a journal tail is not kept alive by its last folder.
        var bytes: [UInt8]
        var folder: FolderPath
    }

    private static func decodeChange(
        _ body: UnsafeRawBufferPointer,
        previous: inout PreviousFolder?
    ) -> (Change, Record?)? {
        var at = 0
        func byte() -> UInt8? {
            guard at < body.count else { return nil }
            defer { at += 1 }
            return body[at]
        }
        func u64() -> UInt64? {
            guard body.count - at >= 8 else { return nil }
            defer { at += 8 }
            return UInt64(littleEndian: body.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        }
        func folder() -> FolderPath? {
            let start = at
            if let previous, body.count - at >= previous.bytes.count,
                previous.bytes.withUnsafeBytes({ memcmp(body.baseAddress! + at, $0.baseAddress!, $0.count) == 0 })
            {
                // The same bytes were checked and decoded for the previous record.
                at += previous.bytes.count
                return previous.folder
            }
            guard let depth = byte() else { return nil }
            var components: [String] = []
            for _ in 0..<depth {
                guard let length = byte(), length > 0, body.count - at >= Int(length) else { return nil }
                let utf8 = UnsafeRawBufferPointer(rebasing: body[at..<(at + Int(length))])
                guard utf8.allSatisfy(FolderPath.isAllowed) else { return nil }
                components.append(String(decoding: utf8, as: UTF8.self))
                at += Int(length)
            }
            let folder = FolderPath(components)
            previous = PreviousFolder(bytes: Array(body[start..<at]), folder: folder)
            return folder
        }
        func name() -> EntryName? {
            switch byte() {
            case 0: return .single
            case 1:
                guard let high = u64(), let low = u64() else { return nil }
                return .hashed(MD5.Digest(high: high, low: low))
            default: return nil
            }
        }
        func sizes() -> Record? {
            guard let logical = u64(), let allocated = u64() else { return nil }
            return Record(logical: Int64(bitPattern: logical), allocated: Int64(bitPattern: allocated), lastAccess: 0)
        }
        guard let operation = byte(), let folder = folder() else { return nil }
        let change: Change
        var before: Record?
        switch operation {
        case 1, 4:
            guard let name = name(), var record = sizes(), let access = u64() else { return nil }
            record.lastAccess = Double(bitPattern: access)
            change = .set(DiskKey(folder: folder, name: name), record)
            if operation == 4 {
                guard let sizes = sizes() else { return nil }
                before = sizes
            }
        case 2, 5:
            guard let name = name() else { return nil }
            change = .remove(DiskKey(folder: folder, name: name))
            if operation == 5 {
                guard let sizes = sizes() else { return nil }
                before = sizes
            }
        case 3:
            change = .clear(folder)
        default:
            return nil
        }
        return at == body.count ? (change, before) : nil
    }
}

extension PersistentIndex.SizeIndex {
    /// Applies one change; returns the usage it removed (the old record's, or the cleared
    /// folder's).
    ///
    /// - Complexity: O(number of components).
    ///
    /// - Parameter previous: What the change's entry held before, as its journal record says
    ///   (see ``Previous``); `.lookUp` to read it from the index.
    @discardableResult
    mutating func apply(_ change: PersistentIndex.Change, previous: Previous = .lookUp) -> DiskUsage {
        func usage(_ record: PersistentIndex.Record?) -> DiskUsage {
            guard let record else { return DiskUsage() }
            var usage = DiskUsage()
            usage.logicalBytes = record.logical
            usage.allocatedBytes = record.allocated
            usage.entryCount = 1
            return usage
        }
        switch change {
        case .set(let key, let record):
            // Last access is this process's own business (eviction order); keep the later one.
            return usage(set(key, record, keepingLaterAccess: true, previous: previous))
        case .remove(let key):
            return usage(remove(key, previous: previous))
        case .clear(let folder):
            if folder.components.isEmpty {
                let all = root.usage
                self = PersistentIndex.SizeIndex()
                return all
            }
            return detach(folder)
        }
    }
}
