import CArchivistSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Named rows of counters in the shared counters file, which every process opening the root
/// adds to with the atomics of `CArchivistSupport`: an app and its extensions, or the workers
/// of a service, count into the same rows.
///
/// The storage layer keeps rows of opaque counters; what each counter means is the cache
/// layer's (``CacheStatistics``). Layout, in 64-bit words from byte 4096 of
/// `.archivist/shared` (see ``SharedCounters``):
///
/// | words | what |
/// |---|---|
/// | 0 | the layout's magic, written by the first process that claims a row; a region whose word 0 holds another non-zero value is another layout's and is left alone |
/// | 1 | names that found every row taken (not counted) |
/// | 2 | resets so far |
/// | 3..<64 | reserved (0) |
/// | then | ``rowCount`` rows of ``rowWords`` words |
///
/// A row: word 0 its state (0 free, 1 being claimed, 2 ready), 1 the first 8 bytes of the
/// name's MD5, 2 the scope (the caller's small number, a cache location), 3 the name's length
/// in bytes, 4..<16 its first 96 bytes (a longer name is known by its length and hash), then
/// ``counterCount`` counters.
///
/// A row is claimed without a lock: compare-and-swap of its state from 0 to 1, the name
/// written, then the state set to 2. Two processes claiming one name at once may claim two
/// rows; readers add up every row of a name, so counts stay exact. A process killed while
/// claiming leaves a row in state 1, which nobody uses again (a few words lost, nothing
/// counted wrong).
///
/// <!-- snippet: skip SharedCounters, whose words it reads, is internal to the module -->
/// ```swift
/// if let table = SharedStatistics(words: counters.statistics, owner: counters),
///    let row = table.row(named: "hots", scope: 0) {
///     row.add(3, to: 0)
/// }
/// ```
package final class SharedStatistics: @unchecked Sendable {
    // Safety: `base` points into a mapping `owner` keeps alive; every word is read and
    // written through the C11 atomics only.

    static let magic: UInt64 = 0x4152_4348_5354_0001  // "ARCHST", version 1
    static let headerWords = 64
    static let rowWords = 64
    static let nameWords = 12
    static let counterOffset = 16
    /// Counters per row.
    package static let counterCount = rowWords - counterOffset
    static let rowCount = 119
    /// The bytes of the region: the header and the rows.
    static let regionLength = 8 * (headerWords + rowCount * rowWords)
    /// The longest name stored whole; longer names keep this prefix.
    static let storedNameBytes = 8 * nameWords

    private let base: UnsafeMutablePointer<UInt64>
    /// What keeps the mapping alive.
    private let owner: AnyObject

    /// The table at `words` (``SharedCounters/statistics``), `nil` when there is none or it
    /// belongs to another layout.
    init?(words: UnsafeMutablePointer<UInt64>?, owner: AnyObject) {
        guard let words else { return nil }
        let found = archivist_atomic_load_u64(words)
        guard found == 0 || found == Self.magic else { return nil }
        base = words
        self.owner = owner
    }

    /// One row's words, for the caller that claimed or found it; valid while the table's
    /// owner lives.
    package struct Row: @unchecked Sendable {
        // Safety: the words are touched only through the C11 atomics.
        let words: UnsafeMutablePointer<UInt64>

        /// Adds `amount` to counter `counter` (below ``SharedStatistics/counterCount``).
        ///
        /// - Complexity: One atomic add.
        @inline(__always)
        package func add(_ amount: UInt64, to counter: Int) {
            _ = archivist_atomic_add_u64(words + SharedStatistics.counterOffset + counter, amount)
        }

        /// Counter `counter` now.
        package func value(of counter: Int) -> UInt64 {
            archivist_atomic_load_u64(words + SharedStatistics.counterOffset + counter)
        }
    }

    /// A row as read: its name (whole, unless ``isNameComplete`` is false), scope and counters.
    package struct RowContents: Sendable, Hashable {
        /// The name, or its first 96 bytes (cut back to whole characters).
        package var name: String
        /// Whether ``name`` is the whole name.
        package var isNameComplete: Bool
        /// The first 8 bytes of the whole name's MD5.
        package var nameHash: UInt64
        /// The caller's scope number.
        package var scope: UInt8
        /// The counters.
        package var counters: [UInt64]
    }

    private func row(at index: Int) -> UnsafeMutablePointer<UInt64> {
        base + Self.headerWords + index * Self.rowWords
    }

    /// The row of `name` in `scope`, claimed if no process has claimed one yet; `nil` when
    /// every row is taken (the overflow is counted in the header).
    ///
    /// - Complexity: O(rows) atomic loads, plus one MD5 of the name. Callers keep the row.
    func row(named name: String, scope: UInt8) -> Row? {
        let hash = Self.hash(of: name)
        let length = UInt64(name.utf8.count)
        let prefix = Self.prefixWords(of: name)
        for index in 0..<Self.rowCount {
            let words = row(at: index)
            if archivist_atomic_load_u64(words) == 2,
                matches(words, hash: hash, scope: scope, length: length, prefix: prefix)
            {
                return Row(words: words)
            }
        }
        _ = archivist_atomic_compare_exchange_u64(base, 0, Self.magic)
        for index in 0..<Self.rowCount {
            let words = row(at: index)
            guard archivist_atomic_compare_exchange_u64(words, 0, 1) == 0 else { continue }
            archivist_atomic_store_u64(words + 1, hash)
            archivist_atomic_store_u64(words + 2, UInt64(scope))
            archivist_atomic_store_u64(words + 3, length)
            for (offset, word) in prefix.enumerated() { archivist_atomic_store_u64(words + 4 + offset, word) }
            for counter in 0..<Self.counterCount { archivist_atomic_store_u64(words + Self.counterOffset + counter, 0) }
            archivist_atomic_store_u64(words, 2)
            return Row(words: words)
        }
        _ = archivist_atomic_add_u64(base + 1, 1)
        return nil
    }

    /// Every ready row.
    ///
    /// - Complexity: O(rows × counters) atomic loads.
    func rows() -> [RowContents] {
        Self.rows(base)
    }

    /// The names that found no free row.
    var overflow: UInt64 { archivist_atomic_load_u64(base + 1) }

    /// Sets every counter of every ready row (of `name` in `scope` only, when given) to 0.
    ///
    /// A process adding meanwhile adds to 0 or to the old value: each add lands whole,
    /// before or after the reset.
    ///
    /// - Complexity: O(rows × counters) atomic stores.
    func reset(name: String? = nil, scope: UInt8 = 0) {
        let key = name.map { (Self.hash(of: $0), UInt64($0.utf8.count), Self.prefixWords(of: $0)) }
        for index in 0..<Self.rowCount {
            let words = row(at: index)
            guard archivist_atomic_load_u64(words) == 2 else { continue }
            if let (hash, length, prefix) = key,
                !matches(words, hash: hash, scope: scope, length: length, prefix: prefix)
            {
                continue
            }
            for counter in 0..<Self.counterCount { archivist_atomic_store_u64(words + Self.counterOffset + counter, 0) }
        }
        _ = archivist_atomic_add_u64(base + 2, 1)
    }

    private func matches(
        _ words: UnsafeMutablePointer<UInt64>,
        hash: UInt64,
        scope: UInt8,
        length: UInt64,
        prefix: [UInt64]
    ) -> Bool {
        guard archivist_atomic_load_u64(words + 1) == hash, archivist_atomic_load_u64(words + 2) == UInt64(scope),
            archivist_atomic_load_u64(words + 3) == length
        else { return false }
        for (offset, word) in prefix.enumerated() where archivist_atomic_load_u64(words + 4 + offset) != word {
            return false
        }
        return true
    }

    /// The first 8 bytes of `name`'s MD5, as a word.
    static func hash(of name: String) -> UInt64 { MD5.digest(of: name).high }

    /// The name's first ``storedNameBytes`` bytes in words (zero-padded), as stored.
    static func prefixWords(of name: String) -> [UInt64] {
        var words = [UInt64](repeating: 0, count: nameWords)
        words.withUnsafeMutableBytes { out in
            let bytes = Array(name.utf8.prefix(storedNameBytes))
            out.copyBytes(from: bytes)
        }
        return words
    }

    /// The ready rows of the table at `base`.
    private static func rows(_ base: UnsafePointer<UInt64>) -> [RowContents] {
        var rows: [RowContents] = []
        for index in 0..<rowCount {
            let words = UnsafeMutablePointer(mutating: base + headerWords + index * rowWords)
            guard archivist_atomic_load_u64(words) == 2 else { continue }
            let length = Int(clamping: archivist_atomic_load_u64(words + 3))
            var prefix = [UInt64](repeating: 0, count: nameWords)
            for offset in 0..<nameWords { prefix[offset] = archivist_atomic_load_u64(words + 4 + offset) }
            var bytes = prefix.withUnsafeBytes { Array($0.prefix(min(length, storedNameBytes))) }
            var complete = length <= storedNameBytes
            // A cut name may end inside a character: drop bytes until it is valid UTF-8.
            var name = validUTF8(bytes)
            while name == nil, !bytes.isEmpty {
                bytes.removeLast()
                complete = false
                name = validUTF8(bytes)
            }
            rows.append(
                RowContents(
                    name: name ?? "",
                    isNameComplete: complete,
                    nameHash: archivist_atomic_load_u64(words + 1),
                    scope: UInt8(truncatingIfNeeded: archivist_atomic_load_u64(words + 2)),
                    counters: (0..<counterCount).map { archivist_atomic_load_u64(words + counterOffset + $0) }
                )
            )
        }
        return rows
    }

    /// The string `bytes` spell in UTF-8, or `nil` when they are not valid UTF-8.
    private static func validUTF8(_ bytes: [UInt8]) -> String? {
        let string = String(decoding: bytes, as: UTF8.self)
        return string.utf8.elementsEqual(bytes) ? string : nil
    }

    /// The rows in the shared counters file of the root at `rootPath`, read without changing
    /// anything (no lock, no file created: a tool looking at a root another process uses);
    /// `nil` when the root has no such file or no statistics in it.
    ///
    /// - Throws: ``StorageError`` when the file exists but cannot be read.
    /// - Complexity: Blocking file I/O: one `open`, `fstat` and `mmap`.
    package static func rows(ofRootAt rootPath: String) throws -> [RowContents]? {
        try withMapping(rootPath: rootPath, writable: false) { rows($0) }
    }

    /// Resets the counters of the root at `rootPath` as ``reset(name:scope:)`` does, without
    /// opening a store; `false` when the root has no statistics to reset.
    ///
    /// - Throws: ``StorageError`` when the file exists but cannot be mapped for writing.
    /// - Complexity: Blocking file I/O: one `open`, `fstat` and `mmap`.
    package static func reset(rootPath: String, name: String? = nil, scope: UInt8 = 0) throws -> Bool {
        try withMapping(rootPath: rootPath, writable: true) { base in
            guard let table = SharedStatistics(words: base, owner: NSNull()) else { return }
            table.reset(name: name, scope: scope)
        } != nil
    }

    private static func withMapping<R>(
        rootPath: String,
        writable: Bool,
        _ body: (UnsafeMutablePointer<UInt64>) throws -> R
    ) throws -> R? {
        let path = rootPath + "/.archivist/shared"
        let fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw StorageError.posix("open shared counters", path: path, errno: errno)
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw StorageError.posix("fstat", path: path, errno: errno) }
        guard status.st_size >= SharedCounters.length else { return nil }
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        guard let raw = mmap(nil, SharedCounters.length, protection, MAP_SHARED, fd, 0), raw != MAP_FAILED else {
            throw StorageError.posix("mmap shared counters", path: path, errno: errno)
        }
        defer { munmap(raw, SharedCounters.length) }
        let words = raw.bindMemory(to: UInt64.self, capacity: SharedCounters.length / 8)
        guard archivist_atomic_load_u64(words) == SharedCounters.magic else { return nil }
        let table = words + SharedCounters.coreLength / 8
        let found = archivist_atomic_load_u64(table)
        guard found == 0 || found == magic else { return nil }
        return try body(table)
    }
}
