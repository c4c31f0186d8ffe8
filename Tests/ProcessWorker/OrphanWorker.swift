import ArchivistTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `idle`: sleeps until killed, or until its parent exits (`exitWhenParentExits`).
func idle(_ arguments: [String]) throws {
    while true { sleep(60) }
}

/// `orphan <pid file>`: starts another worker in `idle` mode, writes that worker's pid to
/// `<pid file>` and exits at once, leaving the idle worker an orphan, as an interrupted test
/// runner leaves its workers. The test then checks that the orphan ends by itself.
func orphan(_ arguments: [String]) throws {
    let pidFile = argument(arguments, 0, "pid file") { $0 }
    let executable = CommandLine.arguments[0]
    var variables = ProcessInfo.processInfo.environment
    variables[parentPIDVariable] = String(getpid())
    var argv: [UnsafeMutablePointer<CChar>?] = [strdup(executable), strdup("idle"), nil]
    var envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, executable, nil, nil, &argv, &envp)
    guard result == 0 else { fail("posix_spawn failed: \(result)") }
    try "\(pid)".write(toFile: pidFile, atomically: true, encoding: .utf8)
    exit(0)
}
