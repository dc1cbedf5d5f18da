import KioskPush
import KioskPushFanOut
import Prometheus

/// The push fan-out in `/metrics`: `kiosk_push_sent_total{service,outcome}`, `kiosk_push_tokens_removed_total{service}`
/// and `kiosk_push_fanout_duration_seconds`.
package struct MetricsPushObserver: PushFanOutObserver {
    package let metrics: KioskMetrics

    package init(metrics: KioskMetrics) { self.metrics = metrics }

    package func pushed(_ result: PushResult, service: PushService) {
        let outcome = switch result.outcome {
        case .sent: "sent"
        case .deadToken: "dead_token"
        case .failed: "failed"
        }
        metrics.pushed(service: Self.label(service), outcome: outcome)
    }

    package func tokensRemoved(_ count: Int, service: PushService) {
        metrics.pushTokensRemoved(service: Self.label(service), count: count)
    }

    package func fannedOut(after duration: Duration) {
        metrics.pushFanOutDuration.record(duration)
    }

    static func label(_ service: PushService) -> String {
        switch service {
        case .apns: "apns"
        case .fcm: "fcm"
        }
    }
}
