import Foundation
import Testing

/// Ends the running test as skipped, saying why: for a condition only the test itself can
/// find out (a mount that needs root, a permission that root ignores). A condition known
/// before the test starts belongs in an `.enabled(if:)` trait instead.
///
/// With Swift 6.3 and later the test is cancelled and the run reports it as skipped with the
/// reason. Before 6.3 a test cannot end as skipped: the reason is printed on standard error
/// and the caller returns.
///
/// ```swift
/// guard geteuid() == 0 else { try skip("needs root to mount a read-only file system"); return }
/// ```
func skip(_ reason: Comment, sourceLocation: SourceLocation = #_sourceLocation) throws {
    #if compiler(>=6.3)
    try Test.cancel(reason, sourceLocation: sourceLocation)
    #else
    FileHandle.standardError.write(Data("Skipped \(Test.current?.name ?? "a test"): \(reason)\n".utf8))
    #endif
}
