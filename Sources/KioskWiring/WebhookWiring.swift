import Foundation
import KioskConfig
import KioskHTTP
import KioskIntegers
import KioskModels
import KioskWebhooks
import Logging

/// The webhooks as the configuration sets them: the file's endpoints with their secrets (read from their
/// files at start, at reload and by `config check`), and the worker that delivers events.
package enum WebhookWiring {
    /// The file's endpoints, their secret files read and checked; a file that cannot be used stops the start
    /// (or the reload, which keeps the previous configuration) with its key and path.
    package static func fileEndpoints(_ configuration: KioskConfiguration, at time: Int64) throws -> [WebhookEndpoint] {
        let policy = DestinationPolicy(allowHosts: configuration.webhooks.allowHosts)
        return try configuration.webhooks.endpoints.enumerated().map { index, entry in
            let key = "webhooks.endpoints[\(index)]"
            do throws(DestinationRefused) { _ = try policy.checkForm(entry.url) } catch {
                throw StoreFileProblem(key: "\(key).url", path: entry.url, problem: error.reason)
            }
            let problem = { (text: String) in StoreFileProblem(key: "\(key).secret_file", path: entry.secretFile, problem: text) }
            let text: String
            do { text = try String(contentsOfFile: entry.secretFile, encoding: .utf8) } catch {
                throw problem("cannot be read (\(error.localizedDescription)); write the endpoint's whsec_ secret there")
            }
            let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard (1...2).contains(lines.count) else {
                throw problem("must hold one whsec_ secret, or two (the new one first) during a rotation; it holds \(lines.count)")
            }
            for line in lines {
                do throws(WebhookSecretProblem) { _ = try WebhookSecret(line) } catch { throw problem(error.problem) }
            }
            guard case .success(let types) = EventType.parseList(entry.types.joined(separator: ",")) else {
                throw StoreFileProblem(key: "\(key).types", path: entry.types.joined(separator: ","),
                                       problem: "lists an unknown event type")   // `validate` refused it already
            }
            return WebhookEndpoint(source: .file, name: entry.name, owner: entry.owner, url: entry.url, types: types,
                                   secrets: lines, createdAt: time)
        }
    }

    /// The worker delivering `database`'s events, with the configuration's limits (fixed until a restart).
    package static func worker(_ configuration: KioskConfiguration, database: any KioskDatabase, metrics: KioskMetrics?,
                               logger: Logger) -> WebhookWorker {
        let webhooks = configuration.webhooks
        let sender = WebhookSender(policy: DestinationPolicy(allowHosts: webhooks.allowHosts),
                                   options: .init(timeout: .seconds(webhooks.timeoutSeconds)), logger: logger)
        return WebhookWorker(
            store: database, events: database, sender: sender,
            options: .init(leaseSeconds: Int64(widening: webhooks.timeoutSeconds) * 4 + 30, concurrency: webhooks.concurrency,
                           keepEventsSeconds: Int64(widening: configuration.events.keepDays) * 86_400),
            observer: metrics.map { MetricsWebhookObserver(metrics: $0) } ?? UnobservedWebhooks(), logger: logger)
    }
}

extension WebhookWiring {
    /// The console's secrets and destination checks, from `KioskWebhooks`.
    package struct ConsoleTools: WebhookTools {
        package init() {}
        package func newSecret() -> String { WebhookSecret.generate().text }
        package func destinationProblem(_ url: String, allowHosts: [String]) -> String? {
            do throws(DestinationRefused) { _ = try DestinationPolicy(allowHosts: allowHosts).checkForm(url) } catch { return error.reason }
            return nil
        }
    }
}

/// The worker's tries and backlog in `/metrics`.
struct MetricsWebhookObserver: WebhookObserver {
    let metrics: KioskMetrics
    func webhookTried(endpointID: Int64, outcome: WebhookRetries.Outcome, status: Int?, latency: Duration) {
        metrics.webhookTried(outcome: outcome.name, duration: latency)
    }
    func webhookBacklog(waiting: Int, oldestDueAge: Duration?) {
        metrics.webhookBacklog(waiting: waiting, oldestDueAge: oldestDueAge)
    }
}
