import Foundation

/// The paths every store and read takes: encode, write with the memory tier kept in step, read
/// from disk or memory, count it.
extension CacheManager {

    /// Which stored values count as present.
    @usableFromInline
    enum Freshness: Sendable {
        /// Not past their expiry.
        case unexpired
        /// Written within this many seconds, whatever the expiry.
        case writtenWithin(TimeInterval)
        /// Any, expired or not (the offline fallback).
        case any

        /// Whether an entry written at `writeDate` that expires at `expiry` (`nil`: never)
        /// may be served at the time `now` gives (read only when an expiry or age is compared).
        @inlinable
        func accepts(writeDate: Date, expiry: Date?, now: () -> Date) -> Bool {
            switch self {
            case .unexpired: expiry.map { $0 > now() } ?? true
            case .writtenWithin(let seconds): now().timeIntervalSince(writeDate) <= seconds
            case .any: true
            }
        }
    }

    /// Encodes `value`, wrapping an archive failure. A `Data` value is not copied into an
    /// archive buffer: its archive is written as the bytes around it plus the value itself
    /// (``Archive/dataPieces(of:options:)``), in the minimal layout — byte for byte
    /// what ``Archive/encode(_:options:)`` writes. Placing the value at a file offset congruent
    /// to its address makes no difference a read or write can see, while its search costs
    /// every set (the `cache-manager` suite's 1 KB and 10 MB sets guard it); readers read
    /// either layout.
    func encode<T: Archivable>(_ value: T, _ type: Kind, _ parameter: String?) throws -> EncodedValue {
        // A metatype comparison, not a dynamic cast: `store` is not specialized for callers.
        if T.self == Data.self {
            let data = value as! Data
            if let pieces = data.withUnsafeBytes({
                Archive.dataPieces(of: $0, options: configuration.archiveOptions)
            }) {
                return .data(data, pieces)
            }
        }
        do {
            return .archive(try Archive.encode(value, options: configuration.archiveOptions))
        } catch {
            tally(type).add(1, .encodingFailed)
            throw CacheError(
                .encodingFailed,
                "\(T.self) could not be archived",
                typeName: type.name,
                parameter: parameter,
                underlyingError: error
            )
        }
    }

    /// Writes encoded bytes; puts the item `memoryItem` makes in the memory tier (or drops the
    /// memory copy) while the entry's lock is held, and drops evicted entries from memory.
    func write(
        _ encoded: EncodedValue,
        for type: Kind,
        parameter: String?,
        expiry: CacheExpiry,
        memoryItem: MemoryItemMaker?
    ) throws {
        do {
            try writeCounted(encoded, for: type, parameter: parameter, expiry: expiry, memoryItem: memoryItem)
        } catch {
            tally(type).count(error)
            throw error
        }
    }

    /// The body of ``write(_:for:parameter:expiry:memoryItem:)``, whose errors the caller counts.
    private func writeCounted(
        _ encoded: EncodedValue,
        for type: Kind,
        parameter: String?,
        expiry: CacheExpiry,
        memoryItem: MemoryItemMaker?
    ) throws {
        let address = try address(of: type, parameter)
        let tally = address.tally
        let policy = type.policy
        let now = self.now()
        let expires = expiry.date(writtenAt: now, policy: policy)
        let evicted = try withContext(type, parameter) {
            try encoded.withPieces { pieces, checksum in
                try address.store.write(
                    pieces: pieces,
                    to: address.entry,
                    writeDate: now,
                    expiry: expires,
                    durability: policy.durability,
                    byteLimit: policy.byteLimit.map { Int64($0) },
                    payloadChecksum: checksum,
                    origin: originToken
                ) { committed in
                    guard let memory else { return }
                    let memoryKey = address.memoryKey
                    if let memoryItem, Freshness.unexpired.accepts(writeDate: now, expiry: expires, now: self.now) {
                        let item = memoryItem(now, expires, policy.byteLimit != nil)
                        item.hitCount = tally.local
                        memory.set(item, for: memoryKey, cost: encoded.count)
                        // Another write committed since this one may already have been caught up with.
                        if watch(for: type.location).current != committed { memory.remove(memoryKey) }
                    } else {
                        memory.remove(memoryKey)
                    }
                }
            }
        }
        tally.add(1, .stores)
        tally.add(
            UInt64(EntryHeader.encodedCount(typeName: type.name, parameter: parameter) + encoded.count),
            .bytesWritten
        )
        if !evicted.isEmpty { tally.add(UInt64(evicted.count), .evictionsByByteLimit) }
        publish(type, .entry(parameter: parameter))
        if let memory, !evicted.isEmpty {
            let keys = Set(evicted)
            memory.removeAll { $0.disk.map(keys.contains) ?? false }
        }
    }

    /// A `Sendable` value from the memory tier, or from disk (then kept in memory).
    ///
    /// The memory-hit path avoids generic tuples and MD5 so it stays close to a dictionary
    /// lookup. Always inlined into the public `value` methods: left to the optimizer, whether
    /// it is inlined changes with unrelated edits, and a call costs its spills on every hit
    /// (the `cache-memory` suite guards it).
    @inlinable @inline(__always)
    func cachedValue<T: Archivable & Sendable>(
        _: T.Type,
        for type: Kind,
        parameter: String?,
        freshness: Freshness
    ) throws -> T? {
        if memory != nil {
            let location = type.location
            // The coherence check: two atomic loads while nothing changed since the last catch-up.
            // Before the tier is bound: bound across this call, it was retained on every hit.
            if !watch(for: location).isCurrent { revalidateMemory(location) }
            // A value stored as another type falls through to the disk, whose decoding reports it.
            // The lookup counts a hit (``MemoryItem/hitCount``); one not served is taken back.
            if let item = memory?.item(name: type.name, location: location, parameter: parameter) {
                if let value = item.value(as: T.self) {
                    guard freshness.accepts(writeDate: item.writeDate, expiry: item.expiry, now: now) else {
                        memoryItemNotServed(item, type: type, parameter: parameter, expired: true)
                        return nil
                    }
                    // Only a byte-limited type ever evicts by last access, so only its hits pay for
                    // recording one in the index.
                    if item.touchesIndex { touch(type, parameter) }
                    return value
                }
                memoryItemNotServed(item, type: type, parameter: parameter, expired: false)
            }
        }
        return try cachedValueFromDisk(T.self, for: type, parameter: parameter, freshness: freshness)
    }

    /// The miss path of ``cachedValue(_:for:parameter:freshness:)``, kept out of line so the hit
    /// path does not set up the generic tuples and optionals only the disk read needs.
    @usableFromInline @inline(never)
    func cachedValueFromDisk<T: Archivable & Sendable>(
        _: T.Type,
        for type: Kind,
        parameter: String?,
        freshness: Freshness
    ) throws -> T? {
        try readFromDisk(T.self, for: type, parameter: parameter, freshness: freshness, memoryItem: StoredItem.init)
    }

    /// Records a memory hit as an access in the disk index.
    @usableFromInline @inline(never)
    func touch(_ type: Kind, _ parameter: String?) {
        if let address = try? address(of: type, parameter) { address.store.touch(address.disk) }
    }

    /// Reads, checks and decodes an entry; with `memoryItem`, keeps the decoded value in the
    /// memory tier unless a clear raced the read. With `writeDate`, sets it to the entry's
    /// write date when there is a value.
    ///
    /// The value comes back alone, its date through the pointer: this code is not specialized
    /// for `T`, and a result or local of a type made from `T` (a tuple, an optional tuple)
    /// costs run-time metadata lookups on every read.
    func readFromDisk<T: Archivable>(
        _: T.Type,
        for type: Kind,
        parameter: String?,
        freshness: Freshness,
        memoryItem: ((T, Date, Date?, Bool) -> MemoryItem)?,
        writeDate: UnsafeMutablePointer<Date>? = nil
    ) throws -> T? {
        do {
            var outcome = CacheStatistics.Counter.misses
            var tally: TypeTally?
            let value = try readCounted(
                T.self,
                for: type,
                parameter: parameter,
                freshness: freshness,
                memoryItem: memoryItem,
                writeDate: writeDate,
                tally: &tally,
                outcome: &outcome
            )
            tally?.add(1, outcome)
            return value
        } catch {
            tally(type).count(error)
            throw error
        }
    }

    /// The body of ``readFromDisk(_:for:parameter:freshness:memoryItem:writeDate:)``: hands out
    /// the type's tally, sets `outcome` to the read's counter, and counts the bytes and (for
    /// one read in eight) the times of a disk hit.
    private func readCounted<T: Archivable>(
        _: T.Type,
        for type: Kind,
        parameter: String?,
        freshness: Freshness,
        memoryItem: ((T, Date, Date?, Bool) -> MemoryItem)?,
        writeDate: UnsafeMutablePointer<Date>?,
        tally found: inout TypeTally?,
        outcome: inout CacheStatistics.Counter
    ) throws -> T? {
        let address = try address(of: type, parameter)
        let disk = address.store
        let key = address.disk
        let tally = address.tally
        found = tally
        let start = tally.timesThisRead() ? monotonicNanoseconds() : 0
        // Only a value kept in memory needs them (a read without a memory tier takes no lock).
        let keeps = memory != nil && memoryItem != nil
        let epoch = keeps ? clearEpoch.withLock { $0 } : 0
        let changeBefore = keeps ? watch(for: type.location).current : 0
        // The body fills `result` and returns nothing: a result of a type made from `T` would
        // make every generic layer in between (this manager's, the store's) look up its
        // metadata at run time on every read (the `cache-manager` suite's 1 KB get guards it).
        var result: T?
        try withContext(type, parameter) {
            // Only a byte-limited type evicts by last access, so only its reads record one. The
            // key's lock keeps the memory tier in step with writes; without a tier it guards nothing.
            _ = try disk.read(address.entry, recordingAccess: type.policy.byteLimit != nil, locking: memory != nil) {
                entry in
                let header = entry.header
                guard freshness.accepts(writeDate: header.writeDate, expiry: header.expiry, now: now) else {
                    outcome = .expiredReads
                    return
                }
                let checked = start != 0 ? monotonicNanoseconds() : 0
                let value: T
                // What the value keeps alive, the memory tier's cost: the payload, or the whole
                // file's buffer for a `Data` sharing it (at most twice the payload).
                let payload = entry.payloadBytes
                var cost = payload.count
                do {
                    // The entry header's CRC32C already covered every byte of this payload. A large
                    // root `Data` is not copied out: it shares the buffer the file was read into,
                    // which nothing else reads from now on, when it fills most of it.
                    if T.self == Data.self,
                        let range = Archive.rootDataRange(in: payload, options: verifiedPayloadOptions)
                    {
                        if 2 * payload.count >= entry.fileSize, range.count >= Archive.minimumSharedCount {
                            cost = max(cost, entry.fileSize)
                            value =
                                entry.file.data(
                                    (entry.payloadStart + range.lowerBound)..<(entry.payloadStart + range.upperBound)
                                ) as! T
                        } else {
                            value = Data(bytes: payload.baseAddress! + range.lowerBound, count: range.count) as! T
                        }
                    } else {
                        value = try Archive.decode(T.self, fromBytes: payload, options: verifiedPayloadOptions)
                    }
                } catch {
                    throw CacheError(
                        .decodingFailed,
                        "the entry does not decode as \(T.self)",
                        fileURL: URL(fileURLWithPath: disk.path(of: key)),
                        underlyingError: error
                    )
                }
                if start != 0 {
                    tally.add(1, .timedReads)
                    tally.add(checked &- start, .readNanoseconds)
                    tally.add(monotonicNanoseconds() &- checked, .decodeNanoseconds)
                }
                outcome = .diskHits
                tally.add(UInt64(entry.fileSize), .bytesRead)
                if let memory, let memoryItem,
                    Freshness.unexpired.accepts(writeDate: header.writeDate, expiry: header.expiry, now: now)
                {
                    let memoryKey = address.memoryKey
                    let item = memoryItem(value, header.writeDate, header.expiry, type.policy.byteLimit != nil)
                    item.hitCount = tally.local
                    memory.set(item, for: memoryKey, cost: cost)
                    // A clear, or a write another process committed after this read began, may
                    // already have been caught up with: then the value read may be stale.
                    if clearEpoch.withLock({ $0 }) != epoch || watch(for: type.location).current != changeBefore {
                        memory.remove(memoryKey)
                    }
                }
                result = value
                writeDate?.pointee = header.writeDate
            }
        }
        return result
    }
}

/// An entry read and checked, with the path its errors name: its payload is decoded from the
/// buffer the file was read into, not copied out of it.
struct ReadPayload: Sendable {
    var entry: DiskStore.Entry
    var path: String
}

extension CacheManager {
    /// Reads and checks the entry for `type` and `parameter` and hands it out when
    /// `freshness` accepts it, for a caller that decodes elsewhere (the `async` read of a
    /// non-`Sendable` value decodes on its own task). No memory tier is involved.
    func payloadFromDisk(for type: Kind, parameter: String?, freshness: Freshness) throws -> ReadPayload? {
        try counting(type) {
            let address = try address(of: type, parameter)
            let disk = address.store
            let tally = address.tally
            var result: ReadPayload?
            var outcome = CacheStatistics.Counter.misses
            try withContext(type, parameter) {
                _ = try disk.read(address.entry, recordingAccess: type.policy.byteLimit != nil, locking: false) {
                    entry in
                    guard freshness.accepts(writeDate: entry.header.writeDate, expiry: entry.header.expiry, now: now)
                    else {
                        outcome = .expiredReads
                        return
                    }
                    result = ReadPayload(entry: entry, path: disk.path(of: address.disk))
                    outcome = .diskHits
                    tally.add(UInt64(entry.fileSize), .bytesRead)
                }
            }
            tally.add(1, outcome)
            return result
        }
    }

    /// Decodes a payload read by ``payloadFromDisk(for:parameter:freshness:)``.
    ///
    /// - Throws: ``CacheError`` `decodingFailed` when it does not decode as `T`.
    func decodePayload<T: Archivable>(_: T.Type, _ read: ReadPayload) throws -> T {
        do {
            return try withExtendedLifetime(read.entry) {
                try Archive.decode(T.self, fromBytes: read.entry.payloadBytes, options: verifiedPayloadOptions)
            }
        } catch {
            throw CacheError(
                .decodingFailed,
                "the entry does not decode as \(T.self)",
                fileURL: URL(fileURLWithPath: read.path),
                underlyingError: error
            )
        }
    }
}

extension CacheManager {
    /// The archive options for payloads read from disk: the entry header's CRC32C has just
    /// covered every byte, so the archive's own checksum is not computed a second time.
    var verifiedPayloadOptions: ArchiveOptions {
        var options = configuration.archiveOptions
        options.verifiesChecksum = false
        return options
    }
}

extension CacheManager {
    /// Every hold of the cross-process locks of this manager's roots (caches and documents)
    /// so far, by duration (the `processes` benchmark's figures).
    package var crossProcessLockHolds: LockHoldHistogram {
        var holds = caches.lockHolds
        if documents !== caches { holds.merge(documents.lockHolds) }
        return holds
    }
}

/// A value encoded for an entry's payload: an archive, or a `Data` value and the bytes of its
/// archive around it (``Archive/DataPieces``), written without copying the value.
enum EncodedValue: Sendable {
    /// A whole archive, as ``Archive/encode(_:options:)`` returned it.
    case archive(Data)
    /// A root `Data` value and the rest of its archive: prefix, the value, suffix.
    case data(Data, Archive.DataPieces)

    /// The payload's length in bytes.
    var count: Int {
        switch self {
        case .archive(let archive): archive.count
        case .data(_, let pieces): pieces.count
        }
    }

    /// Calls `body` with the payload's pieces, in order (some may be empty), and its CRC32C.
    func withPieces<R>(_ body: (DiskStore.PayloadPieces, UInt32) throws -> R) rethrows -> R {
        switch self {
        case .archive(let archive):
            return try archive.withUnsafeBytes { raw in
                try body(
                    (raw, UnsafeRawBufferPointer(start: nil, count: 0), UnsafeRawBufferPointer(start: nil, count: 0)),
                    Archive.checksumOfEncoded(archive) ?? CRC32C.checksum(raw)
                )
            }
        case .data(let data, let pieces):
            return try pieces.withPrefix { prefix in
                try data.withUnsafeBytes { value in
                    try Archive.DataPieces.suffix.withUnsafeBytes { suffix in
                        try body((prefix, value, suffix), pieces.checksum)
                    }
                }
            }
        }
    }
}
