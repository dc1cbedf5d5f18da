import KioskModels

/// What the webhook worker reports as it works; metrics plug in here.
package protocol WebhookObserver: Sendable {
    /// One try at a delivery ended with `outcome` (`status` when the endpoint answered) after `latency`.
    func webhookTried(endpointID: Int64, outcome: WebhookRetries.Outcome, status: Int?, latency: Duration)
    /// The deliveries waiting, and how long the oldest due one has waited (nil when none is due).
    func webhookBacklog(waiting: Int, oldestDueAge: Duration?)
}

/// The observer when nobody listens.
package struct UnobservedWebhooks: WebhookObserver {
    package init() {}
    package func webhookTried(endpointID: Int64, outcome: WebhookRetries.Outcome, status: Int?, latency: Duration) {}
    package func webhookBacklog(waiting: Int, oldestDueAge: Duration?) {}
}

extension WebhookRetries.Outcome {
    /// A short name for logs and metric labels: `delivered`, `gone`, `throttled`, `failed`.
    package var name: String {
        switch self {
        case .delivered: "delivered"
        case .gone: "gone"
        case .throttled: "throttled"
        case .failed: "failed"
        }
    }
}
