import Dispatch
import Foundation
import Testing

@testable import Archivist

/// `BackgroundActivity`: library-started work holds the platform's background-task assertion
/// while it runs and sees when its time is up. The starters here act as
/// `performExpiringActivity(withReason:using:)` does: the block runs on another thread, once
/// with `false`, and once more with `true` when the time is up (or only that, when no time
/// could be had).
@Suite struct BackgroundActivityTests {
    /// The activity's block as a starter received it, to call as the system would.
    final class StartedBlock: Sendable {
        let block = Locked<(@Sendable (Bool) -> Void)?>(nil)
        let reason = Locked("")
        let returned = DispatchSemaphore(value: 0)

        /// A starter that runs the block with `false` on another thread, as the system does,
        /// and keeps it for the test to call again.
        var starter: BackgroundActivity.Starter {
            { [self] reason, block in
                self.reason.withLock { $0 = reason }
                self.block.withLock { $0 = block }
                DispatchQueue.global().async {
                    block(false)
                    self.returned.signal()
                }
            }
        }

        func expire() { block.withLock { $0 }?(true) }
    }

    @Test func withoutAStarterTheWorkJustRuns() {
        let result = BackgroundActivity.run("work", starter: nil) { activity in
            #expect(!activity.isExpiring)
            return 42
        }
        #expect(result == 42)
        #expect(BackgroundActivity.platformStarter == nil)  // Linux and macOS: no assertion
    }

    /// The block holds the assertion (does not return) until the work is done, and the work
    /// sees the expiry the system signals while it runs.
    @Test func theAssertionLastsUntilTheWorkEndsAndExpiryIsSeen() {
        let started = StartedBlock()
        BackgroundActivity.run("Archivist: test", starter: started.starter) { activity in
            #expect(!activity.isExpiring)
            #expect(started.returned.wait(timeout: .now()) == .timedOut)  // still held
            started.expire()
            #expect(activity.isExpiring)
        }
        started.returned.wait()  // released once the work ended
        #expect(started.reason.withLock { $0 } == "Archivist: test")
    }

    /// When no time can be had, the system calls the block once, with `true`: the work sees
    /// it is expiring from its start.
    @Test func anActivityRefusedAtOnceIsExpiringFromTheStart() {
        let refusing: BackgroundActivity.Starter = { _, block in block(true) }
        let stopped = BackgroundActivity.run("refused", starter: refusing) { $0.isExpiring }
        #expect(stopped)
    }
}
