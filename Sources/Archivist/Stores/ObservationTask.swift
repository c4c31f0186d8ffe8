/// The task that keeps an observable model (``ObservedPreference``, ``ObservedRecords``) up to
/// date, cancellable from the model's `deinit`.
///
/// A `@MainActor` class's `deinit` is nonisolated (an isolated `deinit` needs a newer OS on
/// Apple platforms than the models do), so it cannot touch the class's isolated state. This
/// box is `Sendable` and held in a `let`, which a nonisolated `deinit` may use. The task is
/// handed over once the model is initialized, because the task captures the model (weakly).
final class ObservationTask: Sendable {
    private let task = Locked<Task<Void, Never>?>(nil)

    /// Keeps `task`, to be cancelled by ``cancel()``.
    func start(_ task: Task<Void, Never>) {
        self.task.withLock { $0 = task }
    }

    /// Cancels the task, which ends its iteration of a change stream and so the stream's
    /// signal observation and polling.
    func cancel() {
        task.withLock { $0 }?.cancel()
    }
}
