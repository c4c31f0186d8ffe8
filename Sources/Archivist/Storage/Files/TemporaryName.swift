#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names of temporary files that say which process owns them, so that a sweep run by one
/// process never deletes a temporary another live process is still writing.
///
/// Several processes may share one cache root or store folder (an app and its extensions in
/// an app-group container, several workers of a service). Each one's atomic writes create
/// temporaries in the shared folders; a process that opens the folder after a crash sweeps
/// the leftovers. A name is
///
///     .tmp-<pid>.<namespace>.<incarnation>.<counter>      (lowercase hex fields)
///
/// where `namespace` identifies the PID namespace on Linux (0 elsewhere) and `incarnation` is
/// a random number drawn once per process, so that a process whose PID was reused is told apart
/// from its predecessor. A temporary is *abandoned* — safe to delete — when:
/// - it is older than ``abandonAge`` whatever its name (no write takes that long), or
/// - its owner is in this PID namespace and is not alive (`kill(pid, 0)` fails with `ESRCH`;
///   not asked on iOS, tvOS, watchOS and visionOS, whose sandbox answers signals), or
/// - its owner has this process's PID in this namespace but another incarnation: it was the
///   process that held the PID before us, so it is dead.
/// A temporary of this very process, or of a live process, or of another namespace, is kept
/// until it is ``abandonAge`` old. Names in the older random-hex form are judged by age only.
///
/// Making a name costs no system call: a per-process counter replaces the random suffix.
package enum TemporaryName {
    /// A temporary older than this is abandoned whoever made it: ten minutes, far longer than
    /// any single write takes, and short enough that a temporary of a process whose PID was
    /// reused does not linger.
    package static let abandonAge: Double = 600

    /// A fresh temporary file name (no folder), unique within this process.
    package static func make() -> String {
        let serial = counter.withLock { value -> UInt64 in
            value &+= 1
            return value
        }
        return ownerPrefix + String(serial, radix: 16)
    }

    /// `folder/` followed by a fresh name from ``make()``, built in one allocation.
    /// The bytes are copied into the new string directly, the counter's hex digits written in
    /// place: appending the pieces (and the name's own string) makes every write pay for
    /// several allocations and copies (the `cache-manager` suite's 1 KB set guards it).
    package static func path(inFolder folder: String) -> String {
        var folder = folder
        return folder.withUTF8 { path(inFolder: $0) }
    }

    /// A fresh temporary's path in the folder of the file at `path` (everything before its
    /// last `/`), without making a string of the folder; `nil` when `path` has no `/`.
    package static func path(besideFileAt path: String) -> String? {
        var path = path
        return path.withUTF8 { bytes in
            guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return nil }
            return Self.path(inFolder: UnsafeBufferPointer(rebasing: bytes[..<slash]))
        }
    }

    /// ``path(inFolder:)`` for the folder's UTF-8 bytes.
    private static func path(inFolder folder: UnsafeBufferPointer<UInt8>) -> String {
        let serial = counter.withLock { value -> UInt64 in
            value &+= 1
            return value
        }
        var prefix = ownerPrefix
        return prefix.withUTF8 { prefix in
            String(unsafeUninitializedCapacity: folder.count + 1 + prefix.count + 16) { out in
                var at = 0
                out.put(folder, at: &at)
                out[at] = UInt8(ascii: "/")
                at += 1
                out.put(prefix, at: &at)
                // Lowercase hex without leading zeros, as `String(serial, radix: 16)`.
                let digits = max(1, (64 - serial.leadingZeroBitCount + 3) / 4)
                for i in 0..<digits {
                    let nibble = UInt8(truncatingIfNeeded: serial >> (UInt64(digits - 1 - i) * 4)) & 0x0F
                    out[at + i] = nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
                }
                return at + digits
            }
        }
    }

    /// Whether the temporary `name`, last modified at `modified` (seconds since 1970), may be
    /// deleted: see the type's discussion.
    ///
    /// - Complexity: O(1); at most one `kill(pid, 0)` system call.
    package static func isAbandoned(_ name: Substring, modified: Double, now: Double = currentTime()) -> Bool {
        if now - modified > abandonAge { return true }
        guard let owner = Owner(name: name), owner.namespace == identity.namespace else { return false }
        if owner.pid == identity.pid { return owner.incarnation != identity.incarnation }
        return isGone(owner.pid)
    }

    /// Whether `owner` is known to be dead: another incarnation of this process's PID, or a PID
    /// of this namespace with no process (`kill(pid, 0)` fails with `ESRCH`). A process of
    /// another namespace is never judged dead.
    ///
    /// - Complexity: O(1); at most one `kill(pid, 0)` system call.
    package static func isDead(_ owner: Owner) -> Bool {
        guard owner.namespace == identity.namespace else { return false }
        if owner.pid == identity.pid { return owner.incarnation != identity.incarnation }
        return isGone(owner.pid)
    }

    /// Whether no process has `pid`: `kill(pid, 0)` fails with `ESRCH`. On iOS, tvOS,
    /// watchOS and visionOS the sandbox decides what a signal to another app's process (an
    /// extension sharing the container) answers, and whether it ever answers `ESRCH` for a
    /// live one cannot be checked here; there another process's temporary is judged by its age
    /// alone (see docs/Platforms.md).
    private static func isGone(_ pid: pid_t) -> Bool {
        guard judgesOtherProcesses else { return false }
        if kill(pid, 0) == 0 { return false }
        return errno == ESRCH
    }

    /// Whether `kill(pid, 0)` may judge another process of this PID namespace (see
    /// ``isGone(_:)``); where not, their slots and temporaries are judged by age.
    package static var judgesOtherProcesses: Bool {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
        false
        #else
        true
        #endif
    }

    /// Deletes the abandoned temporaries directly inside the folder at `path`, and returns
    /// how many it deleted. Temporaries of live writers, in this process or another, stay.
    ///
    /// - Complexity: O(n) in the folder's entries, one `lstat` per temporary; blocking file
    ///   I/O. Errors are ignored: a folder that cannot be read has nothing to sweep.
    @discardableResult
    package static func sweepAbandoned(
        inFolder path: String,
        fileSystem: FileSystem = .posix,
        below root: AtomicFile.Root? = nil
    ) -> Int {
        guard let dir = DirectoryEntries.open(path, below: root) else { return 0 }
        var names: [String] = []
        while let item = readdir(dir) {
            let name = withUnsafePointer(to: &item.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if AtomicFile.isTemporary(name[...]) { names.append(name) }
        }
        closedir(dir)
        var swept = 0
        let now = currentTime()
        for name in names {
            var status = stat()
            let child = path + "/" + name
            guard lstat(child, below: root, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                isAbandoned(name[...], modified: modificationTime(status), now: now)
            else { continue }
            if fileSystem.unlink(child, below: root) == 0 { swept += 1 }
        }
        return swept
    }

    /// A file's modification time in seconds since 1970.
    package static func modificationTime(_ status: stat) -> Double {
        #if canImport(Darwin)
        seconds(status.st_mtimespec)
        #else
        seconds(status.st_mtim)
        #endif
    }

    /// A file's status change time in seconds since 1970 (a rename sets it: for a claimed
    /// spare folder, when it was claimed).
    package static func changeTime(_ status: stat) -> Double {
        #if canImport(Darwin)
        seconds(status.st_ctimespec)
        #else
        seconds(status.st_ctim)
        #endif
    }

    private static func seconds(_ time: timespec) -> Double {
        Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The wall-clock time in seconds since 1970.
    package static func currentTime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The owner fields of a temporary name made by ``make()``.
    package struct Owner: Equatable {
        /// The process's id, in its PID namespace.
        package var pid: pid_t
        /// Tells PID namespaces apart (containers sharing a volume).
        package var namespace: UInt64
        /// Drawn at random when the process starts, and again in a child forked without
        /// `exec`: tells a reused pid from the process that held it.
        package var incarnation: UInt64

        init(pid: pid_t, namespace: UInt64, incarnation: UInt64) {
            self.pid = pid
            self.namespace = namespace
            self.incarnation = incarnation
        }

        init?(name: Substring) {
            guard name.hasPrefix(AtomicFile.temporaryPrefix) else { return nil }
            let fields = name.dropFirst(AtomicFile.temporaryPrefix.count).split(
                separator: ".",
                omittingEmptySubsequences: false
            )
            guard fields.count == 4, fields.allSatisfy({ $0.count <= 16 }),
                let pid = Int32(fields[0], radix: 16), pid > 0,
                let namespace = UInt64(fields[1], radix: 16),
                let incarnation = UInt64(fields[2], radix: 16),
                UInt64(fields[3], radix: 16) != nil
            else { return nil }
            self.init(pid: pid, namespace: namespace, incarnation: incarnation)
        }
    }

    /// This process's owner fields, drawn once — and again in a child forked without `exec`,
    /// which must not pass for its parent: with the parent's fields its temporaries would
    /// look like the parent's own, and its exit would free the parent's slot in the shared
    /// counters (``SharedCounters/unregister(_:)`` frees only slots of this identity).
    package static var identity: Owner { current.identity }

    /// The prefix every temporary of this process shares.
    package static var ownerPrefix: String { current.prefix }

    /// This process's identity and prefix. Written once by its initializer and then only by
    /// the `pthread_atfork` child handler, which runs in the new process while it has a single
    /// thread; read without a lock on every temporary's name.
    nonisolated(unsafe) private static var current: (identity: Owner, prefix: String) = {
        pthread_atfork(nil, nil) {
            TemporaryName.current = TemporaryName.drawn(namespace: TemporaryName.current.identity.namespace)
        }
        return drawn(namespace: pidNamespace())
    }()

    /// A fresh identity for this process, with its prefix.
    private static func drawn(namespace: UInt64) -> (identity: Owner, prefix: String) {
        let identity = Owner(pid: getpid(), namespace: namespace, incarnation: UInt64.random(in: 1 ... .max))
        let prefix =
            AtomicFile.temporaryPrefix
            + String(identity.pid, radix: 16) + "." + String(identity.namespace, radix: 16) + "."
            + String(identity.incarnation, radix: 16) + "."
        return (identity, prefix)
    }

    private static let counter = Locked<UInt64>(0)

    /// The inode number of this process's PID namespace on Linux (`/proc/self/ns/pid` reads
    /// `pid:[4026531836]`), so that workers in different containers sharing a volume never
    /// judge each other's PIDs; 0 where there are no such namespaces or `/proc` is absent.
    private static func pidNamespace() -> UInt64 {
        #if os(Linux)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/self/ns/pid", &buffer, buffer.count - 1)
        guard count > 0 else { return 0 }
        let text = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let open = text.firstIndex(of: "["), let close = text.lastIndex(of: "]"), open < close else { return 0 }
        return UInt64(text[text.index(after: open)..<close]) ?? 0
        #else
        return 0
        #endif
    }
}
