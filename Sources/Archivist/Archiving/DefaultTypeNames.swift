import Foundation

/// The default ``Archivable/archiveTypeName`` of each type, worked out once per process.
///
/// `String(describing:)` on a metatype goes through the runtime's reflection and protocol
/// conformance lookups (about 0.6 µs, a fifth of encoding a small record on its own); a
/// locked dictionary lookup costs a few tens of nanoseconds. Only the default name is cached:
/// a type that overrides `archiveTypeName` is asked every time, as before.
enum DefaultTypeNames {
    private static let names = Locked<[ObjectIdentifier: String]>([:])

    /// `String(describing: type)`, from the cache after the first call for `type`.
    static func name(of type: Any.Type) -> String {
        let id = ObjectIdentifier(type)
        if let name = names.withLock({ $0[id] }) { return name }
        let name = String(describing: type)
        names.withLock { $0[id] = name }
        return name
    }
}
