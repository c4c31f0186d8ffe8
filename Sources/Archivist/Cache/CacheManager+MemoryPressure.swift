import Foundation

/// Giving memory back: on request, and by itself when the system runs short.
///
/// A manager with a memory tier empties it when UIKit's memory warning is posted
/// (`UIApplication.didReceiveMemoryWarningNotification`, observed on `NotificationCenter`
/// by its name, so the library imports no UIKit), and on Apple platforms also follows the
/// kernel's memory pressure (`DispatchSource.makeMemoryPressureSource`): at `.warning` it
/// drops the least recently used values until half of what it held is left, at `.critical`
/// it drops them all. Values stay on disk; the next read of one decodes it again.
extension CacheManager {
    /// Drops values from the memory tier, least recently used first, until what it holds
    /// stands for at most `bytes` encoded bytes. Disk entries stay.
    ///
    /// The memory tier's limits stay as configured: it fills up again as values are read.
    /// On Linux, where no memory warning reaches the process, call it from whatever tells
    /// your service it is short of memory.
    ///
    /// ```swift
    /// cache.trimMemory(to: 1 << 20)   // keep the most recently used megabyte
    /// ```
    ///
    /// - Parameter bytes: The encoded bytes to keep at most; `0` empties the memory tier.
    /// - Complexity: O(e) for e values dropped; no file I/O.
    public func trimMemory(to bytes: Int) {
        memory?.cache.trim(toCost: bytes)
    }

    /// Empties the memory tier. Disk entries stay; the next read of each decodes it again.
    ///
    /// ```swift
    /// cache.removeAllFromMemory()   // the app moved to the background
    /// ```
    ///
    /// - Complexity: O(1) under the memory tier's lock, then O(n) to release the n values.
    public func removeAllFromMemory() {
        memory?.removeAll()
    }
}

/// A manager's observations of memory warnings: they hold its memory tier weakly, and go
/// away with the manager (which owns this watch): the observer is removed and the dispatch
/// sources are cancelled in `deinit`.
final class MemoryPressureWatch: @unchecked Sendable {
    // Safety: every stored property is set in `init` and never changes; `deinit` alone removes
    // the observer and cancels the sources.

    /// UIKit's `UIApplication.didReceiveMemoryWarningNotification`, by its raw name.
    static let memoryWarning = Notification.Name("UIApplicationDidReceiveMemoryWarningNotification")

    private let center: NotificationCenter
    private let observer: any NSObjectProtocol
    #if canImport(Darwin)
    /// The kernel's memory pressure, one source a level so neither handler reads the source.
    private let warning: any DispatchSourceMemoryPressure
    private let critical: any DispatchSourceMemoryPressure
    #endif

    /// Starts watching for memory warnings on behalf of `tier`.
    ///
    /// - Parameter center: Where UIKit posts its memory warning: `NotificationCenter.default`
    ///   (tests pass one of their own).
    init(tier: MemoryTier, center: NotificationCenter) {
        self.center = center
        observer = center.addObserver(forName: Self.memoryWarning, object: nil, queue: nil) { [weak tier] _ in
            tier?.removeAll()
        }
        #if canImport(Darwin)
        let queue = DispatchQueue.global(qos: .utility)
        warning = DispatchSource.makeMemoryPressureSource(eventMask: .warning, queue: queue)
        warning.setEventHandler { [weak tier] in
            guard let tier else { return }
            tier.cache.trim(toCost: tier.cache.totalCost / 2)
        }
        critical = DispatchSource.makeMemoryPressureSource(eventMask: .critical, queue: queue)
        critical.setEventHandler { [weak tier] in tier?.removeAll() }
        warning.resume()
        critical.resume()
        #endif
    }

    deinit {
        center.removeObserver(observer)
        #if canImport(Darwin)
        warning.cancel()
        critical.cancel()
        #endif
    }
}

/// Whether this process is an app extension: a widget, notification-service, share or other
/// extension, whose memory the system limits far below an app's (about 24–30 MB for widgets
/// and notification-service extensions) and terminates past the limit.
enum AppExtension {
    /// Decided once, from the main bundle: an extension's is a `.appex` bundle. Never on Linux.
    static let isCurrentProcess: Bool = {
        #if canImport(Darwin)
        return isAppExtension(bundleURL: Bundle.main.bundleURL)
        #else
        return false
        #endif
    }()

    /// Whether the bundle at `bundleURL` is an app extension's.
    ///
    /// - Complexity: O(length of the URL).
    static func isAppExtension(bundleURL: URL) -> Bool {
        bundleURL.pathExtension == "appex"
    }
}
