import Foundation
import Testing

@testable import Archivist

/// `CacheRoot.defaultLocation(for:)` follows the XDG rule on Linux: `$XDG_CACHE_HOME`, else
/// `$HOME/.cache` — `$HOME` as the process was given it, not the password database's home
/// (which differs under `sudo -H`, for service accounts and in containers). Each case runs in
/// a worker process with its own environment.
@Suite struct CacheRootLocationTests {
    #if os(Linux)
    /// The worker's two output lines (caches, documents) with `environment` and nothing else.
    private func location(_ environment: [String: String]) throws -> [String] {
        let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: worker)
        process.arguments = ["default-location", "Shop"]
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let bytes = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func homeComesFromTheEnvironment() throws {
        // A home that is surely not root's (nor anyone's) in the password database.
        #expect(
            try location(["HOME": "/srv/not-in-passwd"]) == [
                "/srv/not-in-passwd/.cache/Shop", "/srv/not-in-passwd/.local/share/Shop",
            ]
        )
    }

    @Test func xdgFoldersWinOverHome() throws {
        #expect(
            try location(["HOME": "/h", "XDG_CACHE_HOME": "/xc", "XDG_DATA_HOME": "/xd"]) == ["/xc/Shop", "/xd/Shop"]
        )
    }

    @Test func relativeValuesAreIgnored() throws {
        let result = try location(["HOME": "/h", "XDG_CACHE_HOME": "relative", "XDG_DATA_HOME": ""])
        #expect(result == ["/h/.cache/Shop", "/h/.local/share/Shop"])
    }
    #endif
}
