/// Whether `condition` holds within `timeout`, checked every 10 ms; the main actor runs other
/// work (the observing tasks of the models under test) between checks.
@MainActor func eventually(within timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout  // a bound for a busy machine, not a wait
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}
