import CArchivistSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The saved snapshot of the size index, in layers, read in place.
///
/// A snapshot is a stack of layer files. The newest, `.archivist/index`, holds the records
/// changed since the layer below it — sets, and removal markers for entries an older layer
/// holds — and a directory that lists every folder with its exact usage, so an open sums
/// nothing; the older layers it stacks on stay on disk as `.archivist/index.<epoch>` (sixteen
/// hex digits), the `index` files of the epochs they started, and are named, by epoch, in the
/// newest one's directory. A folder's record is the one of the newest layer that holds it,
/// among the layers that still count for the folder: those from the folder's *since* epoch on
/// (a folder cleared, or new, since a layer was written does not see that layer). A fold
/// writes only what changed (``PersistentIndex/foldJournal(merging:)``); a merge writes every record
/// into one layer that stacks on nothing, as a repair's scan does.
///
/// Opening a root reads only the files' headers and directories — each folder's path, usage
/// and the first key of each of its pages — never their records, so an open costs the same
/// for ten thousand entries as for a million and adds only the directories to memory. A
/// record is read when it is asked for, one page at a time, each page checked against its
/// CRC32C on the way in and kept in a small cache of pages.
///
/// A layer file, little-endian:
///
///     header     "ARCI", version (u16) = 4, epoch (u64), directory length (u32),
///                page count (u32), reserved (u16)                              24 bytes
///     directory  the older layers this one stacks on: their count (u8) and epochs (u64
///                each), newest first; then the folder count (u32), then for each folder:
///                depth (u8) and each component (length u8, bytes); whether it holds the
///                single entry (u8) and that entry's record; the oldest epoch whose layer
///                counts for it (u64); its entries' count, logical and allocated bytes
///                over every layer (u64 each); the records it has in this file's pages
///                (u32) and its first page (u32); then for each of those pages the first
///                digest (16 bytes) and the page's CRC32C
///     checksum   CRC32C of the header and directory (u32)
///     padding    to a multiple of ``snapshotPageSize`` (none without pages)
///     pages      ``snapshotPageSize`` bytes each: up to ``recordsPerPage`` records of one folder,
///                sorted by digest, each digest (16 bytes), logical and allocated size and
///                last access (u64 each); a removal marker's sizes are -1
///
/// A file is never changed once renamed into place: a new layer is a new file, so a process
/// reading an older one by its descriptor reads what it opened.
extension PersistentIndex {
    /// Bytes in a page of records.
    static let snapshotPageSize = 4096
    /// Bytes in one record of a page: the digest, the two sizes and the last access.
    static let snapshotRecordSize = 40
    /// Records in a full page.
    static let recordsPerPage = snapshotPageSize / snapshotRecordSize

    /// A snapshot file opened for reading in place; shared by every folder of the index
    /// loaded from it, and closed when the last of them goes.
    ///
    /// Thread-safe: pages are read with `pread`, and the page cache sits behind its own lock.
    final class SnapshotFile: @unchecked Sendable {
        // Safety: `source` and the other stored properties are immutable; `cache` is a lock;
        // `damagedWord` is touched only through the C atomics.

        /// Where the pages are: an open file, or bytes in memory (a snapshot read whole, by
        /// tools and tests).
        enum Source {
            case file(Int32, FileSystem)
            case bytes([UInt8])
        }

        let source: Source
        /// The epoch the snapshot starts.
        let epoch: UInt64
        /// The file's length in bytes.
        let byteCount: Int
        /// Where the first page starts.
        let pagesStart: Int
        let pageCount: Int
        private let cache = Locked(PageCache())
        /// Set once a page fails: read without a lock by every size and `contains`
        /// (``isDamaged``), so a word of its own, through the C atomics; the word after it is
        /// set when the file does not close its descriptor (``relinquish()``).
        private let damagedWord = UnsafeMutablePointer<UInt64>.allocate(capacity: 2)

        /// Pages kept after being read: a lookup reads one page, so this bounds the memory
        /// the records of a large index take in a process, whatever their number.
        static let cachedPages = 64

        init(source: Source, epoch: UInt64, byteCount: Int, pagesStart: Int, pageCount: Int) {
            (self.source, self.epoch, self.byteCount, self.pagesStart, self.pageCount) = (
                source, epoch, byteCount, pagesStart, pageCount
            )
            damagedWord.initialize(repeating: 0, count: 2)
        }

        deinit {
            if case .file(let fd, let fileSystem) = source, archivist_atomic_load_relaxed_u64(damagedWord + 1) == 0 {
                _ = fileSystem.close(fd)
            }
            damagedWord.deallocate()
        }

        /// Leaves the descriptor to the caller, which opened it: the file turned out unusable,
        /// and the caller closes it.
        fileprivate func relinquish() { archivist_atomic_store_u64(damagedWord + 1, 1) }

        /// Whether a page failed its checksum or could not be read: the index cannot answer
        /// for the records in it, and a rescan is due.
        var isDamaged: Bool { archivist_atomic_load_relaxed_u64(damagedWord) != 0 }

        /// Marks the file damaged: a page is not what the directory says it is.
        func markDamaged() { archivist_atomic_store_u64(damagedWord, 1) }

        /// How many pages the cache holds.
        var cachedPageCount: Int { cache.withLock { $0.pages.count } }

        /// Page `index`, checked against `checksum`; `nil` (and the file marked damaged) when
        /// it cannot be read whole or fails its checksum. `caching: false` for a walk of every
        /// page (a fold), which would only push out the pages lookups use.
        func page(_ index: Int, checksum: UInt32, caching: Bool = true) -> [UInt8]? {
            if caching, let cached = cache.withLock({ $0.pages[index] }) { return cached }
            guard index >= 0, index < pageCount, let bytes = read(at: pagesStart + index * snapshotPageSize),
                CRC32C.checksum(bytes) == checksum
            else {
                archivist_atomic_store_u64(damagedWord, 1)
                return nil
            }
            if caching { cache.withLock { $0.insert(bytes, at: index) } }
            return bytes
        }

        /// One page's bytes at `offset`, or `nil` when they cannot all be read.
        private func read(at offset: Int) -> [UInt8]? {
            let count = snapshotPageSize
            switch source {
            case .bytes(let bytes):
                guard offset >= 0, bytes.count - offset >= count else { return nil }
                return Array(bytes[offset..<(offset + count)])
            case .file(let fd, let fileSystem):
                return fileSystem.readBytes(of: fd, at: offset, count: count)
            }
        }

        /// The pages read lately, first in first out.
        private struct PageCache {
            var pages: [Int: [UInt8]] = [:]
            var order: [Int] = []
            var next = 0

            mutating func insert(_ bytes: [UInt8], at index: Int) {
                guard pages[index] == nil else { return }
                if order.count < SnapshotFile.cachedPages {
                    order.append(index)
                } else {
                    pages[order[next]] = nil
                    order[next] = index
                    next = (next + 1) % order.count
                }
                pages[index] = bytes
            }
        }
    }

    /// One folder's hashed entries in a snapshot file: where its pages are, and the first
    /// digest and checksum of each.
    struct SavedFolder {
        let file: SnapshotFile
        let firstPage: Int
        /// How many hashed entries the folder holds in the file.
        let count: Int
        /// The first digest and checksum of each page, read in place from the directory.
        let fences: PageFences

        /// The record of `digest`, `nil` when the folder holds none — or when its page cannot
        /// be read or is not the page the directory describes (the file is then marked
        /// damaged, see ``SnapshotFile/isDamaged``).
        ///
        /// - Complexity: O(log n) comparisons; one page read when the page is not cached.
        func record(_ digest: MD5.Digest) -> Record? {
            // The last page whose first digest is not above `digest`.
            var low = 0
            var high = fences.count
            while low < high {
                let middle = (low + high) / 2
                if fences.digest(middle).isAbove(digest) { high = middle } else { low = middle + 1 }
            }
            guard low > 0 else { return nil }
            let pageIndex = low - 1
            guard let page = file.page(firstPage + pageIndex, checksum: fences.checksum(pageIndex)) else { return nil }
            // The directory's order is checked here, page by page as lookups reach them, rather
            // than for every page at open.
            guard SavedFolder.digest(page, 0) == fences.digest(pageIndex) else {
                file.markDamaged()
                return nil
            }
            let records = recordCount(onPage: pageIndex)
            var lower = 0
            var upper = records
            while lower < upper {
                let middle = (lower + upper) / 2
                let found = SavedFolder.digest(page, middle)
                if found == digest { return SavedFolder.record(page, middle) }
                if found.isAbove(digest) { upper = middle } else { lower = middle + 1 }
            }
            return nil
        }

        /// Calls `body` with every record in digest order; `false` when a page cannot be read.
        ///
        /// - Complexity: O(n), one page read at a time.
        func forEach(_ body: (MD5.Digest, Record) -> Void) -> Bool {
            for pageIndex in 0..<fences.count {
                guard let page = file.page(firstPage + pageIndex, checksum: fences.checksum(pageIndex), caching: false)
                else { return false }
                for slot in 0..<recordCount(onPage: pageIndex) {
                    body(SavedFolder.digest(page, slot), SavedFolder.record(page, slot))
                }
            }
            return true
        }

        private func recordCount(onPage pageIndex: Int) -> Int {
            min(recordsPerPage, count - pageIndex * recordsPerPage)
        }

        private static func word(_ page: [UInt8], _ offset: Int) -> UInt64 {
            page.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        }

        static func digest(_ page: [UInt8], _ slot: Int) -> MD5.Digest {
            page.withUnsafeBytes { MD5.Digest(storedAt: slot * snapshotRecordSize, in: $0) }
        }

        static func record(_ page: [UInt8], _ slot: Int) -> Record {
            let at = slot * snapshotRecordSize
            return Record(
                logical: Int64(bitPattern: word(page, at + 16)),
                allocated: Int64(bitPattern: word(page, at + 24)),
                lastAccess: Double(bitPattern: word(page, at + 32))
            )
        }
    }
}

extension PersistentIndex {
    /// A folder's records in the layers of the snapshot that count for it, newest first: the
    /// record of an entry is the newest layer's, a removal marker saying the entry is gone.
    struct SavedStack {
        /// The oldest epoch whose layer counts for the folder (see ``SnapshotFile``).
        let since: UInt64
        /// The folder's records in each layer that holds some, newest first; never empty.
        let layers: [SavedFolder]

        /// The record of `digest`: the newest layer's, `nil` when it is a removal marker or no
        /// layer holds one (or a page cannot be read: its file is then marked damaged).
        ///
        /// - Complexity: O(layers × log n); a page read per layer whose page is not cached.
        func record(_ digest: MD5.Digest) -> Record? {
            for layer in layers {
                if let record = layer.record(digest) { return record.isRemoved ? nil : record }
            }
            return nil
        }

        /// Calls `body` with every entry's record in digest order — the newest layer's, none
        /// for a removal marker unless `markers` — from the layers of epoch `oldest` on;
        /// `false` when a page cannot be read.
        ///
        /// - Complexity: O(n × layers), one page of each layer read at a time.
        func forEach(from oldest: UInt64 = 0, markers: Bool = false, _ body: (MD5.Digest, Record) -> Void) -> Bool {
            let read = layers.filter { $0.file.epoch >= oldest }
            if read.count <= 1 {
                return read.first?.forEach { digest, record in if markers || !record.isRemoved { body(digest, record) }
                }
                    ?? true
            }
            var cursors = read.map(Cursor.init)
            while true {
                // The newest layer's record of the lowest digest any layer is at.
                var lowest: (digest: MD5.Digest, record: Record)?
                for i in cursors.indices {
                    guard let head = cursors[i].head() else {
                        if cursors[i].failed { return false }
                        continue
                    }
                    if lowest.map({ $0.digest.isAbove(head.0) }) ?? true { lowest = head }
                }
                guard let lowest else { return true }
                for i in cursors.indices where cursors[i].head()?.0 == lowest.digest { cursors[i].advance() }
                if markers || !lowest.record.isRemoved { body(lowest.digest, lowest.record) }
            }
        }

        /// A walk of one layer's records in digest order, a page at a time.
        private struct Cursor {
            let folder: SavedFolder
            var pageIndex = 0
            var slot = 0
            var page: [UInt8]?
            /// Whether a page could not be read.
            var failed = false

            init(_ folder: SavedFolder) { self.folder = folder }

            /// The record it is at; `nil` past the last, or when its page cannot be read.
            mutating func head() -> (MD5.Digest, Record)? {
                guard !failed, pageIndex < folder.fences.count else { return nil }
                if page == nil {
                    page = folder.file.page(
                        folder.firstPage + pageIndex,
                        checksum: folder.fences.checksum(pageIndex),
                        caching: false
                    )
                    if page == nil {
                        failed = true
                        return nil
                    }
                }
                return (SavedFolder.digest(page!, slot), SavedFolder.record(page!, slot))
            }

            mutating func advance() {
                slot += 1
                if slot == min(recordsPerPage, folder.count - pageIndex * recordsPerPage) {
                    (pageIndex, slot, page) = (pageIndex + 1, 0, nil)
                }
            }
        }
    }
}

extension PersistentIndex {
    /// A folder's page fences — each page's first digest (16 bytes) and CRC32C (4 bytes) —
    /// read in place from the snapshot's directory bytes.
    ///
    /// Left as bytes: an open of a million entries' snapshot would otherwise decode some
    /// 10,000 fences before the first lookup, most of which no lookup of a short-lived process
    /// reaches (the `scale` suite's open guards it). The directory's CRC32C was checked at
    /// open; the order of the digests, which the binary search relies on, is checked on each
    /// page a lookup reads (``SavedFolder/record(_:)``).
    struct PageFences {
        /// The directory's bytes, shared by every folder of the file.
        private let bytes: ArraySlice<UInt8>
        /// Where the first fence starts in `bytes`.
        private let start: Int
        /// How many pages.
        let count: Int

        /// Bytes in one fence: the digest and the checksum.
        static let stride = 20

        /// The fences of `count` pages at `start` in `bytes`, which must hold them all.
        init(_ bytes: ArraySlice<UInt8>, start: Int, count: Int) {
            precondition(
                start >= bytes.startIndex && bytes.endIndex - start >= count * Self.stride,
                "the fences lie inside the directory"
            )
            (self.bytes, self.start, self.count) = (bytes, start, count)
        }

        /// The first digest of page `index`.
        func digest(_ index: Int) -> MD5.Digest {
            let at = start - bytes.startIndex + index * Self.stride
            return bytes.withUnsafeBytes { MD5.Digest(storedAt: at, in: $0) }
        }

        /// The CRC32C of page `index`.
        func checksum(_ index: Int) -> UInt32 {
            let at = start - bytes.startIndex + index * Self.stride + 16
            return bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
        }
    }
}

// MARK: - Reading

extension PersistentIndex.SnapshotFile {
    static let magic: [UInt8] = Array("ARCI".utf8)
    /// 4: layers of changed records, stacked on older layers.
    static let version: UInt16 = 4
    /// The bytes before the directory.
    static let headerLength = 24
    /// The most older layers a layer may stack on (the count is a byte).
    static let maxBases = 255

    /// Where the pages start: the end of the directory's checksum rounded up to a whole
    /// page, so no page straddles two of the file system's; right there when there are none.
    static func pagesStart(afterDirectoryEndingAt end: Int, pageCount: Int) -> Int {
        pageCount == 0
            ? end
            : (end + PersistentIndex.snapshotPageSize - 1) / PersistentIndex.snapshotPageSize
                * PersistentIndex.snapshotPageSize
    }

    /// The epoch a snapshot's header (its first 14 bytes: magic, version, epoch) names; `nil`
    /// when they are not this format's magic and version.
    static func epoch(ofHeader header: some Collection<UInt8>) -> UInt64? {
        let header = Array(header.prefix(14))
        guard header.count == 14, header.prefix(4).elementsEqual(magic),
            UInt16(header[4]) | UInt16(header[5]) << 8 == version
        else { return nil }
        return header[6..<14].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// What a layer file's directory says.
    struct Directory {
        /// One folder of the directory.
        struct Folder {
            var path: FolderPath
            var single: PersistentIndex.Record?
            /// The oldest epoch whose layer counts for the folder.
            var since: UInt64
            /// The folder's own entries (not its subfolders'), over every layer.
            var usage: DiskUsage
            /// Its records in this file's pages; `nil` when it has none.
            var saved: PersistentIndex.SavedFolder?
        }

        /// The epochs of the older layers the file stacks on, newest first.
        var bases: [UInt64]
        var folders: [Folder]
    }

    /// One layer file whose header is `header` (its first ``headerLength`` bytes), read with
    /// `readAt` (offset, count → bytes, `nil` when they cannot be read), and the file length
    /// `length`: the file and its directory; `nil` for anything damaged or of another version.
    /// Judged by the header and the lengths it gives before anything else is read, so a file
    /// of another format, garbage or a sparse file of gigabytes costs one small read.
    ///
    /// - Complexity: O(folders + pages), never O(entries).
    static func openLayer(
        source: Source,
        length: Int,
        readAt: (Int, Int) -> [UInt8]?
    ) -> (PersistentIndex.SnapshotFile, Directory)? {
        guard length >= headerLength + 4, let header = readAt(0, headerLength),
            let epoch = epoch(ofHeader: header)
        else { return nil }
        var reader = SnapshotReader(header[...])
        reader.skip(14)
        // The lengths must add up before the directory is read: a short or overlong file is
        // damaged. Compared as they are read, before any sum: a 32-bit `Int` cannot hold every
        // length a damaged header may give.
        guard let rawDirectory = reader.uint32(), let rawPages = reader.uint32(),
            UInt64(rawDirectory) + UInt64(headerLength + 4) <= UInt64(length),
            UInt64(rawPages) <= UInt64(length / PersistentIndex.snapshotPageSize)
        else { return nil }
        let directoryLength = Int(rawDirectory)
        let pageCount = Int(rawPages)
        let pagesStart = pagesStart(afterDirectoryEndingAt: headerLength + directoryLength + 4, pageCount: pageCount)
        guard pagesStart <= length, length - pagesStart == pageCount * PersistentIndex.snapshotPageSize,
            let rest = readAt(headerLength, directoryLength + 4)
        else { return nil }
        let directory = rest.prefix(directoryLength)
        let stored = rest.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard CRC32C.checksum(directory, seed: CRC32C.checksum(header)) == stored else { return nil }
        let file = PersistentIndex.SnapshotFile(
            source: source,
            epoch: epoch,
            byteCount: length,
            pagesStart: pagesStart,
            pageCount: pageCount
        )
        guard let parsed = Directory(directory, file: file) else {
            file.relinquish()
            return nil
        }
        return (file, parsed)
    }

    /// The index a snapshot's newest layer file gives, with the older layers it stacks on
    /// opened by `base` (an epoch → that layer's file and directory, `nil` when it is missing
    /// or damaged); `nil` when the file is damaged or of another version, or a layer it
    /// stacks on cannot be opened or is not of the epoch it is named by. With `base` `nil`,
    /// the older layers are not read: the folders' usage is exact, their records only this
    /// file's (tools that summarize one file).
    ///
    /// - Complexity: O(folders + pages) of each layer, never O(entries).
    static func open(
        source: Source,
        length: Int,
        readAt: (Int, Int) -> [UInt8]?,
        base: ((UInt64) -> (PersistentIndex.SnapshotFile, Directory)?)?
    ) -> (PersistentIndex.SnapshotFile, PersistentIndex.SizeIndex)? {
        guard let (file, directory) = openLayer(source: source, length: length, readAt: readAt) else { return nil }
        var bases: [(PersistentIndex.SnapshotFile, [FolderPath: PersistentIndex.SavedFolder])] = []
        if let base {
            var above = file.epoch
            for epoch in directory.bases {
                guard epoch < above, let (layer, layerDirectory) = base(epoch), layer.epoch == epoch else {
                    file.relinquish()
                    return nil
                }
                above = epoch
                var saved: [FolderPath: PersistentIndex.SavedFolder] = [:]
                for folder in layerDirectory.folders { saved[folder.path] = folder.saved }
                bases.append((layer, saved))
            }
        }
        var index = PersistentIndex.SizeIndex()
        for folder in directory.folders {
            var layers: [PersistentIndex.SavedFolder] = []
            if let own = folder.saved { layers.append(own) }
            for (layer, saved) in bases where layer.epoch >= folder.since {
                if let older = saved[folder.path] { layers.append(older) }
            }
            let stack = layers.isEmpty ? nil : PersistentIndex.SavedStack(since: folder.since, layers: layers)
            guard index.load(folder.path, saved: stack, single: folder.single, usage: folder.usage) else {
                file.relinquish()
                return nil
            }
        }
        index.file = file
        index.bases = bases.map(\.0)
        return (file, index)
    }
}

extension PersistentIndex.SnapshotFile.Directory {
    /// The directory of the layer `file`, from its bytes; `nil` when it is damaged.
    fileprivate init?(_ directory: ArraySlice<UInt8>, file: PersistentIndex.SnapshotFile) {
        var reader = SnapshotReader(directory)
        guard let baseCount = reader.byte() else { return nil }
        bases = []
        for _ in 0..<baseCount {
            guard let epoch = reader.uint64() else { return nil }
            bases.append(epoch)
        }
        guard let folderCount = reader.uint32() else { return nil }
        folders = []
        var pagesClaimed = 0
        var seen = Set<FolderPath>()
        for _ in 0..<folderCount {
            guard let depth = reader.byte() else { return nil }
            var components: [String] = []
            for _ in 0..<depth {
                guard let length = reader.byte(), length > 0, let utf8 = reader.bytes(Int(length)),
                    utf8.allSatisfy(FolderPath.isAllowed)
                else { return nil }
                components.append(String(decoding: utf8, as: UTF8.self))
            }
            guard let hasSingle = reader.byte(), hasSingle <= 1 else { return nil }
            var single: PersistentIndex.Record?
            if hasSingle == 1 {
                guard let record = reader.record() else { return nil }
                single = record
            }
            guard let since = reader.uint64(), since <= file.epoch,
                let entries = reader.uint64().flatMap({ Int(exactly: $0) }),
                let logical = reader.uint64().map({ Int64(bitPattern: $0) }),
                let allocated = reader.uint64().map({ Int64(bitPattern: $0) }),
                let count = reader.uint32().flatMap({ Int(exactly: $0) }),
                let firstPage = reader.uint32().flatMap({ Int(exactly: $0) }),
                logical >= 0, allocated >= 0, entries >= (single == nil ? 0 : 1)
            else { return nil }
            let pages = (count + PersistentIndex.recordsPerPage - 1) / PersistentIndex.recordsPerPage
            guard firstPage == pagesClaimed, pages <= file.pageCount - pagesClaimed else { return nil }
            pagesClaimed += pages
            let fencesStart = reader.position
            guard reader.bytes(pages * PersistentIndex.PageFences.stride) != nil else { return nil }
            let fences = PersistentIndex.PageFences(directory, start: fencesStart, count: pages)
            var usage = DiskUsage()
            usage.logicalBytes = logical
            usage.allocatedBytes = allocated
            usage.entryCount = entries
            let path = FolderPath(components)
            guard seen.insert(path).inserted else { return nil }
            folders.append(
                Folder(
                    path: path,
                    single: single,
                    since: since,
                    usage: usage,
                    saved: count == 0
                        ? nil
                        : PersistentIndex.SavedFolder(file: file, firstPage: firstPage, count: count, fences: fences)
                )
            )
        }
        guard reader.isAtEnd, pagesClaimed == file.pageCount else { return nil }
    }
}

/// A bounds-checked little-endian cursor over a snapshot's header and directory.
struct SnapshotReader {
    private let bytes: ArraySlice<UInt8>
    private var offset: Int

    init(_ bytes: ArraySlice<UInt8>) { (self.bytes, self.offset) = (bytes, bytes.startIndex) }

    var isAtEnd: Bool { offset == bytes.endIndex }
    /// Where the next read starts, as an index of the bytes.
    var position: Int { offset }

    mutating func skip(_ n: Int) { offset = min(bytes.endIndex, offset + n) }

    mutating func bytes(_ n: Int) -> ArraySlice<UInt8>? {
        guard n >= 0, bytes.endIndex - offset >= n else { return nil }
        defer { offset += n }
        return bytes[offset..<(offset + n)]
    }
    mutating func byte() -> UInt8? {
        guard offset < bytes.endIndex else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }
    /// Byte by byte from the slice itself: a slice made per integer costs a retain and a
    /// release each, and the directory of a million entries' snapshot holds some 30,000 of
    /// them (the `scale` suite's open guards it).
    mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard bytes.endIndex - offset >= size else { return nil }
        var value = T(0)
        for i in 0..<size { value |= T(bytes[offset + i]) << (8 * i) }
        offset += size
        return value
    }
    mutating func uint32() -> UInt32? { integer(UInt32.self) }
    mutating func uint64() -> UInt64? { integer(UInt64.self) }
    mutating func record() -> PersistentIndex.Record? {
        guard let logical = uint64(), let allocated = uint64(), let access = uint64() else { return nil }
        let record = PersistentIndex.Record(
            logical: Int64(bitPattern: logical),
            allocated: Int64(bitPattern: allocated),
            lastAccess: Double(bitPattern: access)
        )
        return record.logical >= 0 && record.allocated >= 0 ? record : nil
    }
}
