import Foundation
import KioskModels
import KioskPush
import Logging
import ServiceLifecycle

/// Tells reader apps of new issues, as a `Service` of the server's group: takes up `issue.published` and
/// `issue.republished` events from the outbox (`PushRegistry.claimPushBatch`), a batch of registrations at a
/// time in id order, keeps those that asked for the edition or may read the issue (`PushAudience`), and sends
/// each app's announcement (`AppPushPolicy`) through the sender of each device's service. Tokens a service
/// calls dead are removed.
///
/// A batch's claim is committed before anything of it is sent, and no batch is claimed twice: a device hears
/// of an event at most once, across instances and crashes. A worker killed while sending loses the rest of its
/// batch (those devices are not told); nothing is sent twice. Several workers (processes, instances) may share
/// a store: each claims its own batches.
package final class PushWorker: Service, Sendable {
    package struct Options: Sendable {
        /// Time between passes when the last found nothing to do.
        package var interval: Duration
        /// Registrations per claimed batch.
        package var batchSize: Int
        /// Events older than this (seconds) when reached are passed over.
        package var maximumAgeSeconds: Int64

        package init(interval: Duration = .seconds(1), batchSize: Int = 500, maximumAgeSeconds: Int64 = 86_400) {
            self.interval = interval; self.batchSize = max(batchSize, 1); self.maximumAgeSeconds = max(maximumAgeSeconds, 0)
        }
    }

    /// What one pass did.
    package struct Pass: Sendable, Hashable {
        /// Batches claimed.
        package var batches = 0
        /// Devices sent to, whatever the outcome.
        package var sent = 0
        /// Registrations removed for dead tokens.
        package var removed = 0
        /// Steps that threw (logged).
        package var errors = 0

        package init() {}
    }

    private let store: any KioskStore
    private let apps: [String: PushApp]
    private let senders: PushSenders
    private let links: (any LinkSigning)?
    private let options: Options
    private let observer: any PushFanOutObserver
    private let clock: any KioskClock
    private let logger: Logger

    /// - Parameters:
    ///   - apps: by app key, the apps whose devices are told; the others' registrations are kept, unused.
    ///   - links: signs the cover's link put in alerts; nil: alerts carry no cover.
    package init(store: any KioskStore, apps: [String: PushApp], senders: PushSenders, links: (any LinkSigning)?,
                 options: Options = Options(), observer: any PushFanOutObserver = UnobservedPushFanOut(),
                 clock: any KioskClock = SystemClock(), logger: Logger = Logger(label: "kiosk.push")) {
        self.store = store; self.apps = apps; self.senders = senders; self.links = links; self.options = options
        self.observer = observer; self.clock = clock; self.logger = logger
    }

    package func run() async throws {
        logger.info("push worker started", metadata: ["apps": "\(apps.keys.sorted().joined(separator: ","))"])
        var failures = 0
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let pass = await runPass()
            failures = pass.errors > 0 ? failures + 1 : 0
            let wait = failures == 0 ? options.interval : min(options.interval * (1 << min(failures, 5)), .seconds(30))
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
        }
        logger.info("push worker stopped")
    }

    /// Claims and sends batches until none is left or the service group shuts down. Errors are logged and
    /// counted, never thrown.
    package func runPass() async -> Pass {
        var pass = Pass()
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let now = clock.now
            let batch: PushBatch?
            do {
                batch = try await store.claimPushBatch(PushBatchRequest(
                    types: PushAudience.types, notBefore: now - options.maximumAgeSeconds, limit: options.batchSize, now: now))
            } catch {
                pass.errors += 1
                logger.error("claiming a push batch failed; trying again shortly", metadata: ["error": "\(error)"])
                break
            }
            guard let batch else { break }
            pass.batches += 1
            await send(batch, pass: &pass)
            if batch.last {
                observer.fannedOut(after: .seconds(max(0, clock.now - batch.event.time)))
            }
        }
        return pass
    }

    /// Sends one claimed batch: one message per app and language, to each service's devices.
    private func send(_ batch: PushBatch, pass: inout Pass) async {
        guard let issue = PushAudience.issue(of: batch.event) else { return }
        let now = clock.now
        let recipients: [PushRegistration]
        do {
            recipients = try await PushAudience(store: store).recipients(of: batch, at: now)
        } catch {
            // The batch is claimed: its devices are not told of this event (at most once).
            pass.errors += 1
            logger.error("choosing who hears of an issue failed; this batch is not sent",
                         metadata: ["event": "\(batch.event.publicID)", "error": "\(error)"])
            return
        }
        var dead: [PushDeadToken] = []
        var deadBy: [PushService: Int] = [:]
        let byApp = Dictionary(grouping: recipients, by: \.appKey)
        for appKey in byApp.keys.sorted() {
            guard let app = apps[appKey], let registrations = byApp[appKey] else { continue }
            let names: (edition: String, publication: String)
            do {
                guard let offered = try await store.offeredEdition(appKey: appKey, editionID: issue.editionID) else { continue }
                names = (offered.edition.name, offered.publicationName)
            } catch {
                pass.errors += 1
                logger.error("reading an edition for a push failed; this app's devices in the batch are not sent",
                             metadata: ["app": "\(appKey)", "error": "\(error)"])
                continue
            }
            let cover = await coverLink(issue, at: now)
            let groups = Dictionary(grouping: registrations) { GroupKey(platform: $0.platform, language: app.policy.language(for: $0.language) ?? "") }
            for key in groups.keys.sorted(by: { ($0.platform.rawValue, $0.language) < ($1.platform.rawValue, $1.language) }) {
                guard let group = groups[key], let address = app.address(key.platform), let sender = senders.sender(key.platform, for: app),
                      let announcement = app.policy.announcement(of: batch.event.type, issue: issue, editionName: names.edition,
                                                                 publicationName: names.publication, language: key.language, at: now)
                else { continue }
                let message = PushMessage.newIssue(
                    edition: String(issue.editionID), date: issue.date.description,
                    alert: announcement.alerts ? PushMessage.Alert(title: announcement.title ?? "", body: announcement.body ?? "",
                                                                   imageURL: cover) : nil,
                    background: announcement.background, expiration: expiration(of: batch.event))
                let results: [PushResult]
                do {
                    results = try await sender.send(message, to: group.map { PushDevice(token: $0.token, app: address) })
                } catch {
                    pass.errors += 1
                    logger.error("a push message could not be sent to anyone", metadata: ["app": "\(appKey)", "error": "\(error)"])
                    continue
                }
                pass.sent += results.count
                var failed: (count: Int, reason: String) = (0, "")
                for result in results {
                    switch result.outcome {
                    case .sent: break
                    case .deadToken:
                        dead.append(PushDeadToken(appKey: appKey, platform: key.platform, token: result.device.token))
                        deadBy[sender.service, default: 0] += 1
                    case .failed(let reason, _):
                        failed = (failed.count + 1, failed.reason.isEmpty ? reason : failed.reason)
                    }
                }
                if failed.count > 0 {
                    logger.warning("push notifications not sent", metadata: [
                        "app": "\(appKey)", "service": "\(sender.service)", "event": "\(batch.event.publicID)",
                        "devices": "\(failed.count)", "reason": "\(failed.reason)",
                    ])
                }
            }
        }
        guard !dead.isEmpty else { return }
        do {
            pass.removed += try await store.removeDeadPushTokens(dead)
            for (service, count) in deadBy { observer.tokensRemoved(count, service: service) }
        } catch {
            pass.errors += 1
            logger.error("removing dead push tokens failed; they are tried again at the next issue", metadata: ["error": "\(error)"])
        }
    }

    /// Until when the services keep trying to deliver a device that is offline: until the issue is no longer
    /// news (`maximumAgeSeconds` after its publication).
    private func expiration(of event: KioskEvent) -> Date {
        let (end, overflow) = event.time.addingReportingOverflow(options.maximumAgeSeconds)
        return Date(timeIntervalSince1970: TimeInterval(overflow ? Int64.max : end))
    }

    /// A signed link to the issue's cover, nil when there is no signer or no cover.
    private func coverLink(_ issue: IssueRef, at now: Int64) async -> String? {
        guard let links else { return nil }
        let newest = try? await store.issues(editionID: issue.editionID, from: issue.date, direction: .descending, limit: 1).first
        guard let newest, newest.date == issue.date, let path = newest.coverPath else { return nil }
        return links.link(to: path, now: now)
    }

    private struct GroupKey: Hashable {
        var platform: PushPlatform
        var language: String
    }
}
