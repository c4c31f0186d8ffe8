import Foundation

/// Why a value skips the memory tier, said where it happens.
///
/// Which `store` and `value` overload Swift picks decides whether the memory tier is used:
/// the ones constrained to `Archivable & Sendable` keep decoded values in memory, the ones for
/// any `Archivable` never do (a non-`Sendable` value must not be shared across threads). A
/// model that is not `Sendable` — or a `Sendable` one passed through generic code that only
/// knows `T: Archivable` — compiles and works but is decoded from disk on every read. In debug
/// builds the manager says so once per type on standard error, so a missing `Sendable` does not
/// go unnoticed.
enum MemoryTierSkipNotes {
    /// Types already reported, so each is reported once per process.
    private static let reported = Locked<Set<ObjectIdentifier>>([])
    /// Every note printed so far (for tests).
    static let printed = Locked<[String]>([])

    /// The note for `type`.
    static func message(for type: Any.Type) -> String {
        "Archivist: CacheManager stores and reads \(type) through its overloads for non-Sendable types, so "
            + "it never keeps it in the memory tier: every read decodes it from disk. Make the type Sendable "
            + "(and call with a Sendable static type) to use the memory tier. (Said once per type, in debug builds.)\n"
    }

    /// In a debug build, prints ``message(for:)`` on standard error the first time `type` is seen.
    ///
    /// - Complexity: O(1); one lock and, the first time, one write to standard error.
    static func note(_ type: Any.Type) {
        #if DEBUG
        guard reported.withLock({ $0.insert(ObjectIdentifier(type)).inserted }) else { return }
        let text = message(for: type)
        printed.withLock { $0.append(text) }
        FileHandle.standardError.write(Data(text.utf8))
        #endif
    }
}

extension CacheManager {
    /// Notes that `T` skips the memory tier, when this manager has one.
    func noteMemoryTierSkipped<T>(_: T.Type) {
        if memory != nil { MemoryTierSkipNotes.note(T.self) }
    }
}
