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
/// or `ftruncate` after ``arm(_:)``, once or from then on, with a chosen `errno`; or makes the
/// Nth write short (``Operation/shortWrite``). It also tracks the descriptors opened through it.
///
/// An operation counts its root-relative twin too (`openat` is an `open`, `renameat` a
/// `rename`, `unlinkat` an `unlink` or, with `AT_REMOVEDIR`, a `removeDirectory`, `mkdirat` a
/// `mkdir`), and ``Mode`` says which of the two a store makes below its root.
final class FaultInjector: Sendable {
    enum Operation: String, CaseIterable, Sendable {
        case open, write, fsync, rename, renameExclusive, unlink, removeDirectory, mkdir, ftruncate
        /// Not a failure: the `write`, `writev` or `pwrite` writes only the first half of what
        /// it was asked (at least a byte), as a signal or a nearly full disk may make it.
        case shortWrite
    }

    /// How a store given ``fileSystem`` makes its changes below its root.
    enum Mode: String, CaseIterable, Sendable, CustomStringConvertible {
        /// Through the root's descriptor, as in production: the `*at` twins, and the entry
        /// file's own `openat`, `renameat` and `faccessat` (through the twins here, as the
        /// injector replaces them).
        case rootRelative
        /// By whole paths, as a store whose root was removed or could not be opened.
        case path

        var description: String { rawValue }
    }

    /// Which calls a store makes below its root (see ``Mode``).
    let mode: Mode

    init(mode: Mode = .rootRelative) {
        self.mode = mode
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
            let how = operation == .shortWrite ? "" : " with \(String(cString: strerror(errno)))"
            return "\(operation) #\(n) \(persistent ? "from then on" : "once")\(how)"
        }

        /// Whether the store must not report the fault as an error: a write interrupted before
        /// it wrote anything (`EINTR`), or one that wrote only part, is retried (a journal
        /// record cut short counts as one not written, which the next lock holder repairs).
        var isRetried: Bool { operation == .shortWrite || (operation == .write && errno == EINTR) }
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
            if let code = fault(.open) {
                errno = code
                return -1
            }
            let fd = real.open(path, flags, mode)
            if fd >= 0 { state.withLock { _ = $0.openFDs.insert(fd) } }
            return fd
        }
        fs.close = { [self] fd in
            state.withLock { _ = $0.openFDs.remove(fd) }
            return real.close(fd)
        }
        fs.write = { [self] fd, buffer, count in
            if let code = fault(.write) {
                errno = code
                return -1
            }
            return real.write(fd, buffer, count)
        }
        fs.writev = { [self] fd, vectors, count in
            if let code = fault(.write) {
                errno = code
                return -1
            }
            return real.writev(fd, vectors, count)
        }
        fs.pwrite = { [self] fd, buffer, count, offset in
            if let code = fault(.write) {
                errno = code
                return -1
            }
            return real.pwrite(fd, buffer, count, offset)
        }
        fs.fsync = { [self] fd in
            if let code = fault(.fsync) {
                errno = code
                return -1
            }
            return real.fsync(fd)
        }
        fs.fullFsync = { [self] fd in
            if let code = fault(.fsync) {
                errno = code
                return -1
            }
            return real.fullFsync(fd)
        }
        fs.rename = { [self] from, to in
            if let code = fault(.rename) {
                errno = code
                return -1
            }
            return real.rename(from, to)
        }
        fs.renameExclusive = { [self] fromFolder, from, toFolder, to in
            if let code = fault(.renameExclusive) {
                errno = code
                return -1
            }
            return real.renameExclusive(fromFolder, from, toFolder, to)
        }
        fs.removeDirectory = { [self] path in
            if let code = fault(.removeDirectory) {
                errno = code
                return -1
            }
            return real.removeDirectory(path)
        }
        fs.unlink = { [self] path in
            if let code = fault(.unlink) {
                errno = code
                return -1
            }
            return real.unlink(path)
        }
        fs.mkdir = { [self] path, mode in
            if let code = fault(.mkdir) {
                errno = code
                return -1
            }
            return real.mkdir(path, mode)
        }
        fs.ftruncate = { [self] fd, length in
            if let code = fault(.ftruncate) {
                errno = code
                return -1
            }
            return real.ftruncate(fd, length)
        }
        installRootRelativeTwins(on: &fs, over: real)
        installShortWrites(on: &fs)
        return mode == .rootRelative ? fs.allowingRootRelativeCalls() : fs
    }

    /// The root-relative twins, failing as their path calls do.
    private func installRootRelativeTwins(on fs: inout FileSystem, over real: FileSystem) {
        fs.openAt = { [self] folder, path, flags, mode in
            if let code = fault(.open) {
                errno = code
                return -1
            }
            let fd = real.openAt(folder, path, flags, mode)
            if fd >= 0 { state.withLock { _ = $0.openFDs.insert(fd) } }
            return fd
        }
        fs.renameAt = { [self] fromFolder, from, toFolder, to in
            if let code = fault(.rename) {
                errno = code
                return -1
            }
            return real.renameAt(fromFolder, from, toFolder, to)
        }
        fs.unlinkAt = { [self] folder, path, flags in
            if let code = fault(flags & AT_REMOVEDIR != 0 ? .removeDirectory : .unlink) {
                errno = code
                return -1
            }
            return real.unlinkAt(folder, path, flags)
        }
        fs.mkdirAt = { [self] folder, path, mode in
            if let code = fault(.mkdir) {
                errno = code
                return -1
            }
            return real.mkdirAt(folder, path, mode)
        }
        fs.accessAt = real.accessAt  // not failed; replaced so the entry's check goes through it
    }

    /// ``Operation/shortWrite``, over the writes installed before.
    private func installShortWrites(on fs: inout FileSystem) {
        let (write, writev, pwrite) = (fs.write, fs.writev, fs.pwrite)
        @Sendable func short(_ count: Int) -> Int { count > 1 ? count / 2 : count }
        fs.write = { [self] fd, buffer, count in
            write(fd, buffer, fault(.shortWrite) == nil ? count : short(count))
        }
        fs.writev = { [self] fd, vectors, count in
            guard count > 0, fault(.shortWrite) != nil else { return writev(fd, vectors, count) }
            var first = vectors[0]  // half of the first buffer
            first.iov_len = short(first.iov_len)
            return writev(fd, &first, 1)
        }
        fs.pwrite = { [self] fd, buffer, count, offset in
            pwrite(fd, buffer, fault(.shortWrite) == nil ? count : short(count), offset)
        }
    }

    /// Every plan the sweeps try for one N: each operation, once and from then on, with each
    /// of `errnos` (EIO, ENOSPC and EACCES unless told).
    static func plans(n: Int, errnos: [Int32] = [EIO, ENOSPC, EACCES]) -> [Plan] {
        Operation.allCases.filter { $0 != .shortWrite }.flatMap { operation in
            [false, true].flatMap { persistent in
                errnos.map { Plan(operation: operation, n: n, persistent: persistent, errno: $0) }
            }
        }
    }

    /// The plans of calls the store must retry, not fail (``Plan/isRetried``): a write
    /// interrupted once (`EINTR`: from then on, a retry would never end), and short writes,
    /// once and from then on.
    static func retriedPlans(n: Int) -> [Plan] {
        [Plan(operation: .write, n: n, persistent: false, errno: EINTR)]
            + [false, true].map { Plan(operation: .shortWrite, n: n, persistent: $0, errno: 0) }
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
            target.hasPrefix(prefix)
        else { return nil }
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
