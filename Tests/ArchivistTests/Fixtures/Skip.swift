import Testing

/// Ends the running test as skipped, saying why: for a condition only the test itself can
/// find out (a mount that needs root, a permission that root ignores). A condition known
/// before the test starts belongs in an `.enabled(if:)` trait instead.
///
/// The test is cancelled (`Test.cancel`, Swift 6.3) and the run reports it as skipped with the
/// reason; it never counts as passed. The call always throws.
///
/// ```swift
/// guard geteuid() == 0 else { try skip("needs root to mount a read-only file system"); return }
/// ```
func skip(_ reason: Comment, sourceLocation: SourceLocation = #_sourceLocation) throws {
    try Test.cancel(reason, sourceLocation: sourceLocation)
}
