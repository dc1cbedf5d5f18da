import Foundation
import KioskModels
import Yams

// Every key is optional in the file: a missing one keeps its default.
extension KioskConfiguration {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = KioskConfiguration()
        server = try c.decodeIfPresent(Server.self, forKey: .server) ?? defaults.server
        limits = try c.decodeIfPresent(Limits.self, forKey: .limits) ?? defaults.limits
        signIn = try c.decodeIfPresent(SignIn.self, forKey: .signIn) ?? defaults.signIn
        links = try c.decodeIfPresent(Links.self, forKey: .links) ?? defaults.links
        metrics = try c.decodeIfPresent(Metrics.self, forKey: .metrics) ?? defaults.metrics
        webKioskTokenLifetimeSeconds = try c.decodeIfPresent(Int.self, forKey: .webKioskTokenLifetimeSeconds)
            ?? defaults.webKioskTokenLifetimeSeconds
        secretFile = try c.decodeIfPresent(String.self, forKey: .secretFile)
        apiClients = try c.decodeIfPresent([Credential].self, forKey: .apiClients) ?? []
        publishers = try c.decodeIfPresent([Credential].self, forKey: .publishers) ?? []
        publications = try c.decodeIfPresent([PublicationEntry].self, forKey: .publications) ?? []
        apps = try c.decodeIfPresent([AppEntry].self, forKey: .apps) ?? []
    }
}

extension KioskConfiguration.Server {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        host = try c.decodeIfPresent(String.self, forKey: .host) ?? d.host
        port = try c.decodeIfPresent(Int.self, forKey: .port) ?? d.port
        publicURL = try c.decodeIfPresent(String.self, forKey: .publicURL)
        database = try c.decodeIfPresent(String.self, forKey: .database) ?? d.database
        editions = try c.decodeIfPresent(String.self, forKey: .editions) ?? d.editions
        samples = try c.decodeIfPresent(String.self, forKey: .samples)
        tls = try c.decodeIfPresent(KioskConfiguration.TLS.self, forKey: .tls)
        idleTimeoutSeconds = try c.decodeIfPresent(Int.self, forKey: .idleTimeoutSeconds) ?? d.idleTimeoutSeconds
        jsonLogs = try c.decodeIfPresent(Bool.self, forKey: .jsonLogs) ?? d.jsonLogs
        rpcPaths = try c.decodeIfPresent([String].self, forKey: .rpcPaths) ?? d.rpcPaths
    }
}

extension KioskConfiguration.Limits {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        maxBodyBytes = try c.decodeIfPresent(Int.self, forKey: .maxBodyBytes) ?? d.maxBodyBytes
        maxUploadBytes = try c.decodeIfPresent(Int.self, forKey: .maxUploadBytes) ?? d.maxUploadBytes
        databaseBusyTimeoutSeconds = try c.decodeIfPresent(Double.self, forKey: .databaseBusyTimeoutSeconds)
            ?? d.databaseBusyTimeoutSeconds
    }
}

extension KioskConfiguration.SignIn {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        maxFailures = try c.decodeIfPresent(Int.self, forKey: .maxFailures) ?? d.maxFailures
        windowSeconds = try c.decodeIfPresent(Int.self, forKey: .windowSeconds) ?? d.windowSeconds
    }
}

extension KioskConfiguration.Links {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = Self()
        format = try c.decodeIfPresent(String.self, forKey: .format) ?? d.format
        prefix = try c.decodeIfPresent(String.self, forKey: .prefix) ?? d.prefix
        lifetimeSeconds = try c.decodeIfPresent(Int.self, forKey: .lifetimeSeconds) ?? d.lifetimeSeconds
        expiryBucketSeconds = try c.decodeIfPresent(Int.self, forKey: .expiryBucketSeconds) ?? d.expiryBucketSeconds
    }
}

extension KioskConfiguration.WebKioskEntry {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        baseURL = try c.decode(String.self, forKey: .baseURL)
        sections = try c.decodeIfPresent(KioskConfiguration.OrderedPaths.self, forKey: .sections) ?? .init()
        defaultSection = try c.decodeIfPresent(String.self, forKey: .defaultSection)
        aliases = try c.decodeIfPresent([String: [String]].self, forKey: .aliases) ?? [:]
    }
}

extension KioskConfiguration.Metrics {
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        loopbackOnly = try c.decodeIfPresent(Bool.self, forKey: .loopbackOnly)
        credentials = try c.decodeIfPresent([KioskConfiguration.Credential].self, forKey: .credentials) ?? []
    }
}
