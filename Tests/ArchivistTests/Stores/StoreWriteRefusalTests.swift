import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plist or preferences write that the file system refuses — a read-only volume (`EROFS`),
/// a folder this process may not write (`EACCES`) — throws `permissionDenied`, the stores'
/// documented code for both, and the old value stays.
@Suite struct StoreWriteRefusalTests {
    @Test(arguments: [EROFS, EACCES])
    func aRefusedWriteIsPermissionDeniedAndKeepsTheOldValue(refusal: Int32) throws {
        let folder = try ScratchFolder()
        let refusing = Locked(false)
        var fileSystem = FileSystem.posix
        let open = fileSystem.open
        fileSystem.open = { path, flags, mode in
            if flags & O_CREAT != 0, refusing.withLock({ $0 }) {
                errno = refusal
                return -1
            }
            return open(path, flags, mode)
        }
        let store = PlistStore(directory: folder.url, fileSystem: fileSystem)
        try store.set(1, forKey: "count", in: "Preferences")
        let preferences = try Preferences(store: store)
        let count = PreferenceKey<Int>("count", default: 0)
        refusing.withLock { $0 = true }

        let storeError = #expect(throws: StoreError.self) { try store.set(2, forKey: "count", in: "Preferences") }
        #expect(storeError?.code == .permissionDenied)
        let durableError = #expect(throws: StoreError.self) { try preferences.set(3, for: count, durability: .file) }
        #expect(durableError?.code == .permissionDenied)
        #expect(preferences[count] == 1)
        try preferences.set(4, for: count)
        let flushError = #expect(throws: StoreError.self) { try preferences.flush() }
        #expect(flushError?.code == .permissionDenied)
        #expect(try store.snapshot(of: "Preferences").root["count"] == .int(1), "the file keeps the old value")

        refusing.withLock { $0 = false }
        try preferences.flush()  // the unwritten set lands once writes are allowed again
        #expect(try store.snapshot(of: "Preferences").root["count"] == .int(4))
    }
}
