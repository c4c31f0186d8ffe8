import Foundation

/// What is known about one stored entry, without decoding it.
///
/// ```swift
/// if let info = try cache.info(for: .hots), info.isExpired() {
///     refreshHots()
/// }
/// ```
public struct CacheEntryInfo: Sendable, Hashable {
    /// The cache type's stable name.
    public var typeName: String
    /// The entry's parameter, if it has one.
    public var parameter: String?
    /// The entry file's size in bytes, header included.
    public var size: Int
    /// The bytes the file system allocated to the file.
    public var allocatedSize: Int
    /// The encoded value's size in bytes.
    public var payloadSize: Int
    /// When the entry was written.
    public var writeDate: Date
    /// When the entry stops being fresh, if ever.
    public var expiry: Date?
    /// The entry's file.
    public var fileURL: URL

    /// Whether the entry is past its expiry at `date`.
    ///
    /// - Complexity: O(1).
    public func isExpired(at date: Date = Date()) -> Bool {
        expiry.map { $0 <= date } ?? false
    }
}

/// Bytes and entries a scope holds on disk, answered from the size index.
///
/// ```swift
/// let usage = cache.usage(of: .userCaches)
/// print(usage.logicalBytes, usage.allocatedBytes, usage.entryCount)
/// ```
public struct CacheUsage: Sendable, Hashable {
    /// The entry files' sizes, headers included (what `totalSize` reports).
    public var logicalBytes: Int
    /// The blocks the file system allocated to them.
    public var allocatedBytes: Int
    /// The number of entries.
    public var entryCount: Int

    /// Creates a usage figure.
    public init(logicalBytes: Int = 0, allocatedBytes: Int = 0, entryCount: Int = 0) {
        self.logicalBytes = logicalBytes
        self.allocatedBytes = allocatedBytes
        self.entryCount = entryCount
    }

    init(_ usage: DiskUsage) {
        self.init(
            logicalBytes: Int(clamping: usage.logicalBytes),
            allocatedBytes: Int(clamping: usage.allocatedBytes),
            entryCount: usage.entryCount
        )
    }

    static func + (a: CacheUsage, b: CacheUsage) -> CacheUsage {
        CacheUsage(
            logicalBytes: a.logicalBytes + b.logicalBytes,
            allocatedBytes: a.allocatedBytes + b.allocatedBytes,
            entryCount: a.entryCount + b.entryCount
        )
    }
}

/// The outcome of a fetch with an offline fallback: the fresh value, or the cached one when
/// the fetch failed.
///
/// ```swift
/// let story = try cache.value(for: .dailyStory) { try api.fetchDailyStory() }
/// if story.isFromCache { showOfflineBanner(story.fetchError) }
/// ```
public struct CacheFetchResult<Value> {
    /// The fetched value, or the cached one.
    public var value: Value
    /// Whether `value` came from the cache because the fetch failed.
    public var isFromCache: Bool { fetchError != nil }
    /// When the value was fetched or written to the cache.
    public var date: Date
    /// Why the fetch failed, when the value came from the cache.
    public var fetchError: (any Error)?
    /// Why a fetched value could not be cached (the value is still returned).
    public var storeError: CacheError?

    init(value: Value, date: Date, fetchError: (any Error)? = nil, storeError: CacheError? = nil) {
        self.value = value
        self.date = date
        self.fetchError = fetchError
        self.storeError = storeError
    }
}

extension CacheFetchResult: Sendable where Value: Sendable {}
