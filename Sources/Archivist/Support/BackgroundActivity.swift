import Dispatch
import Foundation

/// Work the library starts by itself — emptying a store's trash after a clear or an open, a
/// rescan that repairs the size index — run inside the platform's background-task assertion
/// where apps get suspended, so it can finish, or stop at a safe point, before the app is.
///
/// On iOS, tvOS, watchOS and visionOS the work runs under
/// `ProcessInfo.performExpiringActivity(withReason:using:)` (Foundation; no UIKit needed):
/// the system keeps the process running while the work goes on, and says when its time is
/// up, which ``isExpiring`` then reports. Work that takes the store's file locks checks it
/// between batches and stops there, every lock released, rather than be suspended holding
/// one (iOS terminates a suspended app that holds a file lock in a shared container,
/// `0xdead10cc`). On Linux and macOS, which do not suspend processes that way, the work just
/// runs and ``isExpiring`` stays `false`.
///
/// The work runs on the calling thread; the activity's block only holds the assertion until
/// the work is done.
///
/// ```swift
/// BackgroundActivity.run("Archivist: emptying the trash") { activity in
///     while !done && !activity.isExpiring { removeOneBatch() }
/// }
/// ```
package final class BackgroundActivity: Sendable {
    /// Starts an expiring activity the way `performExpiringActivity(withReason:using:)` does:
    /// calls `block` with `false` on another thread to run it, and with `true` — once more, on
    /// yet another thread, or instead when no time could be had — when the time is up.
    package typealias Starter =
        @Sendable (_ reason: String, _ block: @escaping @Sendable (_ expired: Bool) -> Void) -> Void

    /// The platform's activity where apps are suspended; `nil` (the work just runs) elsewhere.
    package static let platformStarter: Starter? = {
        #if canImport(Darwin) && !os(macOS)
        return { reason, block in ProcessInfo.processInfo.performExpiringActivity(withReason: reason, using: block) }
        #else
        return nil
        #endif
    }()

    private let expired = Locked(false)
    /// Signalled when the work is done: the activity's block waits for it, holding the
    /// assertion meanwhile.
    private let finished = DispatchSemaphore(value: 0)

    private init() {}

    /// Whether the system said the time is up: the work should stop at its next safe point.
    ///
    /// - Complexity: O(1).
    package var isExpiring: Bool { expired.withLock { $0 } }

    /// Runs `body` on the calling thread inside an expiring activity named `reason` (started by
    /// `starter`; by default the platform's, none on Linux and macOS), and returns its result.
    ///
    /// - Parameters:
    ///   - reason: What the work is, for the system's debugging output.
    ///   - starter: How to start the activity (a test passes its own).
    ///   - body: The work; it reads ``isExpiring`` between its steps.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` throws.
    /// - Complexity: `body`'s, plus starting the activity.
    package static func run<R>(
        _ reason: String,
        starter: Starter? = platformStarter,
        _ body: (BackgroundActivity) throws -> R
    ) rethrows -> R {
        let activity = BackgroundActivity()
        guard let starter else { return try body(activity) }
        starter(reason) { expired in
            if expired {
                activity.expired.withLock { $0 = true }
            } else {
                activity.finished.wait()  // the assertion lasts until the work is done
            }
        }
        defer { activity.finished.signal() }
        return try body(activity)
    }
}
