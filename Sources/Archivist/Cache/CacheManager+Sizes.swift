extension CacheManager {
    /// The logical bytes (entry files, headers included) of every entry this manager can see:
    /// the shared caches and this manager's user's caches and documents.
    ///
    /// ```swift
    /// sizeLabel.text = ByteCountFormatter.string(fromByteCount: Int64(cache.totalSize), countStyle: .file)
    /// ```
    ///
    /// - Complexity: O(1), from the size index kept in step with every write; no file I/O —
    ///   unless another process wrote since the last size query: then that query first reads
    ///   the other processes' journal records, O(records), under the shared lock (O(entries)
    ///   once after another process folded the journal into a new snapshot). While the index
    ///   is rebuilt after damage (``indexRebuild``), it waits for the rebuild.
    public var totalSize: Int { totalUsage.logicalBytes }

    /// Logical bytes, allocated bytes and entry count of everything this manager can see.
    ///
    /// ```swift
    /// let onDisk = cache.totalUsage.allocatedBytes
    /// ```
    ///
    /// - Complexity: O(1); no file I/O.
    public var totalUsage: CacheUsage {
        CacheLocation.allCases.reduce(CacheUsage()) { $0 + usage(of: $1) }
    }

    /// The logical bytes of `type`'s entries (this manager's user's, for a user-scoped type).
    ///
    /// ```swift
    /// let messageBytes = cache.size(of: ShopCache.message)
    /// ```
    ///
    /// - Complexity: O(1); no file I/O. `0` for a user-scoped type without a user, and for a
    ///   type with an empty name (which nothing can be stored under).
    public func size(of type: Kind) -> Int { usage(of: type).logicalBytes }

    /// The logical bytes under `location` (this manager's user's, for a user-scoped location).
    ///
    /// ```swift
    /// let documentBytes = cache.size(of: CacheLocation.userDocuments)
    /// ```
    ///
    /// - Complexity: O(1); no file I/O.
    public func size(of location: CacheLocation) -> Int { usage(of: location).logicalBytes }

    /// Logical bytes, allocated bytes and entry count of `type`.
    ///
    /// ```swift
    /// let count = cache.usage(of: ShopCache.apiStrategy).entryCount
    /// ```
    ///
    /// - Complexity: O(1); no file I/O.
    public func usage(of type: Kind) -> CacheUsage {
        guard let folder = try? folder(for: type) else { return CacheUsage() }
        return CacheUsage(disk(for: type.location).usage(of: folder))
    }

    /// Logical bytes, allocated bytes and entry count under `location`.
    ///
    /// ```swift
    /// let usage = cache.usage(of: CacheLocation.sharedCaches)
    /// ```
    ///
    /// - Complexity: O(1); no file I/O.
    public func usage(of location: CacheLocation) -> CacheUsage {
        guard let folder = folder(for: location) else { return CacheUsage() }
        return CacheUsage(disk(for: location).usage(of: folder))
    }
}
