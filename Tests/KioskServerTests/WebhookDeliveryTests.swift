import Foundation
import KioskModels
import KioskSQLite
import KioskTestSupport
import Testing
@testable import KioskWebhooks

/// Events delivered by the real worker from a real SQLite store to endpoints on loopback that verify with
/// the Standard Webhooks reference library: a publish reaches the endpoints that take its type; a failing
/// endpoint is retried with the same `webhook-id` and then given up; `410 Gone` disables its endpoint; a
/// private destination is never contacted; "send again" queues one more delivery.
@Suite struct WebhookDeliveryTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    static func endpoint(_ name: String, _ url: String, types: Set<EventType> = [.issuePublished]) -> WebhookEndpoint {
        WebhookEndpoint(source: .console, name: name, owner: "olga", url: url, types: types, secrets: [secret], createdAt: 0)
    }

    /// Runs passes of `worker` until `done` or 30 s.
    static func drive(_ worker: WebhookWorker, until done: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            _ = await worker.runPass()
            if try await done() { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        Issue.record("the deliveries did not settle within 30 s")
    }

    @Test func aPublishReachesTheEndpointsThatTakeIt() async throws {
        let kiosk = try await TestKiosk()
        try await WebhookReceiver.run(secrets: [Self.secret]) { receiver in
            let store = kiosk.store
            let ok = try await store.saveWebhookEndpoint(Self.endpoint("ok", receiver.baseURL + "/answer/200"))
            let readers = try await store.saveWebhookEndpoint(Self.endpoint("readers", receiver.baseURL + "/answer/200?r", types: [.readerAdded]))
            let failing = try await store.saveWebhookEndpoint(Self.endpoint("failing", receiver.baseURL + "/answer/500"))
            let gone = try await store.saveWebhookEndpoint(Self.endpoint("gone", receiver.baseURL + "/answer/410"))
            let hidden = try await store.saveWebhookEndpoint(Self.endpoint("private", "http://10.0.0.1:9/hook"))
            try await kiosk.addIssue(edition: 8, date: "2025-05-30")

            let worker = WebhookWorker(
                store: store, events: store,
                sender: WebhookSender(policy: DestinationPolicy(allowHosts: ["127.0.0.1"]), options: .init(timeout: .seconds(5))),
                retries: WebhookRetries(delays: [1, 1], jitter: 0))
            try await Self.drive(worker) {
                let failures = try await store.deliveryLog(endpointID: failing.id, limit: 10).count
                let delivered = try await store.deliveryLog(endpointID: ok.id, limit: 10)
                return failures >= 3 && !delivered.isEmpty
            }
            let received = try await receiver.deliveries()
            // The endpoint taking issue.published got it once, verified by the reference library.
            let toOK = received.filter { $0.path == "/answer/200" }
            #expect(toOK.count == 1)
            #expect(toOK.first?.verified == [0], "standardwebhooks refused it: \(toOK.first?.errors ?? [:])")
            let body = try #require(toOK.first.map { Data($0.body.utf8) })
            let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            #expect(json["type"] as? String == "issue.published")
            #expect((json["data"] as? [String: Any])?["edition"] as? Int == 8)
            #expect(received.filter { $0.path.hasPrefix("/answer/200?r") }.isEmpty, "an endpoint of other types got nothing")
            // The failing one: three tries of the same event (the same webhook-id), then given up.
            let toFailing = received.filter { $0.path == "/answer/500" }
            #expect(toFailing.count == 3)
            #expect(Set(toFailing.compactMap(\.id)).count == 1 && toFailing.first?.id == toOK.first?.id)
            let failingLog = try await store.deliveryLog(endpointID: failing.id, limit: 10)
            #expect(failingLog.map(\.attempt).sorted() == [1, 2, 3])
            #expect(failingLog.allSatisfy { $0.status == 500 })
            #expect(try await store.webhookEndpoint(id: failing.id)?.failingSince != nil)
            // 410 disables; a private address is never asked.
            #expect(try await store.webhookEndpoint(id: gone.id)?.enabled == false)
            #expect(try await store.webhookEndpoint(id: gone.id)?.disabledReason?.contains("410") == true)
            let hiddenLog = try await store.deliveryLog(endpointID: hidden.id, limit: 10)
            #expect(hiddenLog.first?.status == nil)
            #expect(hiddenLog.first?.answer.contains("10.0.0.1") == true)
            #expect(try await store.deliveryLog(endpointID: readers.id, limit: 10).isEmpty)

            // "Send again": one more delivery of the same event to the endpoint that took it.
            let event = try #require(toOK.first?.id.flatMap { KioskEvent.position(ofPublicID: Substring($0)) })
            #expect(try await store.redeliver(eventID: event, endpointID: ok.id, at: kiosk.clock.now))
            try await Self.drive(worker) { try await store.deliveryLog(endpointID: ok.id, limit: 10).count == 2 }
            let again = try await receiver.deliveries().filter { $0.path == "/answer/200" }
            #expect(again.count == 2 && again.last?.id == toOK.first?.id && again.last?.verified == [0])
        }
    }
}
