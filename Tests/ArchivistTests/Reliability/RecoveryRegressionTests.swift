import Foundation
import Testing
@testable import Archivist

/// Regression tests for bugs the crash and fault-injection tests found.
@Suite struct RecoveryRegressionTests {
    /// Found by the crash test: a kill during a background save of the size index left its
    /// temporary in `.archivist`, which the rescan's entry walk skips, so it stayed forever.
    @Test func aRescanSweepsAnInterruptedIndexSave() throws {
        try withTemporaryDirectory { dir throws in
            do {
                let store = try DiskStore.open(at: dir)
                try store.write(Data([1, 2, 3]), to: DiskKey(folder: FolderPath(["f"]), name: .single),
                                typeName: "t", parameter: nil, expiry: nil, durability: .none)
                try store.flush()
            }
            let stale = dir.appendingPathComponent(".archivist/.tmp-0123456789abcdef")
            try Data("half an index".utf8).write(to: stale)
            try Data("D".utf8).write(to: dir.appendingPathComponent(".archivist/dirty"))
            let store = try DiskStore.open(at: dir)
            #expect(!FileManager.default.fileExists(atPath: stale.path))
            #expect(store.usage(of: FolderPath([])).entryCount == 1)
        }
    }
}
