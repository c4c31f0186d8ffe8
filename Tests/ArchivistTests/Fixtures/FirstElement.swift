import Foundation

/// The first element of `stream` that `isIncluded` accepts, or `nil` when none came within
/// `timeout` (or the stream ended). Iterating stops either way, which ends the stream.
func firstElement<Element: Sendable>(
    of stream: AsyncStream<Element>,
    within timeout: Duration,
    where isIncluded: @escaping @Sendable (Element) -> Bool = { _ in true }
) async -> Element? {
    await withTaskGroup(of: Element?.self) { group in
        group.addTask {
            for await element in stream where isIncluded(element) { return element }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: timeout)  // the deadline, not a wait for the event
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
