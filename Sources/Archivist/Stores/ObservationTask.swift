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

    /// Starts the task that calls `update` on the main actor with `model` for each element
    /// of `changes`, holding `model` weakly: the task ends when the model is gone (or on
    /// ``cancel()``), and with it the stream.
    @MainActor
    func follow<Model: AnyObject & Sendable, Element: Sendable>(
        _ changes: AsyncStream<Element>,
        updating model: Model,
        _ update: @escaping @MainActor (Model) -> Void
    ) {
        start(
            Task { @MainActor [weak model] in
                for await _ in changes {
                    guard let model else { return }
                    update(model)
                }
            }
        )
    }

    /// Cancels the task, which ends its iteration of a change stream and so the stream's
    /// signal observation and polling.
    func cancel() {
        task.withLock { $0 }?.cancel()
    }
}
