import Foundation

/// `async` and completion-handler forms: the file I/O runs on a background queue, never on
/// the caller's executor or thread. Encoding happens on the caller's side (so non-`Sendable`
/// values never cross threads); decoding happens in the background.
extension CacheManager {
    /// Stores `value` (or removes the entry when `nil`) without blocking the caller.
    ///
    /// ```swift
    /// try await cache.store(products, for: .productList)
    /// ```
    ///
    /// - Throws: ``CacheError`` as ``store(_:for:parameter:expiry:)``.
    /// - Complexity: Encodes on the caller; the write runs on a background queue.
    public func store<T: Archivable & Sendable>(
        _ value: T?,
        for type: Kind,
        parameter: String? = nil,
        expiry: CacheExpiry = .policy
    ) async throws {
        try await offload { try self.store(value, for: type, parameter: parameter, expiry: expiry) }
    }

    /// Stores a value of a non-`Sendable` type without blocking the caller; it is encoded
    /// before the call suspends, so the value itself never leaves the caller.
    ///
    /// ```swift
    /// try await cache.store(letters, for: .message)
    /// ```
    ///
    /// - Throws: ``CacheError`` as ``store(_:for:parameter:expiry:)``.
    /// - Complexity: Encodes on the caller; the write runs on a background queue.
    public func store<T: Archivable>(
        _ value: T?,
        for type: Kind,
        parameter: String? = nil,
        expiry: CacheExpiry = .policy
    ) async throws {
        guard let value else {
            try await removeValue(for: type, parameter: parameter)
            return
        }
        noteMemoryTierSkipped(T.self)
        let encoded = try encode(value, type, parameter)
        try await offload { try self.write(encoded, for: type, parameter: parameter, expiry: expiry, memoryItem: nil) }
    }

    /// The value stored for `type` and `parameter`, read without blocking the caller.
    ///
    /// ```swift
    /// let cached: [Product]? = try await cache.value(for: .productList)
    /// ```
    ///
    /// Whether the value enters the memory tier: docs/Guide.md, *Which read puts a value in memory*.
    ///
    /// - Throws: ``CacheError`` as ``value(_:for:parameter:)``.
    /// - Complexity: O(1) on a memory hit; otherwise file I/O on a background queue.
    public func value<T: Archivable & Sendable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil
    ) async throws -> T? {
        try await offload { try self.value(T.self, for: type, parameter: parameter) }
    }

    /// The value of a non-`Sendable` type stored for `type` and `parameter`, read without
    /// blocking the caller, or `nil` when there is none or it has expired.
    ///
    /// The entry's bytes are read and checked on a background queue; they are decoded here,
    /// after the suspension, so the value returned is the caller's alone (`sending`): a class
    /// graph such as a `User` with its `Letter`s can be read from any task or actor. Such values
    /// never use the memory tier, as with the blocking ``value(_:for:parameter:)``.
    ///
    /// ```swift
    /// let letters: [Letter]? = try await cache.value(for: .message)
    /// ```
    ///
    /// Whether the value enters the memory tier: docs/Guide.md, *Which read puts a value in memory*.
    ///
    /// - Throws: ``CacheError`` as ``value(_:for:parameter:)``.
    /// - Complexity: File I/O on a background queue, O(size of the entry); the decoding runs
    ///   on the calling task.
    public func value<T: Archivable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil
    ) async throws -> sending T? {
        try await valueReadAside(T.self, for: type, parameter: parameter, freshness: .unexpired)
    }

    /// The value stored for `type` if it was written within the last `maxAge` seconds,
    /// whatever its expiry says, read without blocking the caller.
    ///
    /// ```swift
    /// let recent: [Product]? = try await cache.value(for: .productList, maxAge: 300)
    /// ```
    ///
    /// Whether the value enters the memory tier: docs/Guide.md, *Which read puts a value in memory*.
    ///
    /// - Throws: ``CacheError`` as the blocking `value(_:for:parameter:maxAge:)`.
    /// - Complexity: O(1) on a memory hit; otherwise file I/O on a background queue.
    public func value<T: Archivable & Sendable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil,
        maxAge: TimeInterval
    ) async throws -> T? {
        try await offload { try self.value(T.self, for: type, parameter: parameter, maxAge: maxAge) }
    }

    /// The value of a non-`Sendable` type stored for `type` if it was written within the last
    /// `maxAge` seconds, whatever its expiry says, read without blocking the caller; the value
    /// returned is the caller's alone (`sending`), as with the `await` form of
    /// `value(_:for:parameter:)`.
    ///
    /// ```swift
    /// let recent: [Letter]? = try await cache.value(for: .message, maxAge: 300)
    /// ```
    ///
    /// - Throws: ``CacheError`` as the blocking `value(_:for:parameter:maxAge:)`.
    /// - Complexity: File I/O on a background queue, O(size of the entry); the decoding runs
    ///   on the calling task.
    public func value<T: Archivable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil,
        maxAge: TimeInterval
    ) async throws -> sending T? {
        try await valueReadAside(T.self, for: type, parameter: parameter, freshness: .writtenWithin(maxAge))
    }

    /// A non-`Sendable` value read without blocking the caller: the entry's file is read and
    /// checked on a background queue, and decoded here, after the suspension, so the value is
    /// the caller's alone.
    func valueReadAside<T: Archivable>(
        _: T.Type,
        for type: Kind,
        parameter: String?,
        freshness: Freshness
    ) async throws -> sending T? {
        noteMemoryTierSkipped(T.self)
        let read = try await offload { try self.payloadFromDisk(for: type, parameter: parameter, freshness: freshness) }
        guard let read else { return nil }
        return try counting(type) { try withContext(type, parameter) { try decodePayload(T.self, read) } }
    }

    /// Size, dates and file of the entry for `type` and `parameter`, or `nil` if there is
    /// none, read without blocking the caller. Expired entries are reported too.
    ///
    /// ```swift
    /// let age = try await cache.info(for: .hots).map { Date().timeIntervalSince($0.writeDate) }
    /// ```
    ///
    /// - Throws: ``CacheError`` as the blocking `info(for:parameter:)`.
    /// - Complexity: File I/O on a background queue: reads and checks the entry without
    ///   decoding it.
    public func info(for type: Kind, parameter: String? = nil) async throws -> CacheEntryInfo? {
        try await offload { try self.info(for: type, parameter: parameter) }
    }

    /// Removes the entry for `type` and `parameter` without blocking the caller.
    ///
    /// ```swift
    /// try await cache.removeValue(for: .hots)
    /// ```
    ///
    /// - Returns: Whether there was an entry.
    /// - Throws: ``CacheError`` as ``removeValue(for:parameter:)``.
    /// - Complexity: One `unlink` on a background queue.
    @discardableResult
    public func removeValue(for type: Kind, parameter: String? = nil) async throws -> Bool {
        try await offload { try self.removeValue(for: type, parameter: parameter) }
    }

    /// Stores `value` (or removes the entry when `nil`) on a background queue, then calls
    /// `completion` there.
    ///
    /// ```swift
    /// cache.store(products, for: .productList) { result in
    ///     if case .failure(let error) = result { log(error) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value to store; `nil` removes the entry.
    ///   - type: The cache type.
    ///   - parameter: The entry's parameter within the type, if any.
    ///   - expiry: When the entry expires (`.policy`: the type's policy).
    ///   - completion: Called once on a background queue; it may call the cache.
    /// - Complexity: Returns at once; the write runs on a background queue.
    public func store<T: Archivable & Sendable>(
        _ value: T?,
        for type: Kind,
        parameter: String? = nil,
        expiry: CacheExpiry = .policy,
        completion: @escaping @Sendable (Result<Void, CacheError>) -> Void
    ) {
        DispatchQueue.global().async {
            completion(Self.result { try self.store(value, for: type, parameter: parameter, expiry: expiry) })
        }
    }

    /// Reads the value for `type` and `parameter` on a background queue, then calls
    /// `completion` there with it (`nil` on a miss).
    ///
    /// ```swift
    /// cache.value([Product].self, for: .productList) { result in show(try? result.get()) }
    /// ```
    ///
    /// Whether the value enters the memory tier: docs/Guide.md, *Which read puts a value in memory*.
    ///
    /// - Parameters:
    ///   - valueType: The type to decode.
    ///   - type: The cache type.
    ///   - parameter: The entry's parameter within the type, if any.
    ///   - completion: Called once on a background queue; it may call the cache.
    /// - Complexity: Returns at once; the read runs on a background queue.
    public func value<T: Archivable & Sendable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil,
        completion: @escaping @Sendable (Result<T?, CacheError>) -> Void
    ) {
        DispatchQueue.global().async {
            completion(Self.result { try self.value(T.self, for: type, parameter: parameter) })
        }
    }

    /// Reads the value of a non-`Sendable` type for `type` and `parameter` on a background
    /// queue, decodes it there, then calls `completion` there with it (`nil` on a miss). The
    /// value is decoded for this call alone and handed to `completion` only; it never uses the
    /// memory tier.
    ///
    /// ```swift
    /// cache.value(User.self, for: .message) { result in
    ///     let user = try? result.get()
    ///     DispatchQueue.main.async { show(user?.letters.count) }   // a count, not the graph
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - valueType: The type to decode.
    ///   - type: The cache type.
    ///   - parameter: The entry's parameter within the type, if any.
    ///   - completion: Called once on a background queue; it may call the cache.
    /// - Complexity: Returns at once; the read and the decoding run on a background queue.
    public func value<T: Archivable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil,
        completion: @escaping @Sendable (Result<T?, CacheError>) -> Void
    ) {
        noteMemoryTierSkipped(T.self)
        DispatchQueue.global().async {
            completion(
                Self.result {
                    try self.readFromDisk(
                        T.self,
                        for: type,
                        parameter: parameter,
                        freshness: .unexpired,
                        memoryItem: nil
                    )
                }
            )
        }
    }

    /// Removes the entry for `type` and `parameter` on a background queue, then calls
    /// `completion` there with whether there was one.
    ///
    /// ```swift
    /// cache.removeValue(for: .hots) { _ in }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The cache type.
    ///   - parameter: The entry's parameter within the type, if any.
    ///   - completion: Called once on a background queue; it may call the cache.
    /// - Complexity: Returns at once; the removal runs on a background queue.
    public func removeValue(
        for type: Kind,
        parameter: String? = nil,
        completion: @escaping @Sendable (Result<Bool, CacheError>) -> Void
    ) {
        DispatchQueue.global().async {
            completion(Self.result { try self.removeValue(for: type, parameter: parameter) })
        }
    }

    /// Runs `work` on a background queue and resumes with its result.
    func offload<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Self.result(work)) }
        }
    }

    /// `work`'s result, with every error as a ``CacheError``.
    static func result<R>(_ work: () throws -> R) -> Result<R, CacheError> {
        do {
            return .success(try work())
        } catch {
            return .failure(CacheError.from(error, "unexpected error"))
        }
    }
}
