import Foundation

extension CacheManager {
    /// What a clear removes. Only what this manager can see is ever cleared: the shared
    /// caches and its own user's scopes, never another user's.
    ///
    /// ```swift
    /// try cache.clear(.type(.hots))
    /// try cache.clear(.location(.userCaches))
    /// try cache.clear(.user)              // sign-out
    /// ```
    public enum Scope: Sendable, Hashable {
        /// The shared caches and this manager's user's caches and documents.
        case all
        /// One location (this manager's user's, for a user-scoped one).
        case location(CacheLocation)
        /// One cache type's entries.
        case type(Kind)
        /// This manager's user's caches and documents (sign-out).
        case user
    }

    /// Clears `scope` in O(1): its folders are renamed into a trash folder and deleted in the
    /// background. Sizes drop at once and reads miss at once.
    ///
    /// Every form of `clear` — this one, the `async` one and the completion-handler one —
    /// returns (or completes) once the renames are done, without waiting for the deletion;
    /// `flush()` waits for it when you need the disk space back.
    ///
    /// ```swift
    /// let freed = try cache.clear()
    /// ```
    ///
    /// - Returns: The logical bytes freed.
    /// - Throws: ``CacheError``: `noUser` (clearing a user-scoped type without a user),
    ///   `permissionDenied`, `fileSystem` when a rename fails.
    /// - Complexity: One `rename` per folder, whatever it holds; waits only for writes already
    ///   in flight. Deletion happens later on a background queue.
    @discardableResult
    public func clear(_ scope: Scope = .all) throws -> Int {
        try clearFolders(scope)
    }

    /// Clears `scope` as `clear(_:)` on a background queue, then calls `completion` there
    /// with the bytes freed, once the renames are done (the deletion goes on in the background;
    /// `flush()` waits for it).
    ///
    /// ```swift
    /// cache.clear { result in print(try? result.get() as Any, "bytes freed") }
    /// ```
    ///
    /// - Parameters:
    ///   - scope: What to clear (`.all` by default).
    ///   - completion: Called once, on a background queue, with the bytes freed or the
    ///     ``CacheError`` (`noUser`, `permissionDenied`, `fileSystem`). It may call the cache.
    /// - Complexity: Returns at once; one `rename` per folder on a background queue.
    public func clear(_ scope: Scope = .all, completion: @escaping @Sendable (Result<Int, CacheError>) -> Void) {
        DispatchQueue.global().async {
            completion(Self.result { try self.clear(scope) })
        }
    }

    /// Clears `scope` as `clear(_:)` without blocking the caller, and returns the bytes
    /// freed once the renames are done — the same moment the blocking form returns; the
    /// deletion goes on in the background (`flush()` waits for it).
    ///
    /// ```swift
    /// let freed = try await cache.clear()
    /// try await cache.flush()   // only if the disk space must be back now
    /// ```
    ///
    /// - Throws: ``CacheError``: `noUser`, `permissionDenied`, `fileSystem`.
    /// - Complexity: One `rename` per folder, on a background queue.
    @discardableResult
    public func clear(_ scope: Scope = .all) async throws -> Int {
        try await offload { try self.clear(scope) }
    }

    private func clearFolders(_ scope: Scope) throws -> Int {
        var targets: [(store: DiskStore, folders: [FolderPath])] = []
        func add(_ folder: FolderPath, in store: DiskStore) {
            if let i = targets.firstIndex(where: { $0.store === store }) {
                targets[i].folders.append(folder)
            } else {
                targets.append((store, [folder]))
            }
        }
        switch scope {
        case .all, .user, .location:
            for location in CacheLocation.allCases {
                switch scope {
                case .user where !location.isUserScoped: continue
                case .location(let only) where only != location: continue
                default: break
                }
                if let folder = folder(for: location) { add(folder, in: disk(for: location)) }
            }
        case .type(let type):
            add(try folder(for: type), in: disk(for: type.location))
        }
        clearEpoch.withLock { $0 &+= 1 }
        var freed: Int64 = 0
        var failure: CacheError?
        for target in targets {
            do {
                freed += try target.store.clear(target.folders, origin: originToken)
            } catch {
                failure = failure ?? CacheError.from(error, "clear failed")
            }
        }
        if let memory {
            switch scope {
            case .all: memory.removeAll()
            case .location(let location): memory.removeAll { $0.location == location }
            case .user: memory.removeAll { $0.location.isUserScoped }
            case .type(let type):
                let name = type.name
                memory.removeAll { Bytewise.equal($0.typeName, name) }
            }
        }
        for target in targets { publishClear(of: target.folders, in: target.store) }
        if let failure { throw failure.with(typeName: nil, parameter: nil) }
        return Int(clamping: freed)
    }
}
