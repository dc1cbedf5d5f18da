#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import KioskIntegers
import NIOPosix

/// Where webhooks may be posted. A destination is refused when its host is a name kept for private networks
/// (`localhost`, `*.internal` such as `metadata.google.internal`, `*.local`, a name without a dot) or
/// resolves to any address that is not public (loopback, link-local, private, shared CGNAT, unspecified,
/// multicast, broadcast, reserved, and IPv6 forms that carry such an IPv4 address), unless the host is
/// allowed by name (`webhooks.allow_hosts`). Only `http` and `https`, without credentials in the URL.
///
/// Every address a name resolves to is checked, and the sender connects to one of those it checked (see
/// `WebhookSender`), so a name that resolves differently a moment later (DNS rebinding) does not reach a
/// private address. The check is made again at each try.
package struct DestinationPolicy: Sendable {
    /// Hosts allowed whatever they resolve to, compared with the URL's host in lower case (an IPv6 address
    /// without brackets).
    package var allowHosts: Set<String>
    package var resolver: any HostResolver

    package init(allowHosts: [String] = [], resolver: any HostResolver = SystemHostResolver()) {
        self.allowHosts = Set(allowHosts.map { Self.normalized($0) })
        self.resolver = resolver
    }

    /// Checks the URL's form and its host's name, without resolving it (for validating a configuration).
    package func checkForm(_ url: String) throws(DestinationRefused) -> WebhookURL {
        let parsed = try WebhookURL(url)
        if allowHosts.contains(parsed.host) { return parsed }
        if let literal = IPAddress(parsed.host) {
            if let kind = literal.refusal { throw DestinationRefused(url: url, reason: "\(parsed.host) is \(kind.phrase)\(allowHint(parsed))") }
            return parsed
        }
        if let reason = Self.refusedName(parsed.host) {
            throw DestinationRefused(url: url, reason: "\(parsed.host) \(reason)\(allowHint(parsed))")
        }
        return parsed
    }

    /// Checks `url` and resolves its host, checking every address; returns the destination to connect to.
    package func check(_ url: String) async throws(DestinationRefused) -> WebhookDestination {
        let parsed = try checkForm(url)
        if let literal = IPAddress(parsed.host) {
            return WebhookDestination(url: parsed, address: literal, allowedByName: allowHosts.contains(parsed.host))
        }
        let addresses: [IPAddress]
        do {
            addresses = try await resolver.addresses(of: parsed.host)
        } catch {
            throw DestinationRefused(url: url, reason: "\(parsed.host) could not be resolved (\(error))")
        }
        guard let first = addresses.first else {
            throw DestinationRefused(url: url, reason: "\(parsed.host) resolves to no address")
        }
        let allowed = allowHosts.contains(parsed.host)
        if !allowed {
            for address in addresses {
                if let kind = address.refusal {
                    throw DestinationRefused(url: url, reason: "\(parsed.host) resolves to \(address), \(kind.phrase)\(allowHint(parsed))")
                }
            }
        }
        return WebhookDestination(url: parsed, address: first, allowedByName: allowed)
    }

    private func allowHint(_ url: WebhookURL) -> String {
        "; webhooks may only go to public addresses (to allow this host, add \"\(url.host)\" to webhooks.allow_hosts)"
    }

    /// Why a host name is refused before resolving it; nil when it may be resolved.
    static func refusedName(_ host: String) -> String? {
        let suffixes = [".localhost", ".local", ".internal", ".home.arpa", ".lan", ".intranet", ".corp"]
        if host == "localhost" || suffixes.contains(where: { host.hasSuffix($0) }) || host == "metadata.goog" {
            return "is a name for local or private networks"
        }
        if !host.contains(".") {
            return "is a name without a domain, which the system would resolve in its own networks"
        }
        let allowed = host.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                 UInt8(ascii: "."), UInt8(ascii: "_"):
                true
            default:
                false
            }
        }
        if !allowed { return "is not a host name (letters, digits, '-', '_' and '.', or an IP address)" }
        return nil
    }

    static func normalized(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix("."), host.count > 1 { host.removeLast() }
        return host
    }
}

/// Why a destination is refused, with the URL and what to change.
package struct DestinationRefused: Error, Sendable, Hashable, CustomStringConvertible {
    package var url: String
    package var reason: String
    package init(url: String, reason: String) { self.url = url; self.reason = reason }
    package var description: String { "webhook destination \(url) refused: \(reason)" }
}

/// A webhook URL taken apart: `http` or `https`, a host, a port, and the path and query sent.
package struct WebhookURL: Sendable, Hashable {
    package enum Scheme: String, Sendable, Hashable {
        case http, https
        package var defaultPort: Int { self == .http ? 80 : 443 }
    }

    package var scheme: Scheme
    /// In lower case, without a trailing dot; an IPv6 address without brackets.
    package var host: String
    package var port: Int
    /// The path and query, percent-encoded as written; `/` when empty.
    package var target: String

    /// Reads `text`; throws why it is not a URL webhooks can be sent to.
    package init(_ text: String) throws(DestinationRefused) {
        let refuse = { (reason: String) in DestinationRefused(url: text, reason: reason) }
        guard let components = URLComponents(string: text), let scheme = components.scheme else {
            throw refuse("is not a URL (write it as https://host/path)")
        }
        guard let known = Scheme(rawValue: scheme.lowercased()) else {
            throw refuse("uses \(scheme):; webhooks are sent over http or https only")
        }
        guard components.user == nil, components.password == nil else {
            throw refuse("holds a user name or password; sign deliveries with the endpoint's secrets instead")
        }
        let written = components.percentEncodedHost ?? ""
        guard !written.isEmpty else { throw refuse("has no host") }
        guard !written.contains("%") else {
            throw refuse("has a percent-encoded host or an IPv6 zone; write the host plainly")
        }
        let host = DestinationPolicy.normalized(written)
        let port = components.port ?? known.defaultPort
        guard (1...65_535).contains(port) else { throw refuse("has port \(port), outside 1 to 65535") }
        var target = components.percentEncodedPath
        if target.isEmpty { target = "/" }
        if let query = components.percentEncodedQuery { target += "?" + query }
        self.scheme = known; self.host = host; self.port = port; self.target = target
    }

    /// The `Host` header: the host (IPv6 in brackets) and the port when it is not the scheme's.
    package var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == scheme.defaultPort ? name : "\(name):\(port)"
    }

    /// The URL with `address` in place of the host.
    func url(connectingTo address: IPAddress) -> String {
        let name = address.isIPv6 ? "[\(address)]" : "\(address)"
        return "\(scheme.rawValue)://\(name):\(port)\(target)"
    }

    var url: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return "\(scheme.rawValue)://\(name):\(port)\(target)"
    }
}

/// A destination the policy accepted: the URL and the address it was checked at.
package struct WebhookDestination: Sendable, Hashable {
    package var url: WebhookURL
    /// The address to connect to: one the policy checked (the first the resolver gave).
    package var address: IPAddress
    /// The host is in `allow_hosts`, so its addresses were not checked.
    package var allowedByName: Bool
}

/// Resolves host names to addresses.
package protocol HostResolver: Sendable {
    /// Every address of `host`; throws when it cannot be resolved.
    func addresses(of host: String) async throws -> [IPAddress]
}

/// The system's resolver (`getaddrinfo`), run on NIO's blocking thread pool, never on an event loop or the
/// cooperative pool.
package struct SystemHostResolver: HostResolver {
    package init() {}

    package func addresses(of host: String) async throws -> [IPAddress] {
        try await NIOThreadPool.singleton.runIfActive { try Self.resolve(host) }
    }

    static func resolve(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(bitPattern: SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            throw ResolutionFailed(host: host, message: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr, let read = IPAddress(socketAddress: address), !addresses.contains(read) {
                addresses.append(read)
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }
}

/// The system's resolver could not resolve a name.
package struct ResolutionFailed: Error, Sendable, CustomStringConvertible {
    package var host: String
    package var message: String
    package var description: String { "\(host): \(message)" }
}

/// An IPv4 or IPv6 address.
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    package let bytes: [UInt8]

    package var isIPv6: Bool { bytes.count == 16 }

    /// Reads an address literal (dotted quad, or IPv6 without brackets); nil for anything else.
    package init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    init?(socketAddress: UnsafeMutablePointer<sockaddr>) {
        switch Int32(widening: socketAddress.pointee.sa_family) {
        case AF_INET:
            bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
            }
        case AF_INET6:
            bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
            }
        default:
            return nil
        }
    }

    package var description: String {
        var buffer = [CChar](repeating: 0, count: Int(widening: INET6_ADDRSTRLEN) + 1)
        let family = isIPv6 ? AF_INET6 : AF_INET
        let written = bytes.withUnsafeBytes { raw in
            buffer.withUnsafeMutableBufferPointer { out in
                inet_ntop(family, raw.baseAddress, out.baseAddress, socklen_t(clamping: out.count))
            }
        }
        guard written != nil else { return bytes.map { String($0) }.joined(separator: ".") }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// What kind of address webhooks may not reach this is; nil for a public address.
    package var refusal: AddressKind? {
        bytes.count == 4 ? Self.ipv4Refusal(bytes) : ipv6Refusal
    }

    private static func ipv4Refusal(_ b: [UInt8]) -> AddressKind? {
        switch (b[0], b[1]) {
        case (0, _): .unspecified
        case (10, _), (172, 16...31), (192, 168): .privateNetwork
        case (100, 64...127): .sharedCGNAT
        case (127, _): .loopback
        case (169, 254): .linkLocal
        case (192, 0) where b[2] == 0: .reserved
        case (192, 0) where b[2] == 2, (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: .documentation
        case (198, 18...19): .reserved
        case (224...239, _): .multicast
        case (255, 255) where b[2] == 255 && b[3] == 255: .broadcast
        case (240...255, _): .reserved
        default: nil
        }
    }

    private var ipv6Refusal: AddressKind? {
        let b = bytes
        let zeroPrefix = b[0..<10].allSatisfy { $0 == 0 }
        if zeroPrefix, b[10] == 0xff, b[11] == 0xff { return Self.ipv4Refusal(Array(b[12..<16])).map { .embedding($0) } }
        if zeroPrefix, b[10] == 0, b[11] == 0 {
            if b[12..<15].allSatisfy({ $0 == 0 }) {
                if b[15] == 0 { return .unspecified }
                if b[15] == 1 { return .loopback }
            }
            return Self.ipv4Refusal(Array(b[12..<16])).map { .embedding($0) } ?? .reserved
        }
        // NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and 6to4 (2002::/16) carry an IPv4 address.
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xff, b[3] == 0x9b {
            if b[4..<12].allSatisfy({ $0 == 0 }) { return Self.ipv4Refusal(Array(b[12..<16])).map { .embedding($0) } }
            if b[4] == 0, b[5] == 1 { return .reserved }
        }
        if b[0] == 0x20, b[1] == 0x02 { return Self.ipv4Refusal(Array(b[2..<6])).map { .embedding($0) } }
        if b[0] == 0xfe, b[1] & 0xc0 == 0x80 { return .linkLocal }
        if b[0] == 0xfe, b[1] & 0xc0 == 0xc0 { return .privateNetwork }
        if b[0] & 0xfe == 0xfc { return .privateNetwork }
        if b[0] == 0xff { return .multicast }
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0d, b[3] == 0xb8 { return .documentation }
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x00, b[3] == 0x00 { return .reserved }
        if b[0] == 0x01, b[1..<8].allSatisfy({ $0 == 0 }) { return .reserved }
        return nil
    }
}

/// A kind of address webhooks may not reach.
package indirect enum AddressKind: Sendable, Hashable {
    case loopback, linkLocal, privateNetwork, sharedCGNAT, unspecified, multicast, broadcast, documentation, reserved
    /// An IPv6 address carrying an IPv4 address of that kind (mapped, compatible, NAT64, 6to4).
    case embedding(AddressKind)

    /// As a sentence says it: "a loopback address".
    package var phrase: String {
        switch self {
        case .loopback: "a loopback address"
        case .linkLocal: "a link-local address (such as cloud metadata's 169.254.169.254)"
        case .privateNetwork: "a private network address"
        case .sharedCGNAT: "a shared (carrier-grade NAT) address"
        case .unspecified: "the unspecified address"
        case .multicast: "a multicast address"
        case .broadcast: "the broadcast address"
        case .documentation: "an address reserved for documentation"
        case .reserved: "a reserved address"
        case .embedding(let inner): "an IPv6 form of \(inner.phrase)"
        }
    }
}
