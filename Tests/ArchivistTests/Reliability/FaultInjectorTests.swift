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
