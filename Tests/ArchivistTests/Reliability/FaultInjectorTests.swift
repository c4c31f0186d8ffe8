import Foundation
import Testing

@testable import Archivist

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The fault sweeps' own instruments, checked so their silence means something.
@Suite struct FaultInjectorTests {
    @Test func failsExactlyTheNthCallOnceOrFromThenOn() throws {
        try withTemporaryDirectory { dir throws in
            for persistent in [false, true] {
                let injector = FaultInjector()
                let fs = injector.fileSystem
                injector.arm(.init(operation: .mkdir, n: 2, persistent: persistent, errno: ENOSPC))
                let results = (0..<4).map { i -> Int32 in
                    fs.mkdir(dir.path + "/\(persistent)-\(i)", 0o700) == 0 ? 0 : errno
                }
                #expect(results == (persistent ? [0, ENOSPC, ENOSPC, ENOSPC] : [0, ENOSPC, 0, 0]))
                #expect(injector.disarm() == (persistent ? 3 : 1))
            }
        }
    }

    /// Replacing a twin the write and read paths call themselves (`openat`, `renameat`,
    /// `faccessat`) sends those calls through it; the real file system keeps calling directly.
    @Test func replacingAnEntryTwinSendsTheEntryCallsThroughIt() {
        #expect(FileSystem.posix.makesEntryCallsDirectly)
        var other = FileSystem.posix
        other.unlinkAt = { _, _, _ in -1 }
        other.mkdirAt = { _, _, _ in -1 }
        #expect(other.makesEntryCallsDirectly)
        for replace in ["openAt", "renameAt", "accessAt"] {
            var fs = FileSystem.posix
            switch replace {
            case "openAt": fs.openAt = { _, _, _, _ in -1 }
            case "renameAt": fs.renameAt = { _, _, _, _ in -1 }
            default: fs.accessAt = { _, _, _ in -1 }
            }
            #expect(!fs.makesEntryCallsDirectly, "\(replace)")
            #expect(fs.allowsRootRelativeCalls, "\(replace)")
        }
        #expect(FaultInjector(mode: .rootRelative).fileSystem.allowsRootRelativeCalls)
        #expect(!FaultInjector(mode: .path).fileSystem.allowsRootRelativeCalls)
    }

    /// Through the root's descriptor, a store's entry `renameat` (a write's) and `openat` (a
    /// read's) meet the injected faults, and short writes are completed.
    @Test func failsTheEntryCallsAStoreMakesBelowItsRoot() throws {
        try withTemporaryDirectory { dir throws in
            let injector = FaultInjector(mode: .rootRelative)
            let store = try DiskStore.open(at: dir, fileSystem: injector.fileSystem)
            try #require(store.root != nil)
            let key = DiskKey(folder: FolderPath(["a"]), name: EntryName(parameter: "p"))
            func write(_ text: String) throws {
                try store.write(Data(text.utf8), to: key, typeName: "t", parameter: "p", expiry: nil, durability: .none)
            }
            func read() throws -> String? {
                try store.read(key, typeName: "t", parameter: "p") { String(decoding: $0.payloadBytes, as: UTF8.self) }
            }
            try write("old")
            injector.arm(.init(operation: .rename, n: 1, persistent: false, errno: EIO))
            #expect(throws: StorageError.self) { try write("new") }
            #expect(injector.disarm() == 1)
            // The read's `openat` failing in the store's own (linked) root is final: not asked of
            // the whole path again, where another folder may stand.
            injector.arm(.init(operation: .open, n: 1, persistent: false, errno: EACCES))
            let error = #expect(throws: StorageError.self) { try read() }
            #expect(error?.code == .permissionDenied)
            #expect(injector.disarm() == 1)
            #expect(try read() == "old")
            injector.arm(.init(operation: .shortWrite, n: 1, persistent: true, errno: 0))
            try write(String(repeating: "n", count: 5_000))
            #expect(injector.disarm() > 2)
            #expect(try read() == String(repeating: "n", count: 5_000))
        }
    }

    @Test func seesDescriptorsLeftOpen() throws {
        try withTemporaryDirectory { dir throws in
            let injector = FaultInjector()
            let fd = injector.fileSystem.open(dir.path + "/file", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            #expect(injector.openDescriptors == [fd])
            #if os(Linux)
            #expect(openDescriptors(under: dir).count == 1)
            #endif
            _ = injector.fileSystem.close(fd)
            #expect(injector.openDescriptors.isEmpty)
            #expect(openDescriptors(under: dir).isEmpty)
        }
    }
}
