import Foundation
import Testing

/// The 28 NSKeyedArchiver fixtures of `shared/fixtures/nskeyedarchiver`, read at test time.
///
/// They are not copied into the repository (their licenses are unresolved). The folder is
/// looked up as `shared/` beside the repository root (the CI layout), then beside each
/// ancestor of it (a git worktree nested under the main checkout's parent).
///
/// A test that reads them carries ``Testing/Trait/needsKeyedArchiveFixtures``: without the
/// folder it is skipped with a note naming it, except when the `CI` environment variable is
/// set, where it runs and fails with ``FixtureMissing``, so that CI always proves it.
enum KeyedArchiveFixtures {
    /// What decoding a fixture through the bridge, with the default allowlist, must do.
    enum Outcome: Sendable, CustomStringConvertible {
        case decodes
        case throwsCode(String)

        var description: String {
            switch self {
            case .decodes: "decodes"
            case .throwsCode(let code): "throws \(code)"
            }
        }
    }

    /// Every fixture, relative to the fixture folder, with its expected outcome.
    static let expectations: [(path: String, outcome: Outcome)] = [
        ("swift-corelibs-foundation/NSKeyedUnarchiver-ComplexTest.plist", .decodes),
        ("swift-corelibs-foundation/NSKeyedUnarchiver-ArrayTest.plist", .decodes),
        ("swift-corelibs-foundation/NSKeyedUnarchiver-URLTest.plist", .decodes),
        ("swift-corelibs-foundation/NSKeyedUnarchiver-UUIDTest.plist", .decodes),
        ("swift-corelibs-foundation/NSKeyedUnarchiver-NotificationTest.plist", .throwsCode("disallowed type")),
        ("swift-corelibs-foundation/NSKeyedUnarchiver-ConcreteValueTest.plist", .throwsCode("disallowed type")),
        ("swift-corelibs-foundation/NSAttributedString.archive", .throwsCode("disallowed type")),
        ("swift-corelibs-foundation/NSSet-Numbers.archive", .decodes),
        ("swift-corelibs-foundation/NSOrderedSet-Numbers.archive", .decodes),
        ("swift-corelibs-foundation/NSMeasurement-Length.archive", .throwsCode("disallowed type")),
        ("rust-nskeyedunarchiver/circularReference.plist", .throwsCode("unresolved reference")),
        ("rust-nskeyedunarchiver/note.plist", .throwsCode("disallowed type")),
        ("rust-nskeyedunarchiver/simpleDict.plist", .decodes),
        ("php-nskeyedunarchiver/ArchivedData/reference.bin.plist", .decodes),
        ("php-nskeyedunarchiver/ArchivedData/nested.bin.plist", .decodes),
        ("php-nskeyedunarchiver/ArchivedData/miscTypes.bin.plist", .throwsCode("disallowed type")),
        ("php-nskeyedunarchiver/ArchivedData/collections.bin.plist", .throwsCode("disallowed type")),
        ("php-nskeyedunarchiver/BrokenData/invalidReference.bin.plist", .throwsCode("corrupt")),
        ("php-nskeyedunarchiver/BrokenData/objectWithNoClassName.bin.plist", .throwsCode("corrupt")),
        ("php-nskeyedunarchiver/BrokenData/objectWithNonStringClassName.bin.plist", .throwsCode("corrupt")),
        ("bpylist2/circular_archive.plist", .throwsCode("disallowed type")),
        ("bpylist2/recursive_archive.plist", .throwsCode("disallowed type")),
        ("bpylist2/complex_archive.plist", .throwsCode("disallowed type")),
        ("bpylist2/dataclass_archive.plist", .throwsCode("disallowed type")),
        ("bpylist2/invalid_uid_archive.plist", .throwsCode("corrupt")),
        ("bpylist2/missing_uid_archive.plist", .decodes),
        ("bpylist2/no_objects_archive.plist", .throwsCode("corrupt")),
        ("fq/recentapps.sfl2", .decodes),
    ]

    static var paths: [String] { expectations.map(\.path) }

    /// Whether the tests that read the fixtures run: when the folder is found, and always when
    /// the `CI` environment variable is set (where a missing folder fails them).
    static let isAvailable: Bool = directory() != nil || ProcessInfo.processInfo.environment["CI"] != nil

    /// The fixture folder, or `nil` when no `shared/fixtures/nskeyedarchiver` is found.
    static func directory(filePath: String = #filePath) -> URL? {
        // Tests/ArchivistTests/Support/<file> -> repository root is three folders up.
        var folder = URL(fileURLWithPath: filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.deletingLastPathComponent()
                .appendingPathComponent("shared/fixtures/nskeyedarchiver", isDirectory: true)
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("README.md").path) {
                return candidate
            }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }

    static let missingMessage = """
        shared/fixtures/nskeyedarchiver not found beside the repository root (or an ancestor): \
        these tests read the 28 fixtures from there and must not pass without them
        """

    /// The bytes of one fixture.
    static func data(_ path: String) throws -> Data {
        guard let directory = directory() else { throw FixtureMissing() }
        return try Data(contentsOf: directory.appendingPathComponent(path))
    }

    struct FixtureMissing: Error, CustomStringConvertible {
        var description: String { KeyedArchiveFixtures.missingMessage }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test when ``KeyedArchiveFixtures/isAvailable``; otherwise records a skip that
    /// names the folder the test reads.
    static var needsKeyedArchiveFixtures: Self {
        .enabled(
            if: KeyedArchiveFixtures.isAvailable,
            "needs ../shared/fixtures/nskeyedarchiver beside the repository (CI=1 makes its absence a failure)"
        )
    }
}
