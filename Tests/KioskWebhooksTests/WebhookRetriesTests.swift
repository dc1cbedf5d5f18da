import KioskModels
import Testing

/// The lead's `WebhookRetries` (KioskModels), checked against what its documentation says.
@Suite struct WebhookRetriesTests {
    let rules = WebhookRetries()

    @Test func theScheduleSpansAboutThreeDays() {
        var now: Int64 = 1_000_000
        var tries = 1
        let start = now
        while case .retry(let at) = rules.after(attempt: tries, .failed, now: now, failingSince: start, random: 0).next {
            #expect(at > now)
            now = at
            tries += 1
        }
        #expect(tries == 10)
        #expect(now - start == 5 + 300 + 1_800 + 7_200 + 18_000 + 36_000 + 50_400 + 72_000 + 86_400)
        #expect(rules.after(attempt: 10, .failed, now: now, failingSince: start, random: 0).next == .givenUp)
    }

    @Test func jitterStretchesADelayByAtMostItsShare() {
        #expect(rules.after(attempt: 2, .failed, now: 0, failingSince: 0, random: 0).next == .retry(at: 300))
        #expect(rules.after(attempt: 2, .failed, now: 0, failingSince: 0, random: 0.5).next == .retry(at: 315))
        #expect(rules.after(attempt: 2, .failed, now: 0, failingSince: 0, random: 0.999_999).next == .retry(at: 329))
        #expect(rules.after(attempt: 2, .failed, now: 0, failingSince: 0, random: 7).next == .retry(at: 330))
    }

    @Test func retryAfterIsAFloorCappedAtADay() {
        #expect(rules.after(attempt: 1, .throttled(retryAfter: 120), now: 0, failingSince: nil, random: 0).next == .retry(at: 120))
        #expect(rules.after(attempt: 1, .throttled(retryAfter: 1), now: 0, failingSince: nil, random: 0).next == .retry(at: 5))
        #expect(rules.after(attempt: 1, .throttled(retryAfter: 1_000_000), now: 0, failingSince: nil, random: 0).next == .retry(at: 86_400))
        #expect(rules.after(attempt: 1, .throttled(retryAfter: nil), now: 0, failingSince: nil, random: 0).next == .retry(at: 5))
    }

    @Test func goneDisablesAndDeliveredRecovers() {
        let gone = rules.after(attempt: 3, .gone, now: 50, failingSince: nil, random: 0)
        #expect(gone.next == .givenUp)
        guard case .disable(let reason) = gone.endpoint else {
            Issue.record("410 did not disable: \(gone.endpoint)")
            return
        }
        #expect(reason.contains("410"))
        #expect(rules.after(attempt: 3, .delivered, now: 50, failingSince: 10, random: 0) == (.done, .recovered))
        #expect(rules.after(attempt: 1, .delivered, now: 50, failingSince: nil, random: 0) == (.done, .none))
    }

    @Test func failingForTooLongDisables() {
        #expect(rules.after(attempt: 1, .failed, now: 100, failingSince: nil, random: 0).endpoint == .startedFailing)
        #expect(rules.after(attempt: 2, .failed, now: 100, failingSince: 50, random: 0).endpoint == .none)
        let late = rules.after(attempt: 4, .failed, now: 5 * 86_400, failingSince: 0, random: 0)
        guard case .disable(let reason) = late.endpoint else {
            Issue.record("five days of failures did not disable: \(late.endpoint)")
            return
        }
        #expect(reason.contains("1970-01-01"))
        #expect(rules.after(attempt: 4, .throttled(retryAfter: nil), now: 5 * 86_400 - 1, failingSince: 0, random: 0).endpoint == .none)
    }

    @Test func statusesMapToOutcomes() {
        #expect(WebhookRetries.outcome(status: 200, retryAfter: nil) == .delivered)
        #expect(WebhookRetries.outcome(status: 299, retryAfter: 5) == .delivered)
        #expect(WebhookRetries.outcome(status: 302, retryAfter: nil) == .failed)
        #expect(WebhookRetries.outcome(status: 410, retryAfter: nil) == .gone)
        #expect(WebhookRetries.outcome(status: 429, retryAfter: 30) == .throttled(retryAfter: 30))
        #expect(WebhookRetries.outcome(status: 503, retryAfter: nil) == .throttled(retryAfter: nil))
        #expect(WebhookRetries.outcome(status: 500, retryAfter: 30) == .failed)
        #expect(WebhookRetries.outcome(status: 404, retryAfter: nil) == .failed)
    }
}
