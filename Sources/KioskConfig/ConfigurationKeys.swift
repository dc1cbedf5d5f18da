import Yams

/// The keys a configuration file may contain, so that a misspelt key is an error rather than
/// silently ignored (YAML decoding skips keys it does not know).
package indirect enum ConfigurationKeys: Sendable {
    /// A scalar, or anything below it that is not checked (e.g. free-form section names).
    case value
    case map([String: ConfigurationKeys])
    /// A map whose keys are the operator's (e.g. web kiosk sections), values checked by the schema.
    case anyKeys(ConfigurationKeys)
    case list(ConfigurationKeys)

    package static let file: ConfigurationKeys = .map([
        "server": .map([
            "host": .value, "port": .value, "public_url": .value, "database": .value, "editions": .value,
            "samples": .value, "idle_timeout_seconds": .value, "json_logs": .value, "rpc_paths": .list(.value),
            "tls": .map(["certificate": .value, "key": .value]),
        ]),
        "limits": .map(["max_body_bytes": .value, "max_upload_bytes": .value, "database_busy_timeout_seconds": .value]),
        "sign_in": .map(["max_failures": .value, "window_seconds": .value]),
        "links": .map(["format": .value, "prefix": .value, "lifetime_seconds": .value, "expiry_bucket_seconds": .value]),
        "web_kiosk_token_lifetime_seconds": .value,
        "secret_file": .value,
        "metrics": .map(["loopback_only": .value, "credentials": .list(credential)]),
        "api_clients": .list(credential),
        "publishers": .list(credential),
        "publications": .list(.map([
            "id": .value, "name": .value,
            "editions": .list(.map(["id": .value, "name": .value, "created": .value])),
        ])),
        "apps": .list(.map([
            "key": .value, "name": .value, "demo_quota": .value,
            "web_kiosk": .map([
                "base_url": .value, "sections": .anyKeys(.value), "default_section": .value,
                "aliases": .anyKeys(.list(.value)),
            ]),
            "lines": .list(.map(["edition": .value, "order": .value, "access": .value])),
        ])),
    ])

    package static let credential: ConfigurationKeys = .map(["username": .value, "password_hash": .value])

    /// The first key of `node` this schema does not know, as a path like `apps[0].lines[1].acces`.
    package func unknownKey(in node: Node, path: String = "") -> String? {
        switch (self, node) {
        case (.map(let keys), .mapping(let mapping)):
            for (key, value) in mapping {
                let name = key.string ?? "\(key)"
                let childPath = path.isEmpty ? name : path + "." + name
                guard let schema = keys[name] else { return childPath }
                if let unknown = schema.unknownKey(in: value, path: childPath) { return unknown }
            }
        case (.anyKeys(let schema), .mapping(let mapping)):
            for (key, value) in mapping {
                if let unknown = schema.unknownKey(in: value, path: path + "." + (key.string ?? "\(key)")) { return unknown }
            }
        case (.list(let schema), .sequence(let sequence)):
            for (index, element) in sequence.enumerated() {
                if let unknown = schema.unknownKey(in: element, path: path + "[\(index)]") { return unknown }
            }
        default:
            break
        }
        return nil
    }
}
