import ArchivistTestSupport
import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `FolderRemoval` climbing back through `..` below its open levels, when that climb fails for
/// good rather than because of a race: a folder it may read but not search (mode `r--`), whose
/// `..` cannot be opened. The walk must remember that folder, go on with everything else, and
/// throw `permissionDenied`, not start over until its restart budget runs out and stop early.
@Suite struct FolderRemovalClimbFailureTests {
    /// Folders deep in a chain (past the levels kept open) that can be read but not searched,
    /// next to files at that level and at the top: all the files go, only the unsearchable
    /// folders and the chain holding them stay. Runs as `nobody` (through `setpriv`) when the
    /// tests run as root, where permissions do not bind.
    @Test func unsearchableFoldersBelowTheOpenLevelsAreSkippedAndTheRestDeleted() throws {
        let depth = FolderRemoval.openLevels + 4
        try withTemporaryDirectory { dir throws in
            let trash = dir.appendingPathComponent("trash")
            let chain = (0..<depth).map { _ in "d" }.joined(separator: "/")
            let bottom = trash.appendingPathComponent(chain)
            try FileManager.default.createDirectory(at: bottom, withIntermediateDirectories: true)
            for index in 0..<20 {
                try Data("x".utf8).write(to: trash.appendingPathComponent("top-\(index)"))
                try Data("x".utf8).write(to: bottom.appendingPathComponent("file-\(index)"))
                let stuck = bottom.appendingPathComponent("stuck-\(index)")
                try FileManager.default.createDirectory(at: stuck, withIntermediateDirectories: true)
                try Data("x".utf8).write(to: stuck.appendingPathComponent("inner"))
            }
            var expected: Set<String> = []
            for level in 1...depth { expected.insert((0..<level).map { _ in "d" }.joined(separator: "/")) }
            for index in 0..<20 {
                expected.insert(chain + "/stuck-\(index)")
                expected.insert(chain + "/stuck-\(index)/inner")
            }
            let stuckPaths = (0..<20).map { bottom.appendingPathComponent("stuck-\($0)").path }
            defer { for path in stuckPaths { chmod(path, 0o700) } }

            if geteuid() == 0 {
                // Drops root in a worker process: macOS and Linux only.
                #if os(macOS) || os(Linux)
                let worker = try #require(processWorkerPath(), "ArchivistProcessWorker not built next to the tests")
                let setpriv = "/usr/bin/setpriv"
                guard FileManager.default.isExecutableFile(atPath: setpriv) else {
                    try skip("running as root without setpriv: no way to drop root here")
                    return
                }
                #expect(lchown(trash.path, 65534, 65534) == 0)
                for path in allPaths(under: trash) { #expect(lchown(trash.path + "/" + path, 65534, 65534) == 0) }
                for path in stuckPaths { #expect(chmod(path, 0o400) == 0) }
                let child = try ChildProcess(
                    setpriv,
                    [
                        "--reuid=65534", "--regid=65534", "--clear-groups",
                        worker, "empty-folder", trash.path,
                    ]
                )
                // It cannot delete everything, so it ends with a failure (exit status 1).
                #expect(!ChildProcess.succeeded(child.wait()))
                #else
                try skip("running as root: only a worker process could drop root here")
                return
                #endif
            } else {
                for path in stuckPaths { #expect(chmod(path, 0o400) == 0) }
                let error = #expect(throws: StorageError.self) { try FolderRemoval.removeContents(of: trash.path) }
                #expect(error?.code == .permissionDenied)
            }
            let left = Set(allPaths(under: trash))
            #expect(left.subtracting(expected).sorted() == [], "left undeleted")
            #expect(expected.subtracting(left).sorted() == [], "deleted though undeletable")
        }
    }
}
