import Foundation
import Testing

@testable import Archivist

/// Whether these tests run on an Apple platform, where folders carry a backup-exclusion mark.
private let hasBackupExclusion: Bool = {
    #if canImport(Darwin)
    true
    #else
    false
    #endif
}()

/// A store keeps the folders it makes for itself out of device backups (Apple platforms; Linux
/// has no such mark, so there the suite is skipped and the code only read).
@Suite(.enabled(if: hasBackupExclusion, "folders carry a backup-exclusion mark only on Apple platforms"))
struct BackupExclusionTests {
    @Test func theStoresOwnFoldersAreExcludedFromBackups() throws {
        try withTemporaryDirectory { dir in
            let store = try DiskStore.open(at: dir)
            try store.write(
                Data("x".utf8),
                to: hashedKey("a", "1"),
                typeName: "t",
                parameter: nil,
                expiry: nil,
                durability: .none
            )
            store.waitForTrash()
            #expect(BackupExclusion.isExcluded(folder: dir.path + "/.archivist") == true)
            #expect(BackupExclusion.isExcluded(folder: store.temporariesPath) == true)
            // The root and its entries are the app's to decide.
            #expect(BackupExclusion.isExcluded(folder: dir.path) == false)
        }
    }
}
