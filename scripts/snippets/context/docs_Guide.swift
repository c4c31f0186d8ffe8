// What docs/Guide.md's snippets take for granted beyond the guide's own "The names these
// examples use" block: only what an Apple platform has and Linux lacks. Never run: only compiled.
import Foundation

#if !canImport(Darwin)
extension FileManager {
    /// Apple platforms' app-group container, so that the snippets using it compile here.
    func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? { nil }
}
#endif
