import Foundation

/// A fresh temporary folder for one test, deleted when the last reference goes away.
final class ScratchFolder: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("archivist-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// `url/<name>`.
    func file(_ name: String) -> URL { url.appendingPathComponent(name, isDirectory: false) }

    /// Writes `root` as a property list at `url/<name>` (a stand-in for a bundled default).
    @discardableResult
    func writePlist(
        _ root: [String: Any],
        named name: String,
        format: PropertyListSerialization.PropertyListFormat = .xml
    ) throws -> URL {
        let target = file(name)
        try PropertyListSerialization.data(fromPropertyList: root, format: format, options: 0).write(to: target)
        return target
    }
}

/// A fresh ``ScratchFolder`` for one test, deleted when the test's closure returns.
func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let folder = try ScratchFolder()
    return try withExtendedLifetime(folder) { try body(folder.url) }
}

/// The async form of ``withTemporaryDirectory(_:)``.
func withTemporaryDirectory<R>(_ body: (URL) async throws -> R) async throws -> R {
    let folder = try ScratchFolder()
    defer { withExtendedLifetime(folder) {} }
    return try await body(folder.url)
}
