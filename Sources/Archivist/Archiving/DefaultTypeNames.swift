import Foundation

/// The default ``Archivable/archiveTypeName`` of each type, worked out once per thread.
///
/// `String(describing:)` on a metatype goes through the runtime's reflection and protocol
/// conformance lookups (about 0.6 µs, a fifth of encoding a small record on its own). The
/// names are kept in ``ArchivingThreadCache``, so a lookup takes no lock; the type asked for
/// last (a one-model archive's every time) costs one compare. Only the default name is cached:
/// a type that overrides `archiveTypeName` is asked every time, since its answer may change.
enum DefaultTypeNames {
    /// `String(describing: type)`, from this thread's cache after the first call for `type`.
    static func name(of type: Any.Type) -> String {
        let id = ObjectIdentifier(type)
        let cache = ArchivingThreadCache.current
        if cache.lastTypeID == id { return cache.lastTypeName }
        let name: String
        if let known = cache.typeNames[id] {
            name = known
        } else {
            name = String(describing: type)
            cache.typeNames[id] = name
        }
        cache.lastTypeID = id
        cache.lastTypeName = name
        return name
    }
}
