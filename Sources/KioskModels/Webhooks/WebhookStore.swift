/// Where webhook endpoints, their deliveries and the delivery log are kept. Safe across processes and
/// instances: a delivery is leased to one worker at a time, so no two instances post the same event to an
/// endpoint at the same moment, and a lease that runs out (its worker died) lets another take it.
public protocol WebhookStore: Sendable {
    /// Every endpoint, or an operator's (`owner`), by id.
    func webhookEndpoints(owner: String?) async throws -> [WebhookEndpoint]
    func webhookEndpoint(id: Int64) async throws -> WebhookEndpoint?
    /// Adds (`id` 0) or updates an endpoint; returns it as stored.
    func saveWebhookEndpoint(_ endpoint: WebhookEndpoint) async throws -> WebhookEndpoint
    /// Applies `change` to the endpoint `id` alone, leaving what deliveries record on it (its failures, a
    /// disabling by `410`) as they are; returns the endpoint as stored after it, nil when there is none.
    func changeWebhookEndpoint(id: Int64, _ change: WebhookEndpointChange) async throws -> WebhookEndpoint?
    /// Removes an endpoint with its pending deliveries; its log goes with it.
    func deleteWebhookEndpoint(id: Int64) async throws -> Bool
    /// Makes the file's endpoints (`source` `.file`) exactly `endpoints`, matched by name: new ones added, gone
    /// ones removed, changed ones updated keeping their id, their state (enabled, failing) and their log.
    func syncFileEndpoints(_ endpoints: [WebhookEndpoint]) async throws

    /// Offers the events not yet offered (oldest first, at most `limit`) to the endpoints enabled then that
    /// receive them: one delivery each, due at `now`. One instance at a time; returns how many events were offered.
    func dispatchEvents(limit: Int, at now: Int64) async throws -> Int
    /// Leases up to `limit` deliveries due at `now` (enabled endpoints only) to `worker` until `leaseUntil`,
    /// oldest due first, and at most `perEndpoint` of one endpoint's counting those `worker` holds already (1
    /// while the endpoint is failing: one try probes it until one succeeds), so that an endpoint that does not
    /// answer holds only its own places of the worker's. Other workers' leases do not count: a worker that
    /// died would otherwise hold an endpoint's places until its leases run out.
    /// A delivery leased to a worker whose lease has not run out is not taken.
    func claimDeliveries(worker: String, now: Int64, leaseUntil: Int64, limit: Int, perEndpoint: Int) async throws -> [WebhookDelivery]
    /// Records a try and what follows it, if `worker` still holds the lease (false otherwise: nothing is written).
    func finishDelivery(_ delivery: WebhookDelivery, worker: String, attempt: DeliveryAttempt, next: WebhookRetries.Next,
                        endpoint: WebhookRetries.EndpointChange) async throws -> Bool
    /// An endpoint's tries, newest first.
    func deliveryLog(endpointID: Int64, limit: Int) async throws -> [DeliveryAttempt]
    /// Queues `eventID` for `endpointID` again, due at `now` (the console's "send again"); false when the
    /// event is no longer kept or the endpoint does not exist.
    func redeliver(eventID: Int64, endpointID: Int64, at now: Int64) async throws -> Bool
    /// How many deliveries wait, and since when the oldest due one has (Unix seconds; nil when none).
    func deliveryBacklog(at now: Int64) async throws -> (waiting: Int, oldestDue: Int64?)
}

extension WebhookStore {
    /// `claimDeliveries` without a bound per endpoint.
    public func claimDeliveries(worker: String, now: Int64, leaseUntil: Int64, limit: Int) async throws -> [WebhookDelivery] {
        try await claimDeliveries(worker: worker, now: now, leaseUntil: leaseUntil, limit: limit, perEndpoint: .max)
    }
}

/// A change an operator makes to one endpoint, stored without rewriting the rest of its row.
public enum WebhookEndpointChange: Sendable, Hashable {
    /// On again, its past failures forgotten (a fresh start: they do not disable it again at once).
    case enable
    /// Off, with why.
    case disable(reason: String)
    /// Its signing secrets (the new one first during a rotation).
    case secrets([String])
}

/// A change `WebhookStore` refused.
public enum WebhookStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An update of an endpoint that is not (or no longer) stored.
    case unknownEndpoint(Int64)

    public var description: String {
        switch self {
        case .unknownEndpoint(let id): "no webhook endpoint has id \(id)"
        }
    }
}
