import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file of lines in which a helper process records what it has done, for the test that
/// started it (and may kill it) to read: the crash writer's log of operations begun and
/// returned, the plist workers' list of committed keys.
///
/// Each line is appended with a single `write(2)` to a descriptor opened with `O_APPEND`, so
/// a SIGKILL never loses a completed line nor leaves half of one, and the lines of several
/// processes appending to one file never interleave.
///
/// ```swift
/// let progress = try ProgressLog(appendingTo: path)   // in the helper process
/// try progress.append("w0-17")
/// let committed = ProgressLog.lines(at: path)         // in the test
/// ```
public struct ProgressLog: Sendable {
    private let fd: Int32
    private let path: String

    /// Opens (creating it 0600 if needed) the file at `path` for appending.
    ///
    /// The descriptor stays open for the life of the process, which is a helper's whole run.
    ///
    /// - Throws: ``Failure`` when the file cannot be opened.
    public init(appendingTo path: String) throws {
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.error("cannot open the progress file \(path)") }
        self.path = path
    }

    /// Appends `line` and a newline with one `write(2)`.
    ///
    /// - Throws: ``Failure`` when the write fails or is short.
    public func append(_ line: String) throws {
        let bytes = Array((line + "\n").utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw Self.error("cannot append to the progress file \(path)")
        }
    }

    /// The lines of the file at `path` so far, without their newlines; none when it does not
    /// exist (yet) or cannot be read.
    public static func lines(at path: String) -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    private static func error(_ message: String) -> Failure {
        Failure(message: message, errno: errno)
    }

    /// Why the progress file could not be opened or appended to.
    public struct Failure: Error, CustomStringConvertible {
        /// What was being done, with the file's path.
        public var message: String
        /// The `errno` the failed call left (stale after a short write, which sets none).
        public var errno: Int32

        /// `message: errno n`.
        public var description: String { "\(message): errno \(errno)" }
    }
}
