import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A lock that every thread of this process and every other process opening the same lock
/// file respect: the cross-process half of a store's locking.
///
/// It is built on `flock(2)` on a small lock file, for these reasons:
/// - `flock` locks belong to the open file description, on Linux and on Apple platforms
///   alike, and the kernel drops them when the process dies (even by `kill -9`), so a crashed
///   holder never wedges the others.
/// - Classic `fcntl` record locks belong to the *process* and vanish when any descriptor of
///   the file is closed anywhere in it — unusable inside a library. Linux's open-file-
///   description `fcntl` locks (`F_OFD_SETLKW`) behave like `flock`, but Apple platforms lack
///   them, and we need no byte ranges.
///
/// Threads of one process share the one descriptor, so the kernel cannot tell them apart;
/// an in-process condition does that part: shared holders are counted, the first one takes
/// `LOCK_SH` and the last one releases it; an exclusive holder takes `LOCK_EX` once no thread
/// of this process holds the lock. The exclusive lock is re-entrant on the thread that holds
/// it, and that thread may also run shared sections inside it; a shared holder must not ask
/// for the exclusive lock (no upgrades).
///
/// The kernel lock is held exactly while `body` runs, never while idle — the descriptor
/// itself stays open, which is harmless — and every caller keeps `body` to work that does not
/// grow with the data: iOS terminates an app that is suspended while it holds a file lock in
/// a shared container (`0xdead10cc`). The stores' bodies are a commit (a catch-up, a rename
/// or unlink, one journal record), the short check-and-install of a scan or snapshot made
/// without the lock, a plist's check and rename, a record store's append with its one batch's
/// sync; rescans, snapshot reads and writes, plist syncs and the trash's deletion (which
/// takes its own lock, a batch at a time) run outside (docs/Architecture.md, *What holds a
/// file lock, and for how long*). A short hold can still be caught by a suspension: an app
/// wraps the writes it starts before it may be suspended in a background task.
/// ``longestHold`` and ``holdHistogram`` record how long the holders of this instance kept
/// the kernel lock, for the documentation's figures, the lock-hold tests and the `processes`
/// benchmark (two clock reads and one counter increment per hold).
///
/// On a read-only file system the lock file is opened for reading (`flock` works on such a
/// descriptor); if it does not exist there, no process can write either, so the lock is then
/// taken in this process only.
///
/// ```swift
/// let lock = FileLock(path: folder + "/.lock")
/// try lock.withExclusive { try readModifyWrite() }
/// ```
package final class FileLock {
    /// The lock file's path.
    package let path: String
    private let fileSystem: FileSystem
    /// The folder `path` is opened below (see ``init(path:fileSystem:below:)``).
    private let root: AtomicFile.Root?
    private let condition = NSCondition()
    private var fd: Int32 = -1
    private var opened = false
    private var sharedHolders = 0
    private var exclusiveOwner: pthread_t?
    private var exclusiveDepth = 0
    private var heldSince: UInt64 = 0
    private var holds = LockHoldHistogram()

    /// A lock on the file at `path`, created 0600 (whatever the umask) on first use; opened
    /// below `root` when one is given (the folder its owner holds open, which must stay open
    /// for as long as the lock is used), so that it is the lock of that folder even once the
    /// folder was renamed or another took its path.
    package init(path: String, fileSystem: FileSystem = .posix, below root: AtomicFile.Root? = nil) {
        self.path = path
        self.fileSystem = fileSystem
        self.root = root
    }

    deinit {
        if fd >= 0 { _ = fileSystem.close(fd) }
    }

    /// The longest time, so far, that this instance held the lock file locked.
    package var longestHold: Duration {
        condition.lock()
        defer { condition.unlock() }
        return .nanoseconds(Int64(clamping: holds.longestNanoseconds))
    }

    /// Every hold of the lock file by this instance so far, by duration.
    package var holdHistogram: LockHoldHistogram {
        condition.lock()
        defer { condition.unlock() }
        return holds
    }

    /// Runs `body` while holding the lock exclusively: no other thread or process holds it.
    ///
    /// - Throws: ``StorageError`` when the lock file cannot be opened or locked; otherwise what
    ///   `body` throws, unchanged.
    /// - Complexity: Two system calls (`flock` and its release) around `body`, plus waiting.
    package func withExclusive<R>(_ body: () throws -> R) throws -> R {
        let me = pthread_self()
        condition.lock()
        if let owner = exclusiveOwner, pthread_equal(owner, me) != 0 {
            exclusiveDepth += 1
            condition.unlock()
            defer {
                condition.lock()
                exclusiveDepth -= 1
                condition.unlock()
            }
            return try body()
        }
        while exclusiveOwner != nil || sharedHolders > 0 { condition.wait() }
        do {
            try lockFile(LOCK_EX)  // other threads wait on the condition's mutex meanwhile
        } catch {
            condition.unlock()
            throw error
        }
        exclusiveOwner = me
        exclusiveDepth = 1
        heldSince = Self.now()
        condition.unlock()
        defer {
            condition.lock()
            noteHoldEnded()
            unlockFile()
            exclusiveOwner = nil
            exclusiveDepth = 0
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }

    /// Runs `body` while holding the lock shared: other shared holders may run at once, an
    /// exclusive holder may not.
    ///
    /// - Throws: ``StorageError`` when the lock file cannot be opened or locked; otherwise what
    ///   `body` throws, unchanged.
    /// - Complexity: Two system calls for the first and last of overlapping shared holders.
    package func withShared<R>(_ body: () throws -> R) throws -> R {
        condition.lock()
        // The exclusive holder's thread already excludes everyone: waiting for itself would
        // never end.
        if let owner = exclusiveOwner, pthread_equal(owner, pthread_self()) != 0 {
            condition.unlock()
            return try body()
        }
        while exclusiveOwner != nil { condition.wait() }
        if sharedHolders == 0 {
            do {
                try lockFile(LOCK_SH)
            } catch {
                condition.unlock()
                throw error
            }
            heldSince = Self.now()
        }
        sharedHolders += 1
        condition.unlock()
        defer {
            condition.lock()
            sharedHolders -= 1
            if sharedHolders == 0 {
                noteHoldEnded()
                unlockFile()
                condition.broadcast()
            }
            condition.unlock()
        }
        return try body()
    }

    // MARK: The kernel lock (called with the condition's mutex held)

    private func lockFile(_ operation: Int32) throws {
        try openIfNeeded()
        guard fd >= 0 else { return }  // read-only file system without a lock file
        while fileSystem.flock(fd, operation) != 0 {
            let code = errno
            if code == EINTR { continue }
            throw StorageError.posix("flock", path: path, errno: code)
        }
    }

    private func unlockFile() {
        if fd >= 0 { _ = fileSystem.flock(fd, LOCK_UN) }
    }

    private func openIfNeeded() throws {
        if opened { return }
        var descriptor = fileSystem.openCreatingPrivately(path, O_RDWR | O_CLOEXEC, below: root)
        if descriptor < 0 {
            let code = errno
            guard code == EROFS || code == EACCES else {
                throw StorageError.posix("open lock file", path: path, errno: code)
            }
            descriptor = fileSystem.open(path, O_RDONLY | O_CLOEXEC, 0, below: root)
            if descriptor < 0 {
                let readCode = errno
                // Nothing can write a read-only file system, so nothing needs excluding there.
                guard code == EROFS && readCode == ENOENT else {
                    throw StorageError.posix("open lock file", path: path, errno: code)
                }
            }
        }
        fd = descriptor
        opened = true
    }

    private func noteHoldEnded() {
        holds.record(nanoseconds: Self.now() &- heldSince)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

// Safety: every `var` above is read and written only while `condition` is locked.
extension FileLock: @unchecked Sendable {}
