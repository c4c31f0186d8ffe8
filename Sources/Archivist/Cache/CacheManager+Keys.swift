import Foundation

/// From a cache type and parameter to where its entry lives: the store, the type's folder for
/// this manager's user, the entry's key, and the storage layer's errors in the cache's words.
extension CacheManager {
    /// The address of `type`'s entry for `parameter`: everything a store, read or removal
    /// needs, resolved once.
    ///
    /// - Throws: ``CacheError`` `invalidTypeName` for an empty name, `noUser` for a
    ///   user-scoped type without a user, `keyTooLong` when an entry header cannot record the
    ///   name or the parameter (checked before the parameter's MD5, so a parameter too long to
    ///   store costs no hash).
    func address(of type: Kind, _ parameter: String?) throws -> EntryAddress {
        let (folder, tally) = try folderAndTally(for: type)
        let name = type.name
        let entry = try withContext(type, nil) { try EntryKey(folder: folder, typeName: name, parameter: parameter) }
        let location = type.location
        return EntryAddress(store: disk(for: location), entry: entry, location: location, tally: tally)
    }

    /// The folder of `type`'s entries for this manager's user.
    ///
    /// - Throws: ``CacheError`` `invalidTypeName` for an empty name, `noUser` for a
    ///   user-scoped type without a user.
    func folder(for type: Kind) throws -> FolderPath {
        try folderAndTally(for: type).folder
    }

    /// ``folder(for:)`` and the type's statistics tally, found with one lock while the type is
    /// the one used last.
    ///
    /// - Throws: as ``folder(for:)``.
    func folderAndTally(for type: Kind) throws -> (folder: FolderPath, tally: TypeTally) {
        let name = type.name
        let location = type.location
        if let found = lastFolder.withLock({ $0?.folder(name: name, location: location) }) { return found }
        // `Kind`'s own `==` may call two spellings of a name equal; the folder is the MD5 of
        // the name's bytes, so a cached folder counts only for the very same bytes.
        if let cached = folders.withLock({ $0[type] }), Bytewise.equal(cached.name, name) {
            let tally = statisticsBook.tally(name: name, location: location)
            lastFolder.withLock {
                $0 = LastTypeFolder(name: name, location: location, folder: cached.folder, tally: tally)
            }
            return (cached.folder, tally)
        }
        guard !name.isEmpty else {
            throw CacheError(
                .invalidTypeName,
                "a cache type's name must not be empty: it names the folder of the type's entries",
                typeName: name
            )
        }
        var components = [location.folderName]
        if location.isUserScoped {
            guard let userFolder else {
                throw CacheError(.noUser, "\(type.location) needs a manager created with a user", typeName: name)
            }
            components.append(userFolder)
        }
        components.append(MD5.hexDigest(of: name))
        let folder = FolderPath(components)
        folders.withLock { $0[type] = (name, folder) }
        let tally = statisticsBook.tally(name: name, location: location)
        lastFolder.withLock { $0 = LastTypeFolder(name: name, location: location, folder: folder, tally: tally) }
        return (folder, tally)
    }

    /// The folder of `location` for this manager's user; `nil` for a user-scoped location
    /// without a user.
    func folder(for location: CacheLocation) -> FolderPath? {
        if !location.isUserScoped { return FolderPath([location.folderName]) }
        return userFolder.map { FolderPath([location.folderName, $0]) }
    }

    /// The store holding `location`.
    func disk(for location: CacheLocation) -> DiskStore {
        location.isDocuments ? documents : caches
    }

    /// Runs `body`, which may call into the storage layer, adding the type's name and the
    /// parameter to any ``CacheError`` and throwing a ``StorageError`` as one.
    func withContext<R>(_ type: Kind, _ parameter: String?, _ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as CacheError {
            throw error.with(typeName: type.name, parameter: parameter)
        } catch let error as StorageError {
            throw CacheError(error).with(typeName: type.name, parameter: parameter)
        }
    }
}
