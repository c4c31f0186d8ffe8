import Foundation

/// Fetch fresh, fall back to the cache: the offline pattern of a daily story or a letters
/// list. The fetched value is stored; when the fetch throws, the last stored value is returned
/// even if it has expired, and only when there is none does the fetch's error propagate.
extension CacheManager {
    /// Calls `fetch`; stores and returns its value, or returns the cached value (expired or
    /// not) when `fetch` throws.
    ///
    /// Works for any `Archivable` value, `Sendable` or not: the fallback is decoded from disk.
    ///
    /// ```swift
    /// let story = try cache.value(for: .dailyStory) { try api.dailyStory() }
    /// if story.isFromCache { showOfflineBanner() }
    /// ```
    ///
    /// Whether the value enters the memory tier: docs/Guide.md, *Which read puts a value in memory*.
    ///
    /// - Returns: The fetched value, or the cached one with ``CacheFetchResult/fetchError`` set.
    ///   If storing the fetched value fails, it is still returned, with
    ///   ``CacheFetchResult/storeError`` set.
    /// - Throws: `fetch`'s error when there is no cached value; a ``CacheError`` when the
    ///   cached value cannot be read (`corruptEntry`, `decodingFailed`, …).
    /// - Complexity: `fetch`, then blocking file I/O to store or read the entry.
    public func value<T: Archivable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil,
        fetchingWith fetch: () throws -> T
    ) throws -> CacheFetchResult<T> {
        try fetchOrFallBack(T.self, for: type, parameter: parameter, fetch: fetch) {
            try self.store($0, for: type, parameter: parameter)
        }
    }

    /// As the blocking fetch form for any `Archivable` value, for a `Sendable` one: the
    /// fetched value is stored through the `Sendable` overload, so it is kept in the memory tier too.
    ///
    /// ```swift
    /// let products = try cache.value(for: .productList) { try api.products() }
    /// ```
    ///
    /// Whether the value enters the memory tier: docs/Guide.md, *Which read puts a value in memory*.
    ///
    /// - Returns: As the non-`Sendable` form.
    /// - Throws: As the non-`Sendable` form.
    /// - Complexity: `fetch`, then blocking file I/O to store or read the entry.
    public func value<T: Archivable & Sendable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil,
        fetchingWith fetch: () throws -> T
    ) throws -> CacheFetchResult<T> {
        try fetchOrFallBack(T.self, for: type, parameter: parameter, fetch: fetch) {
            try self.store($0, for: type, parameter: parameter)
        }
    }

    /// Calls `fetch`; stores its value with `store` and returns it, or falls back to the cache.
    private func fetchOrFallBack<T: Archivable>(
        _: T.Type,
        for type: Kind,
        parameter: String?,
        fetch: () throws -> T,
        store: (T) throws -> Void
    ) throws -> CacheFetchResult<T> {
        let fetched: T
        do {
            fetched = try fetch()
        } catch {
            return try fallback(T.self, for: type, parameter: parameter, fetchError: error)
        }
        let now = Date()
        do {
            try store(fetched)
            return CacheFetchResult(value: fetched, date: now)
        } catch {
            return CacheFetchResult(value: fetched, date: now, storeError: error as? CacheError)
        }
    }

    /// Awaits `fetch`; stores and returns its value, or returns the cached value (expired or
    /// not) when `fetch` throws. File I/O runs on a background queue.
    ///
    /// ```swift
    /// let letters = try await cache.value(for: .message) { try await api.letters() }
    /// ```
    ///
    /// Whether the value enters the memory tier: docs/Guide.md, *Which read puts a value in memory*.
    ///
    /// - Returns: As the blocking `value(_:for:parameter:fetchingWith:)` does: the fetched
    ///   value, or the cached one with ``CacheFetchResult/fetchError`` set.
    /// - Throws: `fetch`'s error when there is no cached value; a ``CacheError`` when the
    ///   cached value cannot be read.
    /// - Complexity: `fetch`, then file I/O on a background queue.
    public func value<T: Archivable & Sendable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil,
        fetchingWith fetch: @Sendable () async throws -> T
    ) async throws -> CacheFetchResult<T> {
        let fetched: T
        do {
            fetched = try await fetch()
        } catch {
            return try await offload { try self.fallback(T.self, for: type, parameter: parameter, fetchError: error) }
        }
        let now = Date()
        do {
            try await store(fetched, for: type, parameter: parameter)
            return CacheFetchResult(value: fetched, date: now)
        } catch {
            return CacheFetchResult(value: fetched, date: now, storeError: error as? CacheError)
        }
    }

    /// Awaits `fetch`; stores and returns its value, or returns the cached value (expired or
    /// not) when `fetch` throws, for a model that is not `Sendable`. It runs in the caller's
    /// isolation (`isolation`, the caller's actor by default), so `fetch` and the value stay
    /// there: the value is encoded there, the file I/O runs on a background queue, and a
    /// fallback is read there and decoded there. Such values never use the memory tier.
    ///
    /// ```swift
    /// let letters = try await cache.value(for: .message) { try await api.letters() }   // [Letter]
    /// ```
    ///
    /// - Returns: As the blocking `value(_:for:parameter:fetchingWith:)` does: the fetched
    ///   value, or the cached one with ``CacheFetchResult/fetchError`` set.
    /// - Throws: `fetch`'s error when there is no cached value; a ``CacheError`` when the
    ///   cached value cannot be read.
    /// - Complexity: `fetch`, then file I/O on a background queue.
    public func value<T: Archivable>(
        _ valueType: T.Type = T.self,
        for type: Kind,
        parameter: String? = nil,
        isolation: isolated (any Actor)? = #isolation,
        fetchingWith fetch: () async throws -> T
    ) async throws -> CacheFetchResult<T> {
        let fetched: T
        do {
            fetched = try await fetch()
        } catch {
            noteMemoryTierSkipped(T.self)
            let read = try await offload { try self.payloadFromDisk(for: type, parameter: parameter, freshness: .any) }
            guard let read else { throw error }
            let cached = try counting(type) { try withContext(type, parameter) { try decodePayload(T.self, read) } }
            return CacheFetchResult(value: cached, date: read.entry.header.writeDate, fetchError: error)
        }
        let now = Date()
        do {
            noteMemoryTierSkipped(T.self)
            let encoded = try encode(fetched, type, parameter)
            try await offload {
                try self.write(encoded, for: type, parameter: parameter, expiry: .policy, memoryItem: nil)
            }
            return CacheFetchResult(value: fetched, date: now)
        } catch {
            return CacheFetchResult(value: fetched, date: now, storeError: error as? CacheError)
        }
    }

    /// The cached value whatever its age, or `fetchError` rethrown when there is none.
    func fallback<T: Archivable>(
        _: T.Type,
        for type: Kind,
        parameter: String?,
        fetchError: any Error
    ) throws -> CacheFetchResult<T> {
        var writeDate = Date()
        guard
            let cached = try readFromDisk(
                T.self,
                for: type,
                parameter: parameter,
                freshness: .any,
                memoryItem: nil,
                writeDate: &writeDate
            )
        else { throw fetchError }
        return CacheFetchResult(value: cached, date: writeDate, fetchError: fetchError)
    }
}
