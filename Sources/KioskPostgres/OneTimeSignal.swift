import Synchronization

/// Something that happens once (the pool started, the schema migrated), awaited by any number of tasks;
/// a waiting task that is cancelled stops waiting.
final class OneTimeSignal: Sendable {
    private enum State {
        case waiting(waiters: [Int: CheckedContinuation<Void, Never>], cancelled: Set<Int>, next: Int)
        case signalled
    }
    private let state = Mutex(State.waiting(waiters: [:], cancelled: [], next: 0))

    /// Wakes every waiter, now and later.
    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard case .waiting(let waiters, _, _) = state else { return [] }
            state = .signalled
            return Array(waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once signalled, or once the task is cancelled.
    func wait() async {
        let id = state.withLock { state -> Int? in
            guard case .waiting(let waiters, let cancelled, let next) = state else { return nil }
            state = .waiting(waiters: waiters, cancelled: cancelled, next: next + 1)
            return next
        }
        guard let id else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    guard case .waiting(var waiters, var cancelled, let next) = state else { return true }
                    if cancelled.remove(id) != nil {
                        state = .waiting(waiters: waiters, cancelled: cancelled, next: next)
                        return true
                    }
                    waiters[id] = continuation
                    state = .waiting(waiters: waiters, cancelled: cancelled, next: next)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard case .waiting(var waiters, var cancelled, let next) = state else { return nil }
                let waiter = waiters.removeValue(forKey: id)
                if waiter == nil { cancelled.insert(id) }
                state = .waiting(waiters: waiters, cancelled: cancelled, next: next)
                return waiter
            }
            waiter?.resume()
        }
    }
}
