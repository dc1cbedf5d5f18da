import Foundation
import KioskModels
import Logging
import ServiceLifecycle
import Synchronization

/// Delivers the outbox's events to webhook endpoints, as a `Service` of the server's group: offers new
/// events to the endpoints (`dispatchEvents`), leases due deliveries (`claimDeliveries`), sends them with
/// bounded concurrency, records each try and what follows it (`WebhookRetries`, `finishDelivery`), and
/// prunes old events now and then. It runs a pass every `interval`, or at once when `wake()` is called, and
/// at once again while there is more work. An error is logged and the pass tried again later (waiting longer
/// while errors repeat, up to `maximumBackoff`); the worker stops only when the service group shuts down,
/// finishing the tries in flight first.
///
/// Several workers (processes, instances) may share a store: each lease names its worker, so no two send the
/// same delivery at once, and a lease that runs out (its worker died) lets another take it.
package final class WebhookWorker: Service, Sendable {
    package struct Options: Sendable {
        /// Time between passes when nothing calls `wake()`.
        package var interval: Duration
        /// How long a claimed delivery stays leased (seconds); longer than the sender's timeout.
        package var leaseSeconds: Int64
        /// Tries in flight at most.
        package var concurrency: Int
        /// Tries in flight to one endpoint at most: an endpoint that does not answer holds only these of the
        /// worker's places, and the others' deliveries go on.
        package var perEndpoint: Int
        /// Events offered to endpoints per store call.
        package var dispatchLimit: Int
        /// Events older than this (seconds) are deleted once every endpoint has been offered them.
        package var keepEventsSeconds: Int64
        /// Time between prunings.
        package var pruneInterval: Duration
        /// Time between backlog reports to the observer.
        package var backlogInterval: Duration
        /// The longest wait after repeated errors.
        package var maximumBackoff: Duration
        /// A pass stops leasing after this long (the next starts at once), so that new events are offered and
        /// the backlog reported while a long backlog drains.
        package var passLength: Duration

        package init(interval: Duration = .seconds(1), leaseSeconds: Int64 = 60, concurrency: Int = 16, dispatchLimit: Int = 500,
                    keepEventsSeconds: Int64 = 30 * 86_400, pruneInterval: Duration = .seconds(3_600),
                    backlogInterval: Duration = .seconds(10), maximumBackoff: Duration = .seconds(30),
                    passLength: Duration = .seconds(10), perEndpoint: Int? = nil) {
            self.interval = interval; self.leaseSeconds = max(leaseSeconds, 1); self.concurrency = max(concurrency, 1)
            self.perEndpoint = max(perEndpoint ?? concurrency / 4, 1)
            self.dispatchLimit = max(dispatchLimit, 1); self.keepEventsSeconds = max(keepEventsSeconds, 0)
            self.pruneInterval = pruneInterval; self.backlogInterval = backlogInterval; self.maximumBackoff = maximumBackoff
            self.passLength = passLength
        }
    }

    /// What one pass did.
    package struct Pass: Sendable, Hashable {
        /// Events offered to endpoints.
        package var dispatched = 0
        /// Tries made.
        package var tried = 0
        /// Tries whose lease had run out, so nothing was recorded (another worker will try again).
        package var leaseLost = 0
        /// Steps that threw (logged).
        package var errors = 0
        /// More work is waiting: the next pass starts at once.
        package var more = false

        package init() {}
    }

    /// This worker's name in the leases it takes.
    package let identity: String
    private let store: any WebhookStore
    private let events: any EventLog
    private let sender: any WebhookSending
    private let retries: WebhookRetries
    private let options: Options
    private let observer: any WebhookObserver
    private let clock: any KioskClock
    private let random: @Sendable () -> Double
    private let logger: Logger
    private let signal = WakeSignal()
    private let schedule = Mutex(Schedule())

    private struct Schedule {
        var lastPrune: ContinuousClock.Instant?
        var lastBacklog: ContinuousClock.Instant?
    }

    package init(store: any WebhookStore, events: any EventLog, sender: any WebhookSending,
                retries: WebhookRetries = WebhookRetries(), options: Options = Options(),
                observer: any WebhookObserver = UnobservedWebhooks(), clock: any KioskClock = SystemClock(),
                identity: String = WebhookWorker.processIdentity,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                logger: Logger = Logger(label: "kiosk.webhooks")) {
        self.store = store; self.events = events; self.sender = sender; self.retries = retries; self.options = options
        self.observer = observer; self.clock = clock; self.identity = identity; self.random = random; self.logger = logger
    }

    /// A name unique to this process: host, process id and a random part.
    package static let processIdentity: String = {
        let random = (0..<4).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        return "\(ProcessInfo.processInfo.hostName)/\(ProcessInfo.processInfo.processIdentifier)/\(random)"
    }()

    /// Starts a pass now (after a local commit that made events), or as soon as the current one ends.
    package func wake() { signal.signal() }

    package func run() async throws {
        logger.info("webhook worker started", metadata: ["worker": "\(identity)"])
        var failures = 0
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let pass = await runPass()
            failures = pass.errors > 0 ? failures + 1 : 0
            if pass.more, failures == 0 { continue }
            let wait = failures == 0 ? options.interval : min(options.interval * (1 << min(failures, 10)), options.maximumBackoff)
            await withGracefulShutdownHandler {
                await signal.wait(upTo: wait)
            } onGracefulShutdown: {
                self.signal.signal()
            }
        }
        logger.info("webhook worker stopped", metadata: ["worker": "\(identity)"])
    }

    /// One pass: prune and report the backlog when due, offer new events, then lease and send due deliveries
    /// until none is left or the service group shuts down. Errors are logged and counted, never thrown.
    package func runPass() async -> Pass {
        var pass = Pass()
        let started = ContinuousClock.now
        let (pruneDue, backlogDue) = schedule.withLock { schedule in
            let prune = schedule.lastPrune.map { $0.duration(to: started) >= options.pruneInterval } ?? true
            let backlog = schedule.lastBacklog.map { $0.duration(to: started) >= options.backlogInterval } ?? true
            if prune { schedule.lastPrune = started }
            if backlog { schedule.lastBacklog = started }
            return (prune, backlog)
        }
        if pruneDue {
            do {
                let pruned = try await events.pruneEvents(before: clock.now - options.keepEventsSeconds)
                if pruned > 0 { logger.info("pruned old events", metadata: ["events": "\(pruned)"]) }
            } catch {
                pass.errors += 1
                logger.error("pruning old events failed; trying again at the next pass", metadata: ["error": "\(error)"])
                schedule.withLock { $0.lastPrune = nil }
            }
        }
        do {
            pass.dispatched = try await store.dispatchEvents(limit: options.dispatchLimit, at: clock.now)
            if pass.dispatched >= options.dispatchLimit { pass.more = true }
        } catch {
            pass.errors += 1
            logger.error("offering events to webhook endpoints failed; trying again shortly", metadata: ["error": "\(error)"])
        }
        await deliverDue(&pass, started: started)
        if backlogDue {
            do {
                let now = clock.now
                let backlog = try await store.deliveryBacklog(at: now)
                observer.webhookBacklog(waiting: backlog.waiting, oldestDueAge: backlog.oldestDue.map { .seconds(max(0, now - $0)) })
            } catch {
                pass.errors += 1
                logger.error("reading the webhook backlog failed", metadata: ["error": "\(error)"])
            }
        }
        return pass
    }

    /// Leases and sends due deliveries, at most `concurrency` at once, refilling as tries end.
    private func deliverDue(_ pass: inout Pass, started: ContinuousClock.Instant) async {
        let endpoints = EndpointStates()
        let limit = options.concurrency
        var claimedAll = false
        var inFlight = 0
        var tried = 0
        var lost = 0
        var errors = 0
        var cutShort = false
        await withTaskGroup(of: Bool.self) { group in
            while true {
                if !claimedAll, started.duration(to: .now) >= options.passLength {
                    claimedAll = true
                    cutShort = true
                }
                // Claims come in batches of at least one endpoint's room, so that places left by endpoints that
                // do not answer are filled while they hold theirs.
                if !claimedAll, limit - inFlight >= min(limit, options.perEndpoint), !Task.isShuttingDownGracefully, !Task.isCancelled {
                    let now = clock.now
                    do {
                        let claimed = try await store.claimDeliveries(worker: identity, now: now, leaseUntil: now + options.leaseSeconds,
                                                                      limit: limit - inFlight, perEndpoint: options.perEndpoint)
                        // Fewer than asked, or none, may only mean that some endpoints are full: while tries are in
                        // flight, ask again as each ends.
                        claimedAll = claimed.isEmpty && inFlight == 0
                        for delivery in claimed {
                            inFlight += 1
                            group.addTask { await self.deliver(delivery, endpoints: endpoints) }
                        }
                    } catch {
                        claimedAll = true
                        errors += 1
                        logger.error("leasing webhook deliveries failed; trying again shortly", metadata: ["error": "\(error)"])
                    }
                }
                guard inFlight > 0, let recorded = await group.next() else { break }
                inFlight -= 1
                tried += 1
                if !recorded { lost += 1 }
            }
        }
        pass.tried += tried
        pass.leaseLost += lost
        pass.errors += errors
        if cutShort { pass.more = true }
    }

    /// One try: send, decide what follows, record it. Returns whether it was recorded.
    private func deliver(_ delivery: WebhookDelivery, endpoints: EndpointStates) async -> Bool {
        let attempt = delivery.attempts + 1
        let time = clock.now
        let result = await sender.send(delivery, timestamp: time)
        observer.webhookTried(endpointID: delivery.endpoint.id, outcome: result.outcome, status: result.status, latency: result.latency)
        let now = clock.now
        let decision = endpoints.decide(endpointID: delivery.endpoint.id, storedFailingSince: delivery.endpoint.failingSince,
                                        now: now) { failingSince in
            retries.after(attempt: attempt, result.outcome, now: now, failingSince: failingSince, random: random())
        }
        var metadata: Logger.Metadata = [
            "endpoint": "\(delivery.endpoint.name)", "event": "\(delivery.event.publicID)", "attempt": "\(attempt)",
            "outcome": "\(result.outcome.name)", "status": "\(result.status.map { String($0) } ?? "none")",
            "latency_ms": "\(Self.milliseconds(result.latency))",
        ]
        if result.outcome == .delivered {
            logger.debug("webhook delivered", metadata: metadata)
        } else {
            metadata["answer"] = "\(result.answer)"
            logger.info("webhook try failed", metadata: metadata)
        }
        if case .disable(let reason) = decision.endpoint {
            logger.warning("webhook endpoint disabled", metadata: ["endpoint": "\(delivery.endpoint.name)", "reason": "\(reason)"])
        }
        let record = DeliveryAttempt(deliveryID: delivery.id, endpointID: delivery.endpoint.id, eventID: delivery.event.id,
                                     eventType: delivery.event.type, attempt: attempt, time: time, status: result.status,
                                     latencyMilliseconds: Self.milliseconds(result.latency), answer: result.answer)
        do {
            let held = try await store.finishDelivery(delivery, worker: identity, attempt: record, next: decision.next,
                                                      endpoint: decision.endpoint)
            if !held {
                logger.warning("webhook try not recorded: its lease ran out; another worker will try again",
                               metadata: ["endpoint": "\(delivery.endpoint.name)", "event": "\(delivery.event.publicID)"])
            }
            return held
        } catch {
            logger.error("recording a webhook try failed; it will be tried again when its lease runs out",
                         metadata: ["endpoint": "\(delivery.endpoint.name)", "event": "\(delivery.event.publicID)", "error": "\(error)"])
            return false
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        return overflow ? (seconds < 0 ? Int64.min : Int64.max) : whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000).partialValue
    }
}

/// The endpoints' failing state as this pass changes it, so that the tries of one pass to one endpoint
/// agree (the first failure starts it failing, the later ones see it failing).
private final class EndpointStates: Sendable {
    private let states = Mutex<[Int64: Int64?]>([:])

    func decide(endpointID: Int64, storedFailingSince: Int64?, now: Int64,
                _ rule: (Int64?) -> (next: WebhookRetries.Next, endpoint: WebhookRetries.EndpointChange))
        -> (next: WebhookRetries.Next, endpoint: WebhookRetries.EndpointChange) {
        states.withLock { states in
            let failingSince = states[endpointID] ?? storedFailingSince
            let decision = rule(failingSince)
            switch decision.endpoint {
            case .none, .disable: break
            case .recovered: states[endpointID] = .some(nil)
            case .startedFailing: states[endpointID] = .some(failingSince ?? now)
            }
            return decision
        }
    }
}

/// Wakes one waiting task, or the next one to wait if none is waiting.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when signalled, after `duration`, or when the task is cancelled, whichever comes first.
    func wait(upTo duration: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal() }
            group.addTask { try? await Task.sleep(for: duration) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForSignal() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    if Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
