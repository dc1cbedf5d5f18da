import Crypto
import KioskModels

/// The two signed-link formats a stock web server can also verify.
public enum LinkFormat: String, Sendable, CaseIterable {
    /// lighttpd `mod_secdownload`, `secdownload.algorithm = "hmac-sha256"`:
    /// `<prefix>/<token>/<hex timestamp>/<relative path>`, token = base64url (no padding) of
    /// HMAC-SHA256(secret, "/" + hex timestamp + "/" + relative path). The timestamp is the signing
    /// time; the link is good for the lifetime after it (lighttpd's `secdownload.timeout`).
    case kiosk
    /// nginx `secure_link`: `<prefix>/<relative path>?md5=<token>&expires=<unix time>`, token =
    /// base64url (no padding) of MD5("<expires><uri> <secret>") where `<uri>` is the decoded path
    /// (nginx's `$uri`), as verified by
    /// `secure_link $arg_md5,$arg_expires; secure_link_md5 "$secure_link_expires$uri <secret>";`.
    case nginx
}

/// What a request's link turned out to be.
public enum LinkCheck: Sendable, Equatable {
    /// Authentic and in time: serve this path (relative to the editions directory, not yet checked on disk).
    case valid(relativePath: String)
    /// Malformed, or a token that does not match: 403. The reason is for logs, not for the client.
    case forbidden(reason: String)
    /// Authentic but out of its lifetime: 410.
    case expired
}

/// Signs and verifies time-limited links to files under the editions directory.
///
/// The secret is used as the bytes of its text, as both web servers take it from their configuration.
/// Verification decodes the path once (`%2e%2e` is two dots, `%252e` stays `%2e` and is refused later),
/// compares tokens in constant time, and never looks at the disk.
public struct SignedLinks: LinkSigning, Sendable {
    public let format: LinkFormat
    /// Path prefix of every link, e.g. `/files` (starts with `/`, no trailing `/`).
    public let prefix: String
    /// Scheme and authority put before the path, e.g. `https://kiosk.example.cat` (no trailing `/`).
    public let baseURL: String
    public let lifetimeSeconds: Int64
    /// HMAC-SHA256 with the key already absorbed: each link copies it instead of redoing the key schedule.
    private let keyedMAC: HMAC<SHA256>
    private let secret: [UInt8]

    public init(format: LinkFormat = .kiosk, secret: String, prefix: String = "/files", baseURL: String,
                lifetimeSeconds: Int64 = 3600) {
        self.format = format
        self.prefix = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.lifetimeSeconds = lifetimeSeconds
        self.secret = Array(secret.utf8)
        self.keyedMAC = HMAC<SHA256>(key: SymmetricKey(data: self.secret))
    }

    /// An absolute URL for `relativePath`, valid from `now` for the lifetime.
    public func link(to relativePath: String, now: Int64) -> String {
        baseURL + path(to: relativePath, now: now)
    }

    /// The path and query of the link (what goes after the authority).
    public func path(to relativePath: String, now: Int64) -> String {
        let encoded = Self.percentEncode(relativePath)
        switch format {
        case .kiosk:
            let timestamp = String(now, radix: 16)
            return "\(prefix)/\(kioskToken(timestamp: timestamp, relativePath: relativePath))/\(timestamp)/\(encoded)"
        case .nginx:
            let expires = now + lifetimeSeconds
            return "\(prefix)/\(encoded)?md5=\(nginxToken(expires: String(expires), uri: "\(prefix)/\(relativePath)"))&expires=\(expires)"
        }
    }

    func kioskToken(timestamp: String, relativePath: String) -> String {
        var mac = keyedMAC
        mac.update(data: Array("/\(timestamp)/\(relativePath)".utf8))
        return Base64URL.encode(mac.finalize())
    }

    func nginxToken(expires: String, uri: String) -> String {
        Base64URL.encode(Insecure.MD5.hash(data: Array("\(expires)\(uri) ".utf8) + secret))
    }

    /// Checks a request: `rawPath` as received (still percent-encoded), `query` without the `?`.
    public func verify(rawPath: String, query: String?, now: Int64) -> LinkCheck {
        // Byte comparisons throughout: String's hasPrefix/contains compare grapheme clusters, so a
        // combining mark after a "/" would hide it (found by Fuzz/targets/FuzzLinks.swift).
        let under = Array((prefix + "/").utf8)
        guard rawPath.utf8.starts(with: under) else { return .forbidden(reason: "not under \(prefix)/") }
        guard let path = Self.percentDecode(rawPath) else { return .forbidden(reason: "bad percent-encoding") }
        guard path.utf8.starts(with: under) else { return .forbidden(reason: "not under \(prefix)/") }
        let rest = path.utf8.dropFirst(prefix.utf8.count + 1)
        switch format {
        case .kiosk:
            // <token:43>/<hex timestamp:1-16>/<relative path>
            let parts = rest.split(separator: UInt8(ascii: "/"), maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].count == 43, (1...16).contains(parts[1].count),
                  parts[1].allSatisfy({ Self.isHex($0) }), !parts[2].isEmpty
            else { return .forbidden(reason: "malformed link") }
            let token = Array(parts[0])
            let timestamp = String(decoding: parts[1], as: UTF8.self)
            let relative = String(decoding: parts[2], as: UTF8.self)
            let expected = Array(kioskToken(timestamp: timestamp, relativePath: relative).utf8)
            guard ConstantTime.equals(token, expected) else { return .forbidden(reason: "bad token") }
            guard let signed = UInt64(timestamp, radix: 16), signed <= UInt64(Int64.max) else { return .expired }
            // As lighttpd: good while |now - timestamp| <= lifetime.
            let age = now - Int64(signed)
            guard age <= lifetimeSeconds, age >= -lifetimeSeconds else { return .expired }
            return .valid(relativePath: relative)
        case .nginx:
            var token: Substring?
            var expires: Substring?
            for pair in (query ?? "").split(separator: "&") {
                if pair.hasPrefix("md5=") { token = pair.dropFirst(4) }
                if pair.hasPrefix("expires=") { expires = pair.dropFirst(8) }
            }
            guard let token, let expires, !expires.isEmpty, expires.count <= 18,
                  expires.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let deadline = Int64(expires)
            else { return .forbidden(reason: "missing or malformed md5/expires") }
            // nginx signs its normalised $uri; a path that normalisation would change was not signed by us.
            let bytes = Array(path.utf8)
            guard !Self.contains(bytes, "//"), !Self.contains(bytes, "/./"), !Self.contains(bytes, "/../"),
                  !bytes.reversed().starts(with: "./".utf8), !bytes.reversed().starts(with: "../".utf8)
            else { return .forbidden(reason: "unnormalised path") }
            let expected = Array(nginxToken(expires: String(expires), uri: path).utf8)
            guard ConstantTime.equals(Array(token.utf8), expected) else { return .forbidden(reason: "bad token") }
            guard deadline >= now else { return .expired }
            return .valid(relativePath: String(decoding: rest, as: UTF8.self))
        }
    }

    /// Whether `bytes` contains the bytes of `needle` (bytes, not grapheme clusters).
    static func contains(_ bytes: [UInt8], _ needle: StaticString) -> Bool {
        let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
        guard bytes.count >= pattern.count else { return false }
        for start in 0...(bytes.count - pattern.count) where bytes[start..<(start + pattern.count)].elementsEqual(pattern) {
            return true
        }
        return false
    }

    static func isHex(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) || (0x41...0x46).contains(byte)
    }

    /// Encodes every byte but unreserved characters and `/`.
    static func percentEncode(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%")); out.append(hex[Int(byte >> 4)]); out.append(hex[Int(byte & 15)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `%XX` once. Nil for a malformed escape, a NUL, or bytes that are not UTF-8.
    public static func percentDecode(_ text: String) -> String? {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        func value(_ byte: UInt8?) -> UInt8? {
            guard let byte else { return nil }
            switch byte {
            case 0x30...0x39: return byte - 0x30
            case 0x41...0x46: return byte - 0x41 + 10
            case 0x61...0x66: return byte - 0x61 + 10
            default: return nil
            }
        }
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = value(iterator.next()), let low = value(iterator.next()) else { return nil }
                out.append(high << 4 | low)
            } else {
                out.append(byte)
            }
        }
        guard !out.contains(0) else { return nil }
        return String(validating: out, as: UTF8.self)
    }
}
