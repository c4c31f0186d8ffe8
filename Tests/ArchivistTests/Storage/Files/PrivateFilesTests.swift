// Starts a worker process (the umask is process-wide): macOS and Linux only.
#if os(macOS) || os(Linux)
import Foundation
import Testing
@testable import Archivist
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// "Folders 0700, files 0600, whatever the umask" holds for every file and folder the library
/// creates. A child process sets umask 0777 (the umask is process-wide, so the tests running
/// beside this one are not disturbed) and creates every kind there is.
@Suite struct PrivateFilesTests {
    @Test func everythingCreatedUnderUmask0777Is0600Or0700() throws {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let folder = try ScratchFolder()
        ChildProcess.waitForAll([try ChildProcess(worker, ["umask-everything", folder.url.path])])

        var seen: Set<String> = []
        var wrong: [String] = []
        let walker = try #require(FileManager.default.enumerator(atPath: folder.url.path))
        while let relative = walker.nextObject() as? String {
            var status = stat()
            guard lstat(folder.url.path + "/" + relative, &status) == 0 else { continue }
            let isFolder = status.st_mode & S_IFMT == S_IFDIR
            let mode = status.st_mode & 0o7777
            if mode != (isFolder ? 0o700 : 0o600) { wrong.append("\(relative) \(String(mode, radix: 8))") }
            seen.insert((relative as NSString).lastPathComponent)
        }
        #expect(wrong.isEmpty, "not private: \(wrong.sorted())")
        // The kinds of file the check must have covered.
        for name in [
            "dirty", "index", "journal", "trash", "trash.lock", "value", "records.log", "records.snapshot",
            "settings.plist", "Preferences.plist",
        ] {
            #expect(seen.contains(name), "\(name) was not created")
        }
        #expect(seen.contains { $0.hasPrefix("records.log.quarantine") }, "no quarantine file was created")
    }
}
#endif
