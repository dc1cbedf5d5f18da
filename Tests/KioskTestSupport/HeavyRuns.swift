/// The suites that run several server processes under a timed load (the cluster, the purchases end to end)
/// take turns: two of them at once on a 2-core machine starve each other's "seen at once" checks.
public actor HeavyRuns {
    public static let shared = HeavyRuns()
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` when no other heavy run is running.
    public func exclusive<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        }
        busy = true
        defer {
            if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
        }
        return try await body()
    }
}
