import Foundation

/// Writes `<executable name>: message` to standard error and exits with status 1: how the
/// processes the tests start (`ArchivistCrashWriter`, `ArchivistProcessWorker`) report a
/// failure, which the test sees in the exit status. Never call it in the test process itself.
public func fail(_ message: String) -> Never {
    let name = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "helper"
    FileHandle.standardError.write(Data("\(name): \(message)\n".utf8))
    exit(1)
}
