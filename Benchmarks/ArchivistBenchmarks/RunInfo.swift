import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The machine, toolchain and commit a run measured, recorded in `results.json` so that the
/// page generated from it can say what its figures are figures of. Every field is optional:
/// what could not be found out is left out, and the page says "not recorded".
struct RunInfo: Codable {
    /// When the run ended, `yyyy-MM-dd HH:mm UTC`.
    var date: String?
    /// `git rev-parse --short HEAD` of the working directory.
    var commit: String?
    /// Whether `Sources/`, `Benchmarks/` or `Package.swift` differed from that commit.
    var localChanges: Bool?
    /// The first line of `swift --version`.
    var swift: String?
    /// The CPU's model name (`/proc/cpuinfo`, or `machdep.cpu.brand_string` on Apple platforms).
    var cpu: String?
    /// Processors the operating system reports.
    var cores: Int?
    /// Physical memory in bytes.
    var memoryBytes: UInt64?
    /// Operating system, kernel and architecture.
    var os: String?
    /// Whether the run was `--quick`.
    var quick: Bool?
    /// The command-line arguments after the executable's name.
    var arguments: [String]?
    /// The run's wall-clock time in seconds, from start to the last suite's end.
    var durationSeconds: Double?

    /// What this process can find out about itself now.
    static func current(quick: Bool, arguments: [String], duration: Double) -> RunInfo {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        let commit = command("git", "rev-parse", "--short", "HEAD")
        let status =
            commit == nil
            ? nil : command("git", "status", "--porcelain", "--", "Sources", "Benchmarks", "Package.swift")
        return RunInfo(
            date: formatter.string(from: Date()),
            commit: commit,
            localChanges: status.map { !$0.isEmpty },
            swift: command("swift", "--version")?.split(separator: "\n").first.map(String.init),
            cpu: cpuModel(),
            cores: ProcessInfo.processInfo.processorCount,
            memoryBytes: ProcessInfo.processInfo.physicalMemory,
            os: operatingSystem(),
            quick: quick,
            arguments: arguments,
            durationSeconds: duration
        )
    }

    /// The trimmed standard output of a program found on `PATH`, or `nil` if it could not run
    /// or failed.
    private static func command(_ arguments: String...) -> String? {
        // Foundation's `Process` exists on macOS and Linux only.
        #if os(macOS) || os(Linux)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #else
        return nil
        #endif
    }

    private static func cpuModel() -> String? {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            return line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        return nil
        #elseif canImport(Darwin)
        var size = 0
        guard sysctlbyname("machdep.cpu.brand_string", nil, &size, nil, 0) == 0, size > 0 else { return nil }
        var bytes = [CChar](repeating: 0, count: size)
        guard sysctlbyname("machdep.cpu.brand_string", &bytes, &size, nil, 0) == 0 else { return nil }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
        return nil
        #endif
    }

    private static func operatingSystem() -> String {
        var system = utsname()
        uname(&system)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        let kernel = "\(field(system.sysname)) \(field(system.release)), \(field(system.machine))"
        #if os(Linux)
        if let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") })
        {
            let name = line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return "\(name), \(kernel)"
        }
        #endif
        return "\(ProcessInfo.processInfo.operatingSystemVersionString) (\(kernel))"
    }
}
