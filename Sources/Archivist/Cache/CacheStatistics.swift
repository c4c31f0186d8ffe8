/// What the caches of a root have done, per cache type and in total, counted by every process
/// that opens the root: hits and misses, stores and removals, evictions by reason, bytes,
/// errors by code and the time reads take.
///
/// A snapshot: a `Sendable` value that does not change once read. Take one with
/// ``CacheManager/statistics``, compare two to see what happened in between.
///
/// ```swift
/// let stats = cache.statistics
/// for (name, counts) in stats.types.sorted(by: { $0.key < $1.key }) {
///     print(name, counts.hitRate.map { "\(Int($0 * 100)) %" } ?? "no reads", counts.bytesWritten)
/// }
/// print("all types:", stats.total.memoryHits, "memory hits")
/// ```
public struct CacheStatistics: Sendable, Hashable {
    /// The counts of each type, by the type's ``CacheType/name``.
    ///
    /// A name longer than 96 bytes of UTF-8 is known to the shared file by its first 96
    /// bytes: a manager names its own types in full, other types appear with their first 96
    /// bytes and "…".
    public var types: [String: Counts]

    /// Every type's counts added up.
    ///
    /// ```swift
    /// let rate = cache.statistics.total.hitRate
    /// ```
    ///
    /// - Complexity: O(types).
    public var total: Counts { types.values.reduce(Counts(), +) }

    /// The counts of the type named `typeName`; zero for a type nothing was counted for.
    ///
    /// ```swift
    /// let hots = cache.statistics["hots"]
    /// ```
    ///
    /// - Complexity: O(1) expected.
    public subscript(typeName: String) -> Counts { types[typeName] ?? Counts() }

    /// A snapshot of `types`.
    ///
    /// ```swift
    /// let none = CacheStatistics(types: [:])
    /// ```
    public init(types: [String: Counts]) {
        self.types = types
    }

    /// Values dropped because of a limit, by the limit.
    ///
    /// ```swift
    /// let evicted = cache.statistics["apiStrategy"].evictions.byteLimit
    /// ```
    public struct Evictions: Sendable, Hashable {
        /// Entries removed from disk to keep the type within its ``CachePolicy/byteLimit``.
        public var byteLimit: UInt64 = 0
        /// Values the memory tier dropped to stay within its count or cost limit
        /// (``CacheManager/Configuration/memoryCountLimit``, `memoryCostLimit`); the entry stays
        /// on disk.
        public var count: UInt64 = 0
        /// Values the memory tier dropped because a read found them expired; the entry stays
        /// on disk for the offline fallback.
        public var expiry: UInt64 = 0

        /// All evictions.
        public var total: UInt64 { byteLimit &+ count &+ expiry }

        /// No evictions.
        public init() {}
    }

    /// One type's counters (or the sum of several).
    ///
    /// Every read of a value (`CacheManager/value(_:for:parameter:)` and its forms, the
    /// offline fallback's read) ends as exactly one of a memory hit, a disk hit, a miss or an
    /// expired read, or throws and counts an error.
    ///
    /// ```swift
    /// let counts = cache.statistics(of: .productList)
    /// if let rate = counts.hitRate, rate < 0.5 { log("productList hits only \(rate)") }
    /// ```
    public struct Counts: Sendable, Hashable {
        /// Reads served from the memory tier.
        public var memoryHits: UInt64 = 0
        /// Reads served by decoding the entry file.
        public var diskHits: UInt64 = 0
        /// Reads that found no entry.
        public var misses: UInt64 = 0
        /// Reads that found an entry too old for the read (past its expiry, or older than a
        /// `maxAge`); they return `nil` like a miss.
        public var expiredReads: UInt64 = 0
        /// Values written.
        public var stores: UInt64 = 0
        /// Entries removed by `CacheManager/removeValue(for:parameter:)` (or by storing
        /// `nil`) that were on disk.
        public var removals: UInt64 = 0
        /// Values dropped because of a limit.
        public var evictions = Evictions()
        /// Bytes of entry files read by disk hits (headers included).
        public var bytesRead: UInt64 = 0
        /// Bytes of entry files written (headers included).
        public var bytesWritten: UInt64 = 0
        /// Thrown ``CacheError``s, by code.
        public var errors: [CacheError.Code: UInt64] = [:]
        /// Disk hits whose time was measured: one read in eight of each type in each manager
        /// (the clock costs more than counting), the first one included.
        public var timedReads: UInt64 = 0
        /// The time the timed reads took to read and check their entry files.
        public var readTime: Duration = .zero
        /// The time the timed reads took to decode their values.
        public var decodeTime: Duration = .zero

        /// All zero.
        public init() {}

        /// Reads served, from memory or disk.
        public var hits: UInt64 { memoryHits &+ diskHits }
        /// Every counted read: hits, misses and expired reads.
        public var reads: UInt64 { hits &+ misses &+ expiredReads }
        /// Every thrown error.
        public var errorCount: UInt64 { errors.values.reduce(0, &+) }
        /// The share of reads that were hits, or `nil` before any read.
        public var hitRate: Double? { reads == 0 ? nil : Double(hits) / Double(reads) }
        /// The mean time a timed read took to read and check its file, or `nil` before one.
        public var averageReadTime: Duration? { timedReads == 0 ? nil : readTime / Int(clamping: timedReads) }
        /// The mean time a timed read took to decode its value, or `nil` before one.
        public var averageDecodeTime: Duration? { timedReads == 0 ? nil : decodeTime / Int(clamping: timedReads) }

        /// The sum of two types' counts.
        ///
        /// ```swift
        /// let lists = stats["productList"] + stats["userOrderList"]
        /// ```
        ///
        /// - Complexity: O(error codes).
        public static func + (a: Counts, b: Counts) -> Counts {
            var sum = Counts()
            for counter in Counter.allCases where counter.errorCode == nil {
                sum[counter] = a[counter] &+ b[counter]
            }
            sum.errors = a.errors.merging(b.errors, uniquingKeysWith: &+)
            return sum
        }
    }
}

extension CacheStatistics {
    /// The meaning of each counter of a type's row in the shared file (`SharedStatistics`):
    /// the raw value is the counter's index there, part of the file's format — append only.
    package enum Counter: Int, CaseIterable, Sendable {
        case memoryHits, diskHits, misses, expiredReads, stores, removals
        case evictionsByByteLimit, evictionsByCount, evictionsByExpiry
        case bytesRead, bytesWritten, timedReads, readNanoseconds, decodeNanoseconds
        case corruptEntry = 16
        case entryMismatch, encodingFailed, decodingFailed, noUser, keyTooLong
        case invalidTypeName, permissionDenied, readOnlyFileSystem, diskFull, fileSystem

        /// The counter of errors of `code`.
        package init(errorCode code: CacheError.Code) {
            switch code {
            case .corruptEntry: self = .corruptEntry
            case .entryMismatch: self = .entryMismatch
            case .encodingFailed: self = .encodingFailed
            case .decodingFailed: self = .decodingFailed
            case .noUser: self = .noUser
            case .keyTooLong: self = .keyTooLong
            case .invalidTypeName: self = .invalidTypeName
            case .permissionDenied: self = .permissionDenied
            case .readOnlyFileSystem: self = .readOnlyFileSystem
            case .diskFull: self = .diskFull
            case .fileSystem: self = .fileSystem
            }
        }

        /// The error code this counter counts, if it counts errors.
        package var errorCode: CacheError.Code? {
            switch self {
            case .corruptEntry: .corruptEntry
            case .entryMismatch: .entryMismatch
            case .encodingFailed: .encodingFailed
            case .decodingFailed: .decodingFailed
            case .noUser: .noUser
            case .keyTooLong: .keyTooLong
            case .invalidTypeName: .invalidTypeName
            case .permissionDenied: .permissionDenied
            case .readOnlyFileSystem: .readOnlyFileSystem
            case .diskFull: .diskFull
            case .fileSystem: .fileSystem
            default: nil
            }
        }
    }
}

extension CacheStatistics.Counts {
    /// The counts a row's counters hold (indexed by ``CacheStatistics/Counter``); missing
    /// counters read 0.
    package init(counters: [UInt64]) {
        self.init()
        for counter in CacheStatistics.Counter.allCases where counter.rawValue < counters.count {
            self[counter] = counters[counter.rawValue]
        }
    }

    /// One counter by its meaning.
    package subscript(counter: CacheStatistics.Counter) -> UInt64 {
        get {
            switch counter {
            case .memoryHits: memoryHits
            case .diskHits: diskHits
            case .misses: misses
            case .expiredReads: expiredReads
            case .stores: stores
            case .removals: removals
            case .evictionsByByteLimit: evictions.byteLimit
            case .evictionsByCount: evictions.count
            case .evictionsByExpiry: evictions.expiry
            case .bytesRead: bytesRead
            case .bytesWritten: bytesWritten
            case .timedReads: timedReads
            case .readNanoseconds: UInt64(clamping: readTime.nanosecondsRoundedDown)
            case .decodeNanoseconds: UInt64(clamping: decodeTime.nanosecondsRoundedDown)
            default: counter.errorCode.map { errors[$0] ?? 0 } ?? 0
            }
        }
        set {
            switch counter {
            case .memoryHits: memoryHits = newValue
            case .diskHits: diskHits = newValue
            case .misses: misses = newValue
            case .expiredReads: expiredReads = newValue
            case .stores: stores = newValue
            case .removals: removals = newValue
            case .evictionsByByteLimit: evictions.byteLimit = newValue
            case .evictionsByCount: evictions.count = newValue
            case .evictionsByExpiry: evictions.expiry = newValue
            case .bytesRead: bytesRead = newValue
            case .bytesWritten: bytesWritten = newValue
            case .timedReads: timedReads = newValue
            case .readNanoseconds: readTime = .nanoseconds(Int64(clamping: newValue))
            case .decodeNanoseconds: decodeTime = .nanoseconds(Int64(clamping: newValue))
            default:
                if let code = counter.errorCode { errors[code] = newValue == 0 ? nil : newValue }
            }
        }
    }
}

extension Duration {
    /// Whole nanoseconds, rounded down (negative durations give 0 where they are clamped).
    var nanosecondsRoundedDown: Int64 {
        let (seconds, attoseconds) = components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow
            ? (seconds < 0 ? .min : .max)
            : seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}

extension CacheStatistics {
    /// The statistics of every type recorded under the root folder at `path`, read from its
    /// shared file without opening a store (nothing is created or locked); `nil` when the
    /// root has none. Memory hits a live process has not added yet are not in them (see
    /// ``CacheManager/statistics``).
    ///
    /// - Throws: ``CacheError`` when the file exists but cannot be read.
    /// - Complexity: Blocking file I/O: one `open`, `fstat` and `mmap`; O(types).
    package static func read(
        rootPath: String
    ) throws -> (statistics: CacheStatistics, rows: [SharedStatistics.RowContents])? {
        guard let rows = try CacheError.mapping({ try SharedStatistics.rows(ofRootAt: rootPath) }) else { return nil }
        return (CacheStatistics(rows: rows, fullNames: [:]), rows)
    }

    /// The statistics of `rows`, added up by name; an incomplete name is completed from
    /// `fullNames` (by the first 8 bytes of its MD5), else marked with "…".
    init(rows: [SharedStatistics.RowContents], fullNames: [UInt64: String]) {
        var types: [String: Counts] = [:]
        for row in rows {
            let name = row.isNameComplete ? row.name : fullNames[row.nameHash] ?? row.name + "…"
            types[name] = (types[name] ?? Counts()) + Counts(counters: row.counters)
        }
        self.init(types: types)
    }
}
