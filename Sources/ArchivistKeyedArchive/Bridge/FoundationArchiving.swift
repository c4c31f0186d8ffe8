import Foundation

/// One thread at a time inside swift-corelibs-foundation's `NSKeyedArchiver` and
/// `NSKeyedUnarchiver` (Linux): they are not safe to run on two threads at once, even with an
/// archiver and an object graph of each thread's own — four threads archiving dictionaries of
/// `NSNumber`s each trap within a few runs ("Duplicate keys of type 'AnyHashable' were found in
/// a Dictionary"). Every call the bridge makes into them holds this lock there; Apple's
/// Foundation is thread-safe that way and takes none.
///
/// ```swift
/// let data = try FoundationArchiving.serialized {
///     try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: true)
/// }
/// ```
package enum FoundationArchiving {
    #if !canImport(Darwin)
    /// Recursive: an object's `encode(with:)` or `init(coder:)` may archive or unarchive another.
    private static let lock = NSRecursiveLock()
    #endif

    /// Runs `body`, which calls into Foundation's keyed archiver or unarchiver, holding the
    /// process's lock for them where Foundation needs one (not on Apple platforms).
    ///
    /// - Complexity: `body`'s, after waiting for any other thread inside the archivers.
    package static func serialized<R>(_ body: () throws -> R) rethrows -> R {
        #if canImport(Darwin)
        return try body()
        #else
        lock.lock()
        defer { lock.unlock() }
        return try body()
        #endif
    }
}
