import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#if canImport(notify)
import notify
#endif
#endif

/// "This store's file changed": raised when a process commits a change to a store, and seen
/// by every process that observes the store, so change streams wake when there is something
/// to read instead of polling for it.
///
/// A signal names one file of a store — a cache root's journal, a record store's change log,
/// a plist (which ``Preferences`` change streams observe):
///
/// - On Apple platforms it is a Darwin notification (`notify_post`,
///   `notify_register_dispatch`) named `archivist.<MD5 hex>` after the folder's device and
///   inode numbers and the file's name, so that every spelling of the folder's path (a
///   symbolic link, `/var` and `/private/var`) gives one name. The writer calls ``post()``
///   once its commit is complete.
/// - On Linux it is `inotify`. The commit's own write to the file (the journal record's
///   `pwrite`, the log entry's `write`, a new log or plist renamed into place) raises the event, so
///   ``post()`` does nothing there; an observer watches the folder for `IN_MODIFY`,
///   `IN_CLOSE_WRITE` and `IN_MOVED_TO` of the file's name. The folder rather than the file,
///   so that a file replaced by a rename is still watched. One inotify instance serves the
///   whole process (Linux allows 128 per user by default).
///
/// On Linux the event arrives while the writer may still hold the store's lock: an observer
/// catches up under the lock, which waits for the writer.
///
/// A signal can be missed: another machine's write to a network volume raises none here, and
/// the system may refuse a watch (``observe(on:_:)`` returns `nil` when the inotify limits are
/// reached). Observers therefore keep a slow poll as a fallback.
///
/// ```swift
/// let signal = ChangeSignal(folder: root + "/.archivist", fileName: "journal")
/// let observation = signal.observe(on: queue) { store.refresh() }
/// signal.post()   // after committing a change
/// ```
package final class ChangeSignal: Sendable {
    /// The folder holding the file.
    package let folder: String
    /// The file's name in ``folder``.
    package let fileName: String
    /// The Darwin notification's name, used on Apple platforms (see
    /// ``notificationName(folder:fileName:)``).
    package let name: String
    /// Whether ``name`` was made from the folder's device and inode numbers, as every writer's
    /// is; `false` when the folder could not be read (it does not exist yet), and the name
    /// fell back to its path, which a writer's signal, made once the folder exists, does not
    /// use: an observer then names the signal again later.
    package let isIdentified: Bool

    /// The signal of the file `fileName` in `folder`.
    ///
    /// - Complexity: One `stat` of the folder.
    package init(folder: String, fileName: String) {
        self.folder = folder
        self.fileName = fileName
        (name, isIdentified) = Self.identifiedName(folder: folder, fileName: fileName)
    }

    /// `archivist.` and the MD5 of the folder's device and inode numbers (its path when it
    /// cannot be read) and the file's name: one name for every spelling of the folder's path.
    ///
    /// ```swift
    /// let name = ChangeSignal.notificationName(folder: "/var/mobile/…/.archivist", fileName: "journal")
    /// ```
    ///
    /// - Complexity: One `stat`.
    package static func notificationName(folder: String, fileName: String) -> String {
        identifiedName(folder: folder, fileName: fileName).name
    }

    /// ``notificationName(folder:fileName:)``, and whether the folder's identity named it.
    private static func identifiedName(folder: String, fileName: String) -> (name: String, isIdentified: Bool) {
        var status = stat()
        let isIdentified = stat(folder, &status) == 0
        let identity = isIdentified ? "\(status.st_dev):\(status.st_ino)" : folder
        return ("archivist." + MD5.hexDigest(of: identity + "/" + fileName), isIdentified)
    }

    /// Tells the processes observing the file that a change was committed. Call it after the
    /// commit, once the store's lock is released.
    ///
    /// ```swift
    /// signal.post()
    /// ```
    ///
    /// - Complexity: One message to `notifyd` on Apple platforms; nothing on Linux, where the
    ///   commit's write to the file is the signal.
    package func post() {
        #if canImport(Darwin)
        _ = notify_post(name)
        #endif
    }

    /// Calls `handler` on `queue` after each change to the file, by any process (this one
    /// included), until the observation is cancelled or released. Several changes in quick
    /// succession may wake it once.
    ///
    /// ```swift
    /// let observation = signal.observe(on: queue) { store.refresh() }
    /// ```
    ///
    /// - Returns: The observation, or `nil` when the system refuses one (the inotify limits,
    ///   a folder that cannot be watched): poll instead.
    /// - Complexity: One registration with `notifyd`, or one `inotify_add_watch`.
    package func observe(on queue: DispatchQueue, _ handler: @escaping @Sendable () -> Void) -> Observation? {
        #if canImport(Darwin)
        var token: Int32 = NOTIFY_TOKEN_INVALID
        let status = notify_register_dispatch(name, &token, queue) { _ in handler() }
        guard status == UInt32(NOTIFY_STATUS_OK) else { return nil }
        let registered = token
        return Observation { _ = notify_cancel(registered) }
        #elseif canImport(Glibc)
        guard let inotify = Inotify.instance(),
            let watch = inotify.add(folder: folder, fileName: fileName, queue: queue, handler: handler)
        else { return nil }
        return Observation { inotify.remove(watch) }
        #else
        return nil
        #endif
    }

    /// A registration made by ``ChangeSignal/observe(on:_:)``; cancelled by ``cancel()`` or
    /// when released.
    ///
    /// ```swift
    /// observation.cancel()
    /// ```
    package final class Observation: Sendable {
        private let cancellation: Locked<(@Sendable () -> Void)?>

        init(cancel: @escaping @Sendable () -> Void) {
            cancellation = Locked(cancel)
        }

        /// Ends the observation; the handler is not called for changes after this returns
        /// (one already queued may still run).
        ///
        /// - Complexity: One call to `notifyd` or one `inotify_rm_watch`, the first time.
        package func cancel() {
            let cancel = cancellation.withLock { cancel -> (@Sendable () -> Void)? in
                defer { cancel = nil }
                return cancel
            }
            cancel?()
        }

        deinit { cancel() }
    }
}

#if canImport(Glibc)
/// The process's one inotify instance, shared by every ``ChangeSignal`` observation: the
/// kernel allows few instances per user (128 by default) but many watches (8,192 or more).
///
/// Watches are by folder; observers of one folder (two stores' signals, or two observations of
/// one) share the kernel's watch descriptor, which is removed with its last observer.
private final class Inotify: @unchecked Sendable {
    // Safety: `watches` and `nextToken` are read and written only under `lock`; `fd` and
    // `source` are set in `init` and never change.

    /// One observer of a folder's watch.
    struct Listener {
        var fileName: String
        var queue: DispatchQueue
        var handler: @Sendable () -> Void
    }

    /// An observer's place: the folder's watch descriptor and the observer's token.
    struct Watch {
        var descriptor: Int32
        var token: UInt64
    }

    /// The instance, made on first use (and tried again after a refusal). Never released: its
    /// read source lives as long as the process.
    private static let shared = Locked<Inotify?>(nil)

    static func instance() -> Inotify? {
        shared.withLock { shared in
            if shared == nil { shared = Inotify() }
            return shared
        }
    }

    private static let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO)
    private let fd: Int32
    private let source: DispatchSourceRead
    private let lock = Lock()
    private var watches: [Int32: [UInt64: Listener]] = [:]
    private var nextToken: UInt64 = 0

    private init?() {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        source = DispatchSource.makeReadSource(
            fileDescriptor: fd,
            queue: DispatchQueue(label: "Archivist.ChangeSignal", qos: .utility)
        )
        source.setEventHandler { [self] in drain() }
        source.resume()
    }

    /// Starts calling `handler` on `queue` for changes to `fileName` in `folder`.
    ///
    /// - Returns: `nil` when the kernel refuses the watch (`ENOSPC`: the watch limit;
    ///   `ENOENT`, `EACCES`).
    func add(folder: String, fileName: String, queue: DispatchQueue, handler: @escaping @Sendable () -> Void) -> Watch?
    {
        lock.withLock {
            // Under the lock: a descriptor shared with another observer is not removed meanwhile.
            let descriptor = inotify_add_watch(fd, folder, Self.mask)
            guard descriptor >= 0 else { return nil }
            nextToken += 1
            watches[descriptor, default: [:]][nextToken] = Listener(fileName: fileName, queue: queue, handler: handler)
            return Watch(descriptor: descriptor, token: nextToken)
        }
    }

    /// Stops `watch`'s observer; removes the folder's watch with its last observer.
    func remove(_ watch: Watch) {
        lock.withLock {
            guard var listeners = watches[watch.descriptor] else { return }  // the kernel dropped it
            listeners[watch.token] = nil
            if listeners.isEmpty {
                watches[watch.descriptor] = nil
                _ = inotify_rm_watch(fd, watch.descriptor)
            } else {
                watches[watch.descriptor] = listeners
            }
        }
    }

    /// Reads every queued event and wakes each observer whose file they name, once.
    private func drain() {
        var named: Set<Named> = []
        var overflowed = false
        var dropped: [Int32] = []
        let capacity = 8_192
        withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 8) { buffer in
            while true {
                let count = read(fd, buffer.baseAddress, capacity)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }  // EAGAIN: nothing more queued
                var at = 0
                // Each event: wd (i32), mask (u32), cookie (u32), len (u32), then len bytes of
                // name, padded with NULs.
                while count - at >= 16 {
                    let descriptor = buffer.loadUnaligned(fromByteOffset: at, as: Int32.self)
                    let mask = buffer.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self)
                    let length = Int(buffer.loadUnaligned(fromByteOffset: at + 12, as: UInt32.self))
                    let end = min(at + 16 + length, count)
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        overflowed = true
                    } else if mask & UInt32(IN_IGNORED) != 0 {
                        dropped.append(descriptor)
                    } else {
                        let bytes = UnsafeRawBufferPointer(rebasing: buffer[(at + 16)..<end])
                        named.insert(
                            Named(
                                descriptor: descriptor,
                                name: String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                            )
                        )
                    }
                    at = end
                }
            }
        }
        let woken = lock.withLock { () -> [Listener] in
            var woken: [Listener] = []
            for (descriptor, listeners) in watches {
                for listener in listeners.values
                where overflowed || named.contains(Named(descriptor: descriptor, name: listener.fileName)) {
                    woken.append(listener)
                }
            }
            // The folder went away (or the watch was removed): its observers fall back to polling.
            for descriptor in dropped { watches[descriptor] = nil }
            return woken
        }
        for listener in woken { listener.queue.async(execute: listener.handler) }
    }

    /// A file named by an event of a watch.
    private struct Named: Hashable {
        var descriptor: Int32
        var name: String
    }
}
#endif
