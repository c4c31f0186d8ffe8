import ArchivistTestSupport
import Foundation
@testable import Archivist
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``FileSystem`` over the real one that fails one chosen call: the Nth `open`, `write`
/// (or `pwrite`), `fsync`, `rename`, `renameExclusive`, `unlink`, `removeDirectory`, `mkdir`
/// or `ftruncate` after ``arm(_:)``, once or from then on, with a chosen `errno`. It also tracks the descriptors opened through it.
final class FaultInjector: Sendable {
    enum Operation: String, CaseIterable, Sendable {
        case open, write, fsync, rename, renameExclusive, unlink, removeDirectory, mkdir, ftruncate
    }

    /// Which call fails, and how.
    struct Plan: Sendable, CustomStringConvertible {
        var operation: Operation
        /// 1 fails the first call after arming.
        var n: Int
        /// Whether every call from the Nth on fails, or only the Nth.
        var persistent: Bool
        var errno: Int32

        var description: String {
            "\(operation) #\(n) \(persistent ? "from then on" : "once") with \(String(cString: strerror(errno)))"
        }
    }

    private struct State {
        var plan: Plan?
        var calls = 0
        var injected = 0
        var openFDs: Set<Int32> = []
    }

    private let state = Locked(State())

    /// Starts counting calls of `plan.operation` and failing them as planned.
    func arm(_ plan: Plan) {
        state.withLock {
            $0.plan = plan
            $0.calls = 0
            $0.injected = 0
        }
    }

    /// Stops failing; returns how many calls were failed since ``arm(_:)``.
    @discardableResult
    func disarm() -> Int {
        state.withLock {
            $0.plan = nil
            return $0.injected
        }
    }

    /// Descriptors opened through this file system and not closed yet.
    var openDescriptors: Set<Int32> { state.withLock { $0.openFDs } }

    /// The errno to fail this call with, or nil to let it through.
    private func fault(_ operation: Operation) -> Int32? {
        state.withLock { state in
            guard let plan = state.plan, plan.operation == operation else { return nil }
            state.calls += 1
            guard state.calls == plan.n || (plan.persistent && state.calls > plan.n) else { return nil }
            state.injected += 1
            return plan.errno
        }
    }

    /// The file system to hand to a store.
    var fileSystem: FileSystem {
        let real = FileSystem.posix
        var fs = real
        fs.open = { [self] path, flags, mode in
            if let code = fault(.open) { errno = code; return -1 }
            let fd = real.open(path, flags, mode)
            if fd >= 0 { state.withLock { _ = $0.openFDs.insert(fd) } }
            return fd
        }
        fs.close = { [self] fd in
            state.withLock { _ = $0.openFDs.remove(fd) }
            return real.close(fd)
        }
        fs.write = { [self] fd, buffer, count in
            if let code = fault(.write) { errno = code; return -1 }
            return real.write(fd, buffer, count)
        }
        fs.writev = { [self] fd, vectors, count in
            if let code = fault(.write) { errno = code; return -1 }
            return real.writev(fd, vectors, count)
        }
        fs.pwrite = { [self] fd, buffer, count, offset in
            if let code = fault(.write) { errno = code; return -1 }
            return real.pwrite(fd, buffer, count, offset)
        }
        fs.fsync = { [self] fd in
            if let code = fault(.fsync) { errno = code; return -1 }
            return real.fsync(fd)
        }
        fs.rename = { [self] from, to in
            if let code = fault(.rename) { errno = code; return -1 }
            return real.rename(from, to)
        }
        fs.renameExclusive = { [self] fromFolder, from, toFolder, to in
            if let code = fault(.renameExclusive) { errno = code; return -1 }
            return real.renameExclusive(fromFolder, from, toFolder, to)
        }
        fs.removeDirectory = { [self] path in
            if let code = fault(.removeDirectory) { errno = code; return -1 }
            return real.removeDirectory(path)
        }
        fs.unlink = { [self] path in
            if let code = fault(.unlink) { errno = code; return -1 }
            return real.unlink(path)
        }
        fs.mkdir = { [self] path, mode in
            if let code = fault(.mkdir) { errno = code; return -1 }
            return real.mkdir(path, mode)
        }
        fs.ftruncate = { [self] fd, length in
            if let code = fault(.ftruncate) { errno = code; return -1 }
            return real.ftruncate(fd, length)
        }
        return fs
    }

    /// Every plan the sweeps try for one N: each operation, once and from then on, with EIO,
    /// ENOSPC and EACCES.
    static func plans(n: Int) -> [Plan] {
        Operation.allCases.flatMap { operation in
            [false, true].flatMap { persistent in
                [EIO, ENOSPC, EACCES].map { Plan(operation: operation, n: n, persistent: persistent, errno: $0) }
            }
        }
    }

    /// Runs `body` for N = 1, 2, … with `plan(N)` until a run injects no fault (the operation
    /// then ran clean), as SQLite's fault tests do. Returns the faults injected.
    static func sweep(_ plan: (Int) -> Plan, limit: Int = 200, _ body: (Plan) throws -> Int) rethrows -> Int {
        var total = 0
        for n in 1...limit {
            let injected = try body(plan(n))
            if injected == 0 { return total }
            total += injected
        }
        return total
    }
}

/// The descriptors this process has open on files under `folder`, from /proc/self/fd, once
/// none is left or after two seconds: a store's delayed index save may hold the last
/// reference for a moment, so its descriptor closes on that thread a little later.
func openDescriptors(under folder: URL) -> [String] {
    let deadline = ContinuousClock.now + .seconds(2)
    var open = openDescriptorsNow(under: folder)
    while !open.isEmpty && ContinuousClock.now < deadline {
        usleep(1_000)
        open = openDescriptorsNow(under: folder)
    }
    return open
}

private func openDescriptorsNow(under folder: URL) -> [String] {
    let prefix = folder.standardizedFileURL.resolvingSymlinksInPath().path + "/"
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return [] }
    return names.compactMap { name in
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name),
              target.hasPrefix(prefix) else { return nil }
        return target
    }
}

/// The `CacheError` code a failed call with `errno` maps to.
func cacheCode(for code: Int32) -> CacheError.Code {
    switch code {
    case EACCES, EPERM: .permissionDenied
    case ENOSPC: .diskFull
    default: .fileSystem
    }
}

/// The `StoreError` code a failed call with `errno` maps to.
func storeCode(for code: Int32) -> StoreError.Code {
    switch code {
    case EACCES, EPERM: .permissionDenied
    case ENOSPC: .noSpace
    default: .ioFailed
    }
}

/// Temporaries left anywhere under `folder`.
func temporaries(under folder: URL) -> [String] {
    allPaths(under: folder).filter { path in
        AtomicFile.isTemporary(path.split(separator: "/").last ?? "")
    }
}
