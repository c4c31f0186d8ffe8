import Foundation

/// A rebuild of a cache's size index from its files, under way in this process.
///
/// The size index is kept in step with every write, so it is rebuilt only after damage: a
/// process killed between changing a file and journaling it (without naming the entry), a
/// damaged or missing index, or shared counters that had to be started again. The rebuild
/// walks every file of the cache root — seconds at a million entries. When a `CacheManager`
/// opens a root of 50,000 entries or more (as its last saved index counted) and finds a
/// rebuild due, the rebuild runs on a background queue: reads are served meanwhile, and
/// sizes, stores, removals and `flush()` wait for it. A smaller root's rebuild runs before
/// the initializer returns.
///
/// ```swift
/// if let rebuild = cache.indexRebuild {
///     statusLabel.text = "Checking the cache: \(rebuild.filesExamined) files"
/// }
/// ```
public struct CacheIndexRebuild: Sendable, Hashable {
    /// The files and folders of the cache root examined so far (updated every 1,024).
    public var filesExamined: Int
    /// When the walk started.
    public var startDate: Date

    /// A rebuild that examined `filesExamined` items since `startDate`.
    public init(filesExamined: Int, startDate: Date) {
        self.filesExamined = filesExamined
        self.startDate = startDate
    }
}

extension CacheManager {
    /// The rebuilds of the size index under way in this process for this manager's roots (the
    /// caches' and the documents'), added together; `nil` when none is running.
    ///
    /// - Complexity: O(1): two lock-protected reads.
    public var indexRebuild: CacheIndexRebuild? {
        let rebuilds = [caches.rebuild, documents.rebuild].compactMap { $0 }
        guard let first = rebuilds.first else { return nil }
        return CacheIndexRebuild(
            filesExamined: rebuilds.reduce(0) { $0 + $1.itemsExamined },
            startDate: rebuilds.map(\.startDate).min() ?? first.startDate
        )
    }
}
