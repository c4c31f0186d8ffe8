import Foundation

/// An app's caches: each ``CacheType`` maps to MD5-named entry files under shared or per-user
/// folders, with a memory tier in front, sizes in O(1) and clearing in O(1).
///
/// Entries live at `<root>/<location>/[md5(user)/]md5(type name)/<md5(parameter) or "value">`:
/// no caller string ever becomes a path component unhashed. Folders are 0700 and files 0600
/// whatever the umask. Each entry file carries a checked header (see `EntryHeader`) with the
/// original type name and parameter; a damaged or misplaced entry throws ``CacheError`` once
/// and is removed, so the next read is a miss. Writes are atomic (temporary file and rename).
///
/// Memory tier: values of `Sendable` types (through the overloads constrained to
/// `Archivable & Sendable`, which Swift picks whenever it can) are kept decoded in an LRU
/// ``MemoryCache`` in front of the disk. Values of non-`Sendable` types (for example classes
/// of an object graph) are never shared that way: each read decodes a fresh graph from disk.
/// So `Sendable` alone decides it, at compile time: a Codable model that forgot `Sendable`
/// works, but never hits memory (debug builds say so once per type on standard error). The
/// memory tier is smaller in an app extension (see ``Configuration``) and gives memory back
/// when the system runs short, or when you call ``trimMemory(to:)``.
///
/// Concurrency: `CacheManager` is `Sendable` and safe from any thread or task. File I/O on one
/// entry never waits for I/O on another; no lock is held while your code (a completion
/// handler, a fetch closure, a value's `encode`) runs, so that code may call the cache again.
/// The blocking methods do file I/O on the caller's thread; the `async` and completion-handler
/// forms do it on a background queue.
///
/// ```swift
/// let cache = try CacheManager<ShopCache>(root: .defaultLocation(for: "Shop"), user: "alice")
/// try cache.store(products, for: .productList)
/// let cached: [Product]? = try cache.value(for: .productList)
/// try cache.store(strategy, for: .apiStrategy, parameter: "/v1/orders")
/// try cache.store(nil as [Product]?, for: .productList)    // nil removes
/// let bytes = cache.totalSize
/// ```
///
/// Several processes may open the same root (an app and its extensions in an app-group
/// container, several workers of a service), and several managers one root in a process:
/// sizes and `contains` are exact in each, and a memory tier never serves a value another
/// process or manager replaced or removed once that write has returned (a hit checks one
/// shared change counter; see docs/Architecture.md).
public final class CacheManager<Kind: CacheType>: Sendable {
    /// Memory-tier limits and archive options.
    ///
    /// The memory tier holds at most 1,000 values by default, standing for at most
    /// ``defaultMemoryCostLimit`` encoded bytes: 32 MiB in an app, 4 MiB in an app extension
    /// and on watchOS. The system gives a widget or a notification-service extension only
    /// about 24–30 MB in all and terminates it past that; a watch app runs in a device's
    /// few hundred megabytes to a gigabyte, shared with everything else on it; and the limit
    /// counts encoded bytes, which decoded values exceed. The smaller default leaves room for
    /// everything else such a process does. Whatever the limits, the memory tier gives memory
    /// back when the system runs short (see ``CacheManager/trimMemory(to:)``).
    ///
    /// ```swift
    /// let configuration = CacheManager<ShopCache>.Configuration(memoryCountLimit: 200)
    /// let small = CacheManager<ShopCache>.Configuration(memoryCostLimit: 2 << 20)   // 2 MiB
    /// ```
    public struct Configuration: Sendable {
        /// The most decoded values the memory tier holds; `0` turns the memory tier off.
        public var memoryCountLimit: Int
        /// The most encoded bytes the memory tier's values may stand for; `0` means no limit.
        public var memoryCostLimit: Int
        /// Options for encoding and decoding values (limits, allowed subclasses, renames).
        public var archiveOptions: ArchiveOptions
        /// How often a manager with ``CacheManager/changes(of:)`` subscribers also looks at its
        /// stores for changes made elsewhere, in addition to their change signals.
        ///
        /// `nil`, the default, polls only where a change signal cannot be established (the
        /// system refused the Darwin notification or the `inotify` watch): every second then,
        /// give or take half a second. Where the signal is established nothing wakes the
        /// process but a change — no timer in a widget or on the watch. Give an interval to
        /// poll as well, for changes whose signal does not arrive: a write from another
        /// machine to a network volume.
        ///
        /// ```swift
        /// var configuration = CacheManager<ShopCache>.Configuration()
        /// configuration.changePollingInterval = .seconds(30)   // a shared network volume
        /// ```
        public var changePollingInterval: Duration?

        /// The memory tier's byte limit unless you choose one: 4 MiB (`4 << 20`) in an app
        /// extension — a process whose main bundle is an `.appex`, such as a widget, a share
        /// or a notification-service extension — and on watchOS, and 32 MiB (`32 << 20`)
        /// everywhere else, Linux included.
        ///
        /// ```swift
        /// print(CacheManager<ShopCache>.Configuration.defaultMemoryCostLimit >> 20, "MiB")
        /// ```
        ///
        /// - Complexity: O(1); the main bundle is looked at once per process.
        public static var defaultMemoryCostLimit: Int {
            memoryCostLimit(inAppExtension: AppExtension.isCurrentProcess, onWatch: isWatchOS)
        }

        /// The default byte limit in an app extension or on watchOS, or elsewhere.
        static func memoryCostLimit(inAppExtension: Bool, onWatch: Bool) -> Int {
            inAppExtension || onWatch ? 4 << 20 : 32 << 20
        }

        /// Whether this build runs on watchOS.
        static var isWatchOS: Bool {
            #if os(watchOS)
            return true
            #else
            return false
            #endif
        }

        /// Creates a configuration: 1,000 values and ``defaultMemoryCostLimit`` bytes (32 MiB,
        /// or 4 MiB in an app extension and on watchOS) in memory by default, and change
        /// streams that poll only where no change signal can be established.
        ///
        /// ```swift
        /// let configuration = CacheManager<ShopCache>.Configuration(memoryCountLimit: 0)   // no memory tier
        /// ```
        ///
        /// - Complexity: O(1).
        public init(
            memoryCountLimit: Int = 1_000,
            memoryCostLimit: Int = Configuration.defaultMemoryCostLimit,
            archiveOptions: ArchiveOptions = ArchiveOptions(),
            changePollingInterval: Duration? = nil
        ) {
            self.memoryCountLimit = memoryCountLimit
            self.memoryCostLimit = memoryCostLimit
            self.archiveOptions = archiveOptions
            self.changePollingInterval = changePollingInterval
        }
    }

    /// The folders the manager works in.
    public let root: CacheRoot
    /// The signed-in user whose scopes this manager reads and writes, if any.
    public let user: String?
    /// The manager's configuration.
    public let configuration: Configuration

    let caches: DiskStore
    let documents: DiskStore
    /// `md5(user)`, the user's folder name.
    let userFolder: String?
    /// The memory tier, `nil` when the configuration keeps no values in memory.
    @usableFromInline let memory: MemoryTier?
    /// Bumped by every clear, so a read racing a clear does not leave a cleared value in memory.
    let clearEpoch = Locked<UInt64>(0)
    /// Each type's folder, hashed once, with the name it was hashed from.
    let folders = Locked<[Kind: (name: String, folder: FolderPath)]>([:])
    /// The folder ``folders`` gave last, checked before it (see ``LastTypeFolder``).
    let lastFolder = Locked<LastTypeFolder?>(nil)
    /// The memory tier's view of each store's shared change counter.
    @usableFromInline let cachesWatch: MemoryWatch
    @usableFromInline let documentsWatch: MemoryWatch
    /// The subscribers of ``changes(of:)``.
    let changeHub = ChangeHub<Kind>()
    /// Empties or trims ``memory`` on memory warnings; `nil` without a memory tier.
    let memoryPressure: MemoryPressureWatch?
    /// What the manager counts per type (``statistics``).
    let statisticsBook: StatisticsBook
    /// The time that write dates record and that expiries and ages are compared with: the
    /// system clock, or a test's own.
    @usableFromInline let now: @Sendable () -> Date

    /// Opens (creating on first use) the caches under `root` for `user`.
    ///
    /// With `user == nil` only ``CacheLocation/sharedCaches`` types can be used; the others
    /// throw ``CacheError/Code/noUser``. Different users' scopes are separate folders: one
    /// user's manager can neither read, size nor clear another user's entries.
    ///
    /// ```swift
    /// let cache = try CacheManager<ShopCache>(root: .defaultLocation(for: "Shop"), user: session.userID)
    /// ```
    ///
    /// A root that exists but refuses writes (a read-only mount, a prepopulated cache shipped
    /// read-only, a folder this process may only read) opens for reading: values, `info`,
    /// `contains` and sizes work, and every store, removal and clear throws
    /// `readOnlyFileSystem` (`permissionDenied` when the refusal was `EACCES`).
    ///
    /// - Throws: ``CacheError`` (`permissionDenied`, `readOnlyFileSystem`, `fileSystem`) when
    ///   the root folders cannot be created (a missing root on a read-only disk) or read.
    /// - Complexity: Blocking file I/O: loads each root's size index on first open in the
    ///   process, or rebuilds it by one scan after a crash; sweeps stale temporaries and
    ///   starts deleting leftover trash in the background.
    public convenience init(root: CacheRoot, user: String? = nil, configuration: Configuration = Configuration()) throws
    {
        try self.init(root: root, user: user, configuration: configuration, fileSystem: .posix)
    }

    /// Opens the caches over `fileSystem`, which applies to a root only when it is first opened
    /// in the process (tests put a fault-injecting file system underneath this way), watching
    /// for UIKit's memory warning on `notificationCenter` (tests pass one of their own), telling
    /// the time by `clock` (tests move it to make entries expire or age).
    package init(
        root: CacheRoot,
        user: String?,
        configuration: Configuration,
        fileSystem: FileSystem,
        notificationCenter: NotificationCenter = .default,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.root = root
        self.user = user
        self.configuration = configuration
        self.now = clock
        // A large root's rescan that the open finds due runs in the background (``indexRebuild``):
        // reads are served meanwhile, and what needs the size index waits for it.
        let large = PersistentIndex.backgroundRescanEntries
        self.caches = try CacheError.mapping {
            try DiskStore.open(at: root.caches, fileSystem: fileSystem, backgroundRescanAbove: large)
        }
        self.documents = try CacheError.mapping {
            try DiskStore.open(at: root.documents, fileSystem: fileSystem, backgroundRescanAbove: large)
        }
        self.cachesWatch = MemoryWatch(store: caches)
        self.documentsWatch = MemoryWatch(store: documents)
        self.userFolder = user.map { MD5.hexDigest(of: $0) }
        let memory =
            configuration.memoryCountLimit > 0
            ? MemoryTier(countLimit: configuration.memoryCountLimit, costLimit: configuration.memoryCostLimit)
            : nil
        self.memory = memory
        self.memoryPressure = memory.map { MemoryPressureWatch(tier: $0, center: notificationCenter) }
        self.statisticsBook = StatisticsBook(caches: caches, documents: documents, memory: memory)
    }

    deinit {
        for continuation in changeHub.closeAll() { continuation.finish() }
    }

    // MARK: Storing

    /// Stores `value` for `type` (and `parameter`), replacing any previous entry; `nil`
    /// removes the entry. The value is also kept in the memory tier.
    ///
    /// ```swift
    /// try cache.store(products, for: .productList)
    /// try cache.store(strategy, for: .apiStrategy, parameter: "/v1/orders", expiry: .after(600))
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value, or `nil` to remove the entry.
    ///   - type: The cache type.
    ///   - parameter: Tells apart entries of one type (a URL path, an id); hashed, never a path.
    ///     At most 16 MiB of UTF-8 (the type's name: 64 KiB); longer throws `keyTooLong`.
    ///   - expiry: When the entry stops being fresh; by default the type's policy decides.
    /// - Throws: ``CacheError``: `encodingFailed`, `noUser`, `keyTooLong`, `permissionDenied`,
    ///   `readOnlyFileSystem`, `diskFull`, `fileSystem`. On failure the previous entry stays,
    ///   unless only the folder sync of a `.fileAndFolder` type failed after the rename: then
    ///   the new value is in place, and the error's message says so.
    /// - Complexity: Blocking file I/O: O(size of the value) to encode and write, plus one
    ///   eviction pass when the type's byte limit is exceeded.
    @inlinable
    public func store<T: Archivable & Sendable>(
        _ value: T?,
        for type: Kind,
        parameter: String? = nil,
        expiry: CacheExpiry = .policy
    ) throws {
        // Inlined, so the caller's specialization unwraps the optional: in this module, not
        // specialized for `T`, the unwrap looks up `Optional<T>`'s metadata and copies the
        // value through it on every store (the `cache-manager` suite's 1 KB set guards it).
        guard let value else {
            try removeValue(for: type, parameter: parameter)
            return
        }
        try storeValue(value, for: type, parameter: parameter, expiry: expiry)
    }

    /// ``store(_:for:parameter:expiry:)`` for a value that is there, `Sendable`.
    @usableFromInline
    func storeValue<T: Archivable & Sendable>(
        _ value: T,
        for type: Kind,
        parameter: String?,
        expiry: CacheExpiry
    ) throws {
        try write(
            encode(value, type, parameter),
            for: type,
            parameter: parameter,
            expiry: expiry,
            memoryItem: { StoredItem(value, writeDate: $0, expiry: $1, touchesIndex: $2) }
        )
    }

    /// Stores a value of a non-`Sendable` type; it is written to disk only, and any copy the
    /// memory tier held for the entry is dropped. `nil` removes the entry.
    ///
    /// Swift picks this overload when the value's static type is not `Sendable`, so such
    /// values never use the memory tier; if that is a surprise, make the type `Sendable`.
    /// Debug builds say so on standard error, once per type.
    ///
    /// ```swift
    /// try cache.store(letterGraph, for: .message)   // final class Letter: Archivable
    /// ```
    ///
    /// - Throws: ``CacheError``: `encodingFailed`, `noUser`, `keyTooLong`, `permissionDenied`,
    ///   `readOnlyFileSystem`, `diskFull`, `fileSystem`. On failure the previous entry stays,
    ///   unless only the folder sync of a `.fileAndFolder` type failed after the rename: then
    ///   the new value is in place, and the error's message says so.
    /// - Complexity: Blocking file I/O: O(size of the value).
    @inlinable
    public func store<T: Archivable>(
        _ value: T?,
        for type: Kind,
        parameter: String? = nil,
        expiry: CacheExpiry = .policy
    ) throws {
        guard let value else {  // unwrapped by the caller's specialization, as above
            try removeValue(for: type, parameter: parameter)
            return
        }
        try storeDiskOnly(value, for: type, parameter: parameter, expiry: expiry)
    }

    /// ``store(_:for:parameter:expiry:)`` for a value that is there, not `Sendable`.
    @usableFromInline
    func storeDiskOnly<T: Archivable>(_ value: T, for type: Kind, parameter: String?, expiry: CacheExpiry) throws {
        noteMemoryTierSkipped(T.self)
        try write(encode(value, type, parameter), for: type, parameter: parameter, expiry: expiry, memoryItem: nil)
    }

    // MARK: Reading

    /// The value stored for `type` and `parameter`, or `nil` when there is none or it has
    /// expired. Served from the memory tier when it holds the value.
    ///
    /// ```swift
    /// let cached: [Product]? = try cache.value(for: .productList)
    /// ```
    ///
    /// Whether the value enters the memory tier: docs/Guide.md, *Which read puts a value in memory*.
    ///
    /// - Throws: ``CacheError``: `corruptEntry` or `entryMismatch` (the entry has been removed;
    ///   the next read is a miss), `decodingFailed` (the entry holds another type; it is
    ///   kept), `noUser`, `permissionDenied`, `fileSystem`.
    /// - Complexity: O(1) on a memory hit; otherwise blocking file I/O, O(size of the entry).
    @inlinable
    public func value<T: Archivable & Sendable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil
    ) throws -> T? {
        try cachedValue(T.self, for: type, parameter: parameter, freshness: .unexpired)
    }

    /// The value of a non-`Sendable` type stored for `type` and `parameter`, decoded afresh
    /// from disk, or `nil` when there is none or it has expired.
    ///
    /// Swift picks this overload when `T` is not `Sendable`: such values never use the memory
    /// tier (debug builds say so on standard error, once per type).
    ///
    /// ```swift
    /// let letters: [Letter]? = try cache.value(for: .message)
    /// ```
    ///
    /// Whether the value enters the memory tier: docs/Guide.md, *Which read puts a value in memory*.
    ///
    /// - Throws: ``CacheError`` as `value(_:for:parameter:)`.
    /// - Complexity: Blocking file I/O, O(size of the entry).
    public func value<T: Archivable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil
    ) throws -> T? {
        noteMemoryTierSkipped(T.self)
        return try readFromDisk(T.self, for: type, parameter: parameter, freshness: .unexpired, memoryItem: nil)
    }

    /// The value stored for `type` if it was written within the last `maxAge` seconds,
    /// whatever its expiry says.
    ///
    /// ```swift
    /// let recent: [Product]? = try cache.value(for: .productList, maxAge: 300)
    /// ```
    ///
    /// Whether the value enters the memory tier: docs/Guide.md, *Which read puts a value in memory*.
    ///
    /// - Throws: ``CacheError`` as `value(_:for:parameter:)`.
    /// - Complexity: O(1) on a memory hit; otherwise blocking file I/O.
    public func value<T: Archivable & Sendable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil,
        maxAge: TimeInterval
    ) throws -> T? {
        try cachedValue(T.self, for: type, parameter: parameter, freshness: .writtenWithin(maxAge))
    }

    /// The value of a non-`Sendable` type stored for `type` if it was written within the last
    /// `maxAge` seconds, whatever its expiry says, decoded afresh from disk.
    ///
    /// Swift picks this overload when `T` is not `Sendable`: such values never use the memory
    /// tier (debug builds say so on standard error, once per type).
    ///
    /// ```swift
    /// let recent: [Letter]? = try cache.value(for: .message, maxAge: 300)
    /// ```
    ///
    /// - Throws: ``CacheError`` as `value(_:for:parameter:)`.
    /// - Complexity: Blocking file I/O, O(size of the entry).
    public func value<T: Archivable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil,
        maxAge: TimeInterval
    ) throws -> T? {
        noteMemoryTierSkipped(T.self)
        return try readFromDisk(
            T.self,
            for: type,
            parameter: parameter,
            freshness: .writtenWithin(maxAge),
            memoryItem: nil
        )
    }

    /// Whether an entry (fresh or expired) is stored for `type` and `parameter`.
    ///
    /// ```swift
    /// if !cache.contains(.productList) { refresh() }
    /// ```
    ///
    /// - Complexity: O(1), from the size index; no file I/O unless another process wrote
    ///   since (see ``totalSize``). `false` for a user-scoped type when the manager has no user,
    ///   and for a type with an empty name.
    public func contains(_ type: Kind, parameter: String? = nil) -> Bool {
        guard let address = try? address(of: type, parameter) else { return false }
        return address.store.contains(address.disk)
    }

    /// Size, dates and file of the entry for `type` and `parameter`, or `nil` if there is
    /// none. Expired entries are reported too, with their expiry.
    ///
    /// ```swift
    /// let age = try cache.info(for: .hots).map { Date().timeIntervalSince($0.writeDate) }
    /// ```
    ///
    /// - Throws: ``CacheError``: `corruptEntry`, `entryMismatch` (removed), `noUser`,
    ///   `permissionDenied`, `fileSystem`.
    /// - Complexity: Blocking file I/O: reads and checks the entry without decoding it.
    public func info(for type: Kind, parameter: String? = nil) throws -> CacheEntryInfo? {
        try counting(type) { try entryInfo(for: type, parameter: parameter) }
    }

    /// The body of ``info(for:parameter:)``, which counts its errors.
    private func entryInfo(for type: Kind, parameter: String?) throws -> CacheEntryInfo? {
        let address = try address(of: type, parameter)
        let disk = address.store
        let key = address.disk
        return try withContext(type, parameter) {
            try disk.read(address.entry) { entry in
                CacheEntryInfo(
                    typeName: type.name,
                    parameter: parameter,
                    size: entry.fileSize,
                    allocatedSize: Int(clamping: disk.sizes(of: key)?.allocated ?? 0),
                    payloadSize: entry.payloadBytes.count,
                    writeDate: entry.header.writeDate,
                    expiry: entry.header.expiry,
                    fileURL: URL(fileURLWithPath: disk.path(of: key))
                )
            }
        }
    }

    // MARK: Removing

    /// Removes the entry for `type` and `parameter`, on disk and in memory.
    ///
    /// ```swift
    /// try cache.removeValue(for: .apiStrategy, parameter: "/v1/orders")
    /// ```
    ///
    /// - Returns: Whether there was an entry on disk.
    /// - Throws: ``CacheError``: `noUser`, `permissionDenied`, `readOnlyFileSystem`, `fileSystem`.
    /// - Complexity: Blocking file I/O: one `unlink`.
    @discardableResult
    public func removeValue(for type: Kind, parameter: String? = nil) throws -> Bool {
        try counting(type) {
            let address = try address(of: type, parameter)
            return try withContext(type, parameter) {
                let removed = try address.store.remove(address.disk, origin: originToken) {
                    memory?.remove(address.memoryKey)
                }
                if removed {
                    address.tally.add(1, .removals)
                    publish(type, .entry(parameter: parameter))
                }
                return removed
            }
        }
    }
}
