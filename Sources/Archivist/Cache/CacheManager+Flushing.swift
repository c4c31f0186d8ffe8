import Foundation

/// Waiting for the work a manager leaves to the background.
///
/// What happens if the process exits (or is killed) right after a call returns: every
/// `store`, `removeValue` and `clear` that returned is on disk — entries are renamed into
/// place before `store` returns, synced as the type's `Durability` says — so nothing stored
/// is lost. Two things may still be pending, and neither loses data:
/// - the size index is a snapshot plus a journal every change is appended to as it commits;
///   a long journal makes the next open (and every other process's next size query) read it
///   all (slower, same sizes);
/// - cleared folders wait in `.archivist/trash` to be deleted on a background queue; the next
///   open deletes what is left, in the background, with the temporaries of a process killed
///   while writing. Neither ever counts in any size.
///
/// ``flush()`` does both now, so the next open is fast and the disk space is back: call it
/// before a command-line tool exits, at the end of a test, or when an app moves to the
/// background.
extension CacheManager {
    /// Saves the size index and waits until every cleared folder (and every temporary of a
    /// killed process the open found) has been deleted.
    ///
    /// ```swift
    /// try cache.store(report, for: .lastReport)
    /// try cache.flush()   // the tool may exit now: the next open is fast, the trash is empty
    /// ```
    ///
    /// - Throws: ``CacheError`` (`permissionDenied`, `readOnlyFileSystem`, `diskFull`,
    ///   `fileSystem`) when the index cannot be saved — the entries themselves are safe, and
    ///   the next open rebuilds the index by a scan — or, once the index is saved, when a
    ///   deletion of the trash since the last `flush()` failed (once per failure): what it
    ///   could not delete stays in the trash, counted in no size, and the next clear or open
    ///   tries again.
    /// - Complexity: Blocking file I/O: the changes other processes made since this one last
    ///   looked; a new snapshot layer of the index holding the changes since the last one
    ///   (O(changes + folders), never O(entries): it does not wait for a merge of the layers
    ///   under way in the background); plus the deletion of whatever is in the trash.
    public func flush() throws {
        statisticsBook.publishMemoryHits()
        for store in stores {
            store.waitForTrash()
            try CacheError.mapping { try store.flush() }
        }
        for store in stores {
            if let failure = store.takeUnreportedTrashFailure() { throw CacheError(failure) }
        }
    }

    /// Saves the size index and waits for the trash deletion, as ``flush()``, without
    /// blocking the caller.
    ///
    /// ```swift
    /// try await cache.flush()
    /// ```
    ///
    /// - Throws: ``CacheError`` as ``flush()``.
    /// - Complexity: As ``flush()``, on a background queue.
    public func flush() async throws {
        try await offload { try self.flush() }
    }

    /// The caches store, and the documents store when it is another folder.
    var stores: [DiskStore] {
        caches === documents ? [caches] : [caches, documents]
    }
}
