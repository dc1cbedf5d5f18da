import Foundation
import NIOCore
import Synchronization

/// How many store notifications are verified at once: fewer than the processors, so that a storm of
/// notifications (Apple renewing a paper's subscribers at midnight) never takes every processor from the
/// calls readers are waiting for. Verifications past the limit wait in arrival order; a cancelled one stops
/// waiting. Verifying an App Store notification is three ES256 signatures, three certificate chains and the
/// JSON around them: the one store work that uses a processor rather than waiting on a network.
public final class VerificationLimit: Sendable {
    /// Verifications at once.
    public let limit: Int

    private struct State {
        var running = 0
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// `limit` at once; at least one.
    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// One fewer than the processors, at least one.
    public static func belowProcessors() -> VerificationLimit {
        VerificationLimit(limit: System.coreCount - 1)
    }

    /// Runs `work` once fewer than `limit` others run.
    public func run<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await work()
    }

    private func acquire() async throws {
        let id: UInt64? = state.withLock { state in
            if state.running < limit {
                state.running += 1
                return nil
            }
            state.nextID &+= 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.waiting.append((id, continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Hands the place to the first waiter, or frees it.
    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }
}
