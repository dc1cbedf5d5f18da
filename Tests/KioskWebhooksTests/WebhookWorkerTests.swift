import Foundation
import KioskModels
import Logging
import ServiceLifecycle
import Synchronization
import Testing
@testable import KioskWebhooks

/// The worker's control flow, over test doubles of the store and the sender. The stores' own
/// `WebhookStore` is tested by the store conformance suite; this only checks what the loop does with one.
@Suite struct WebhookWorkerTests {
    static let logger = Logger(label: "test.webhooks")

    static func endpoint(_ id: Int64, _ name: String) -> WebhookEndpoint {
        WebhookEndpoint(id: id, source: .file, name: name, owner: "admin", url: "https://\(name).example.com/hook",
                        secrets: [WebhookSecret.generate().text], createdAt: 0)
    }

    static func worker(store: WebhookStoreDouble, sender: SenderDouble, options: WebhookWorker.Options = .init(),
                       observer: any WebhookObserver = UnobservedWebhooks()) -> WebhookWorker {
        WebhookWorker(store: store, events: store, sender: sender, options: options, observer: observer, clock: store,
                      identity: "test-worker", random: { 0 }, logger: logger)
    }

    @Test func aPassSendsDueDeliveriesAndRecordsWhatFollows() async throws {
        let store = WebhookStoreDouble(endpoints: [Self.endpoint(1, "ok"), Self.endpoint(2, "down")])
        store.append(.issuePublished)
        let sender = SenderDouble(statuses: ["ok": 200, "down": 500])
        let worker = Self.worker(store: store, sender: sender)

        let pass = await worker.runPass()
        #expect(pass.dispatched == 1)
        #expect(pass.tried == 2)
        #expect(pass.errors == 0)
        let finished = store.finished.withLock { $0 }
        #expect(finished.count == 2)
        let ok = try #require(finished.first { $0.attempt.endpointID == 1 })
        #expect(ok.next == .done)
        #expect(ok.change == .none)
        #expect(ok.attempt.attempt == 1)
        #expect(ok.attempt.status == 200)
        let down = try #require(finished.first { $0.attempt.endpointID == 2 })
        #expect(down.next == .retry(at: store.now + 5))
        #expect(down.change == .startedFailing)
        #expect(down.attempt.answer == "answered 500")

        // Nothing is due until the retry: a second pass sends nothing.
        #expect(await worker.runPass().tried == 0)
        store.advance(by: 5)
        let retry = await worker.runPass()
        #expect(retry.tried == 1)
        #expect(store.finished.withLock { $0.last?.attempt.attempt } == 2)
        #expect(store.finished.withLock { $0.last?.change } == WebhookRetries.EndpointChange.none)
    }

    @Test func triesInFlightAreBounded() async throws {
        let store = WebhookStoreDouble(endpoints: (1...5).map { Self.endpoint($0, "e\($0)") })
        for _ in 0..<8 { store.append(.readerAdded) }
        let sender = SenderDouble(statuses: [:], delay: .milliseconds(30))
        let worker = Self.worker(store: store, sender: sender, options: .init(concurrency: 4))
        let pass = await worker.runPass()
        #expect(pass.tried == 40)
        #expect(sender.peak.withLock { $0 } <= 4)
        #expect(sender.peak.withLock { $0 } >= 2)
    }

    /// An endpoint with the oldest backlog that answers slowly holds its `perEndpoint` places only: the other
    /// endpoint's tries run beside them and all end before the slow one's last.
    @Test func anEndpointThatDoesNotAnswerHoldsOnlyItsOwnPlaces() async throws {
        let store = WebhookStoreDouble(endpoints: [Self.endpoint(1, "slow")])
        for _ in 0..<6 { store.append(.readerAdded) }
        _ = try await store.dispatchEvents(limit: 100, at: store.now)
        store.addEndpoint(Self.endpoint(2, "quick"))
        for _ in 0..<6 { store.append(.readerAdded) }
        let sender = SenderDouble(statuses: [:], delays: ["slow": .milliseconds(300)])
        let worker = Self.worker(store: store, sender: sender, options: .init(concurrency: 8, perEndpoint: 2))
        let pass = await worker.runPass()
        #expect(pass.tried == 6 + 12)
        #expect(sender.peaks.withLock { $0["slow"] } == 2, "the slow one never held more than its places")
        let order = sender.ended.withLock { $0 }
        let lastSlow = try #require(order.lastIndex(of: "slow"))
        #expect(order.filter { $0 == "quick" }.count == 6 && order[..<lastSlow].filter { $0 == "quick" }.count == 6, "\(order)")
    }

    /// Three slow endpoints hold 6 of 8 places: the quick endpoint's tries use the 2 left, and all end before
    /// the first slow try does.
    @Test func placesLeftBySlowEndpointsAreFilledWhileTheyHoldTheirs() async throws {
        let store = WebhookStoreDouble(endpoints: (1...3).map { Self.endpoint($0, "slow\($0)") })
        for _ in 0..<4 { store.append(.readerAdded) }
        _ = try await store.dispatchEvents(limit: 100, at: store.now)
        store.addEndpoint(Self.endpoint(4, "quick"))
        for _ in 0..<6 { store.append(.readerAdded) }
        let slow: [String: Duration] = ["slow1": .milliseconds(400), "slow2": .milliseconds(400), "slow3": .milliseconds(400)]
        let sender = SenderDouble(statuses: [:], delays: slow)
        let worker = Self.worker(store: store, sender: sender, options: .init(concurrency: 8, perEndpoint: 2))
        let pass = await worker.runPass()
        #expect(pass.tried == 3 * 10 + 6)
        let order = sender.ended.withLock { $0 }
        let firstSlow = try #require(order.firstIndex { $0.hasPrefix("slow") })
        #expect(order[..<firstSlow].filter { $0 == "quick" }.count == 6, "\(order)")
    }

    @Test func aLongPassStopsLeasingAndAsksForAnother() async throws {
        let store = WebhookStoreDouble(endpoints: [Self.endpoint(1, "slow")])
        for _ in 0..<10 { store.append(.readerAdded) }
        let worker = Self.worker(store: store, sender: SenderDouble(statuses: [:], delay: .milliseconds(30)),
                                 options: .init(concurrency: 1, passLength: .milliseconds(60)))
        let first = await worker.runPass()
        #expect(first.more)
        #expect(first.tried >= 1 && first.tried < 10)
        var tried = first.tried
        while tried < 10 {
            let pass = await worker.runPass()
            guard pass.tried > 0 else {
                Issue.record("a pass tried nothing with \(10 - tried) deliveries due")
                break
            }
            tried += pass.tried
        }
        #expect(tried == 10)
    }

    @Test func failuresInOnePassAgreeOnTheEndpointsState() async throws {
        let store = WebhookStoreDouble(endpoints: [Self.endpoint(1, "down")])
        for _ in 0..<3 { store.append(.readerAdded) }
        let worker = Self.worker(store: store, sender: SenderDouble(statuses: ["down": 503]))
        _ = await worker.runPass()
        let changes = store.finished.withLock { $0.map(\.change) }
        #expect(changes.filter { $0 == .startedFailing }.count == 1)
        #expect(changes.count == 3)
    }

    @Test func errorsAreCountedAndTheNextPassGoesOn() async throws {
        let store = WebhookStoreDouble(endpoints: [Self.endpoint(1, "ok")])
        store.append(.appChanged)
        store.failClaims.withLock { $0 = 1 }
        let worker = Self.worker(store: store, sender: SenderDouble(statuses: [:]))
        let failed = await worker.runPass()
        #expect(failed.errors == 1)
        #expect(failed.tried == 0)
        let next = await worker.runPass()
        #expect(next.errors == 0)
        #expect(next.tried == 1)
    }

    @Test func aLostLeaseIsCounted() async throws {
        let store = WebhookStoreDouble(endpoints: [Self.endpoint(1, "ok")])
        store.append(.appChanged)
        store.loseLeases.withLock { $0 = true }
        let pass = await Self.worker(store: store, sender: SenderDouble(statuses: [:])).runPass()
        #expect(pass.tried == 1)
        #expect(pass.leaseLost == 1)
    }

    @Test func wakeStartsAPassAndShutdownStopsTheWorker() async throws {
        let store = WebhookStoreDouble(endpoints: [Self.endpoint(1, "ok")])
        let observer = ObserverDouble()
        let worker = Self.worker(store: store, sender: SenderDouble(statuses: [:]),
                                 options: .init(interval: .seconds(3_600)), observer: observer)
        let group = ServiceGroup(services: [worker], gracefulShutdownSignals: [], cancellationSignals: [], logger: Self.logger)
        let running = Task { try await group.run() }
        try await Self.waitUntil { store.claims.withLock { $0 } >= 1 }

        store.append(.issueWithdrawn)
        let woken = ContinuousClock.now
        worker.wake()
        try await Self.waitUntil { !store.finished.withLock { $0.isEmpty } }
        #expect(woken.duration(to: .now) < .seconds(5))
        #expect(observer.tries.withLock { $0 } == ["delivered"])
        #expect(observer.backlogs.withLock { $0 } >= 1)

        let stopping = ContinuousClock.now
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(stopping.duration(to: .now) < .seconds(5))
    }

    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("the condition did not hold within 10 s")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// A test double of `WebhookStore`, `EventLog` and the clock: just enough of their contracts, in memory, to
/// drive the worker's loop. Not a reference for the stores.
final class WebhookStoreDouble: WebhookStore, EventLog, KioskClock, Sendable {
    struct Finished: Sendable {
        var attempt: DeliveryAttempt
        var next: WebhookRetries.Next
        var change: WebhookRetries.EndpointChange
    }

    private struct Pending: Sendable {
        var delivery: WebhookDelivery
        var due: Int64
        var leasedTo: String?
        var leaseUntil: Int64 = 0
    }

    private struct State: Sendable {
        var endpoints: [WebhookEndpoint]
        var events: [KioskEvent] = []
        var offered: Int64 = 0
        var pending: [Pending] = []
        var time: Int64 = 1_800_000_000
    }

    private let state: Mutex<State>
    let finished = Mutex<[Finished]>([])
    let claims = Mutex(0)
    let failClaims = Mutex(0)
    let loseLeases = Mutex(false)

    init(endpoints: [WebhookEndpoint]) { state = Mutex(State(endpoints: endpoints)) }

    var now: Int64 { state.withLock { $0.time } }
    func advance(by seconds: Int64) { state.withLock { $0.time += seconds } }
    func addEndpoint(_ endpoint: WebhookEndpoint) { state.withLock { $0.endpoints.append(endpoint) } }

    func append(_ type: EventType) {
        state.withLock { state in
            state.events.append(KioskEvent(id: Int64(state.events.count + 1), type: type, time: state.time, body: EventBody(app: "quiosc")))
        }
    }

    func dispatchEvents(limit: Int, at now: Int64) async throws -> Int {
        state.withLock { state in
            let new = state.events.filter { $0.id > state.offered }.prefix(limit)
            for event in new {
                for endpoint in state.endpoints where endpoint.enabled && endpoint.receives(event.type) {
                    let delivery = WebhookDelivery(id: Int64(state.pending.count + 1), endpoint: endpoint, event: event, attempts: 0)
                    state.pending.append(Pending(delivery: delivery, due: now))
                }
                state.offered = event.id
            }
            return new.count
        }
    }

    func claimDeliveries(worker: String, now: Int64, leaseUntil: Int64, limit: Int, perEndpoint: Int) async throws -> [WebhookDelivery] {
        claims.withLock { $0 += 1 }
        if failClaims.withLock({ count in defer { count = max(0, count - 1) }; return count > 0 }) {
            throw DoubleFailure()
        }
        return state.withLock { state in
            var claimed: [WebhookDelivery] = []
            var busy: [Int64: Int] = [:]
            for pending in state.pending where pending.leasedTo == worker && pending.leaseUntil > now {
                busy[pending.delivery.endpoint.id, default: 0] += 1
            }
            for index in state.pending.indices where claimed.count < limit {
                let pending = state.pending[index]
                guard pending.due <= now, pending.leasedTo == nil || pending.leaseUntil <= now,
                      busy[pending.delivery.endpoint.id, default: 0]
                        < (state.endpoints.first { $0.id == pending.delivery.endpoint.id }?.failingSince == nil ? perEndpoint : 1)
                else { continue }
                busy[pending.delivery.endpoint.id, default: 0] += 1
                state.pending[index].leasedTo = worker
                state.pending[index].leaseUntil = leaseUntil
                var delivery = pending.delivery
                delivery.endpoint = state.endpoints.first { $0.id == delivery.endpoint.id } ?? delivery.endpoint
                claimed.append(delivery)
            }
            return claimed
        }
    }

    func finishDelivery(_ delivery: WebhookDelivery, worker: String, attempt: DeliveryAttempt, next: WebhookRetries.Next,
                        endpoint: WebhookRetries.EndpointChange) async throws -> Bool {
        if loseLeases.withLock({ $0 }) { return false }
        finished.withLock { $0.append(Finished(attempt: attempt, next: next, change: endpoint)) }
        state.withLock { state in
            guard let index = state.pending.firstIndex(where: { $0.delivery.id == delivery.id }) else { return }
            switch next {
            case .done, .givenUp: state.pending.remove(at: index)
            case .retry(let at):
                state.pending[index].due = at
                state.pending[index].leasedTo = nil
                state.pending[index].delivery.attempts += 1
            }
            if let endpointIndex = state.endpoints.firstIndex(where: { $0.id == delivery.endpoint.id }) {
                switch endpoint {
                case .none: break
                case .recovered: state.endpoints[endpointIndex].failingSince = nil
                case .startedFailing: state.endpoints[endpointIndex].failingSince = attempt.time
                case .disable(let reason):
                    state.endpoints[endpointIndex].enabled = false
                    state.endpoints[endpointIndex].disabledReason = reason
                }
            }
        }
        return true
    }

    func deliveryBacklog(at now: Int64) async throws -> (waiting: Int, oldestDue: Int64?) {
        state.withLock { state in (state.pending.count, state.pending.filter { $0.due <= now }.map(\.due).min()) }
    }

    func pruneEvents(before time: Int64) async throws -> Int { 0 }

    // Not used by the worker.
    func webhookEndpoints(owner: String?) async throws -> [WebhookEndpoint] { state.withLock { $0.endpoints } }
    func webhookEndpoint(id: Int64) async throws -> WebhookEndpoint? { state.withLock { $0.endpoints.first { $0.id == id } } }
    func saveWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws -> WebhookEndpoint { throw DoubleFailure() }
    func changeWebhookEndpoint(id: Int64, _ change: WebhookEndpointChange) async throws -> WebhookEndpoint? { throw DoubleFailure() }
    func deleteWebhookEndpoint(id: Int64) async throws -> Bool { throw DoubleFailure() }
    func syncFileEndpoints(_ endpoints: [WebhookEndpoint]) async throws { throw DoubleFailure() }
    func deliveryLog(endpointID: Int64, limit: Int) async throws -> [DeliveryAttempt] { throw DoubleFailure() }
    func redeliver(eventID: Int64, endpointID: Int64, at now: Int64) async throws -> Bool { throw DoubleFailure() }
    func events(after: Int64, types: Set<EventType>?, limit: Int) async throws -> [KioskEvent] { throw DoubleFailure() }
    func eventBounds() async throws -> ClosedRange<Int64>? { throw DoubleFailure() }
    func appendEvent(_ event: NewEvent, at time: Int64) async throws -> KioskEvent { throw DoubleFailure() }
}

struct DoubleFailure: Error, CustomStringConvertible {
    var description: String { "the test double fails here on purpose" }
}

/// A sender test double: answers each endpoint (by name) with a status, counting tries in flight.
final class SenderDouble: WebhookSending, Sendable {
    let statuses: [String: Int]
    let delay: Duration
    /// Endpoints (by name) answering after a delay of their own.
    let delays: [String: Duration]
    let peak = Mutex(0)
    /// The most tries in flight per endpoint name.
    let peaks = Mutex<[String: Int]>([:])
    /// Endpoint names in the order their tries ended.
    let ended = Mutex<[String]>([])
    private let inFlight = Mutex(0)
    private let inFlightByName = Mutex<[String: Int]>([:])

    init(statuses: [String: Int], delay: Duration = .zero, delays: [String: Duration] = [:]) {
        self.statuses = statuses; self.delay = delay; self.delays = delays
    }

    func send(_ delivery: WebhookDelivery, timestamp: Int64) async -> WebhookSendResult {
        let name = delivery.endpoint.name
        let now = inFlight.withLock { count in count += 1; return count }
        peak.withLock { $0 = max($0, now) }
        let own = inFlightByName.withLock { counts in counts[name, default: 0] += 1; return counts[name, default: 0] }
        peaks.withLock { $0[name] = max($0[name, default: 0], own) }
        let wait = delays[name] ?? delay
        if wait > .zero { try? await Task.sleep(for: wait) }
        inFlightByName.withLock { $0[name, default: 0] -= 1 }
        ended.withLock { $0.append(name) }
        inFlight.withLock { $0 -= 1 }
        let status = statuses[delivery.endpoint.name] ?? 200
        return WebhookSendResult(outcome: WebhookRetries.outcome(status: status, retryAfter: nil), status: status,
                                 latency: .milliseconds(3), answer: "answered \(status)")
    }
}

final class ObserverDouble: WebhookObserver, Sendable {
    let tries = Mutex<[String]>([])
    let backlogs = Mutex(0)

    func webhookTried(endpointID: Int64, outcome: WebhookRetries.Outcome, status: Int?, latency: Duration) {
        tries.withLock { $0.append(outcome.name) }
    }

    func webhookBacklog(waiting: Int, oldestDueAge: Duration?) { backlogs.withLock { $0 += 1 } }
}
