import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the archiving code keeps per thread between calls, so an archive's fixed costs are
/// paid once per thread instead of once per archive: a spare encoder and a spare decoder whose
/// tables are kept (emptied) for the next archive, and the default type names found so far.
///
/// Reached through a POSIX thread-specific key: no lock, and nothing shared between threads.
/// The cache lives until its thread ends.
///
/// Only its own thread reaches a cache, so accesses never overlap: the stored properties the
/// per-archive path touches skip the run-time exclusivity check (a `swift_beginAccess` call of
/// about 75 instructions each, two or three per archive).
final class ArchivingThreadCache {
    /// An encoder no call is using; taken by ``ArchiveEncoder/withReusable(options:_:)``.
    @exclusivity(unchecked) var spareEncoder: ArchiveEncoder?
    /// A decoder no call is using; taken by ``ArchiveDecoder/withReusable(bytes:options:_:)``.
    @exclusivity(unchecked) var spareDecoder: ArchiveDecoder?
    /// Default type names (see ``DefaultTypeNames``) this thread has asked for.
    @exclusivity(unchecked) var typeNames: [ObjectIdentifier: String] = [:]
    /// The name asked for last: a one-model archive asks for the same type every time.
    @exclusivity(unchecked) var lastTypeID: ObjectIdentifier?
    @exclusivity(unchecked) var lastTypeName = ""

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { cache in
            #if canImport(Glibc)
            guard let cache else { return }
            #endif
            Unmanaged<ArchivingThreadCache>.fromOpaque(cache).release()
        }
        precondition(created == 0, "pthread_key_create failed: \(created)")
        return key
    }()

    /// This thread's cache, made on first use.
    @inline(__always)
    static var current: ArchivingThreadCache {
        if let cache = pthread_getspecific(key) {
            return Unmanaged<ArchivingThreadCache>.fromOpaque(cache).takeUnretainedValue()
        }
        return makeCurrent()
    }

    @inline(never)
    private static func makeCurrent() -> ArchivingThreadCache {
        let cache = ArchivingThreadCache()
        pthread_setspecific(key, Unmanaged.passRetained(cache).toOpaque())
        return cache
    }
}
