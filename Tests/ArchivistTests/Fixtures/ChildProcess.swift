// Starts worker processes with posix_spawn: macOS and Linux only.
#if os(macOS) || os(Linux)
import ArchivistTestSupport
import Foundation
@testable import Archivist
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import Testing

/// A child process started with `posix_spawn`, so the test can SIGKILL it at any moment.
struct ChildProcess {
    let pid: pid_t

    /// Starts `executable` with `arguments` and this process's environment.
    init(_ executable: String, _ arguments: [String]) throws {
        var variables = ProcessInfo.processInfo.environment
        variables[parentPIDVariable] = String(getpid())
        let environment = variables.map { "\($0.key)=\($0.value)" }
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, nil, nil, &argv, &envp)
        guard result == 0 else { throw StorageError.posix("posix_spawn", path: executable, errno: result) }
        self.pid = pid
    }

    /// Sends SIGKILL and reaps the child; returns its wait status.
    func kill() -> Int32 {
        #if canImport(Glibc)
        _ = Glibc.kill(pid, SIGKILL)
        #else
        _ = Darwin.kill(pid, SIGKILL)
        #endif
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    /// Waits for the child to exit by itself; returns its wait status.
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    /// Whether a wait status says the child exited normally with status 0.
    static func succeeded(_ status: Int32) -> Bool { status & 0x7f == 0 && (status >> 8) & 0xff == 0 }

    /// Waits for `children` to exit and records an issue for each that did not exit with 0.
    static func waitForAll(_ children: [ChildProcess], sourceLocation: SourceLocation = #_sourceLocation) {
        for child in children {
            let status = child.wait()
            if !succeeded(status) {
                Issue.record("child \(child.pid) ended with wait status \(status)", sourceLocation: sourceLocation)
            }
        }
    }
}

/// The multi-process test worker (`Tests/ProcessWorker`), built by `swift test` next to the
/// test bundle (the test target depends on it). `ARCHIVIST_PROCESS_WORKER` overrides the search.
func processWorkerPath() -> String? {
    executableNextToTests(named: "ArchivistProcessWorker", override: "ARCHIVIST_PROCESS_WORKER")
}

/// Finds the executable `name` that `swift test` built beside the test binary.
func executableNextToTests(named name: String, override: String) -> String? {
    if let path = ProcessInfo.processInfo.environment[override] { return path }
    let me = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    var folder = me.resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<5 {  // on macOS the test binary sits inside a bundle: X.xctest/Contents/MacOS
        let candidate = folder.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        folder.deleteLastPathComponent()
    }
    return nil
}
#endif
