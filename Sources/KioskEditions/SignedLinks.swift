import Crypto
import Foundation
import KioskIntegers
import KioskModels

/// The two signed-link formats a stock web server can also verify.
public enum LinkFormat: String, Sendable, CaseIterable {
    /// lighttpd `mod_secdownload`, `secdownload.algorithm = "hmac-sha256"`:
    /// `<prefix>/<token>/<hex timestamp>/<relative path>`, token = base64url (no padding) of
    /// HMAC-SHA256(secret, "/" + hex timestamp + "/" + relative path). The timestamp is the signing
    /// time (rounded up to the expiry bucket); the link is good for the lifetime after it (lighttpd's
    /// `secdownload.timeout`).
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
    /// Links signed within one bucket of this many seconds are identical, so every caller (and any cache)
    /// sees one URL per file per bucket; 0 or 1: off. At most `lifetimeSeconds` is used (see `stamp`).
    public let expiryBucketSeconds: Int64
    /// HMAC-SHA256 with the key already absorbed: each link copies it instead of redoing the key schedule.
    private let keyedMAC: HMAC<SHA256>
    private let secret: [UInt8]
    /// UTF-8 of `baseURL` and of `prefix`, written into every link as they are.
    private let baseBytes: [UInt8]
    private let prefixBytes: [UInt8]

    public init(format: LinkFormat = .kiosk, secret: String, prefix: String = "/files", baseURL: String,
                lifetimeSeconds: Int64 = 3600, expiryBucketSeconds: Int64 = 0) {
        self.format = format
        self.prefix = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.lifetimeSeconds = lifetimeSeconds
        self.expiryBucketSeconds = expiryBucketSeconds
        self.secret = Array(secret.utf8)
        self.keyedMAC = HMAC<SHA256>(key: SymmetricKey(data: self.secret))
        self.baseBytes = Array(self.baseURL.utf8)
        self.prefixBytes = Array(self.prefix.utf8)
    }

    /// An absolute URL for `relativePath`, valid from `now` for the lifetime (up to a bucket longer: `stamp`).
    public func link(to relativePath: String, now: Int64) -> String {
        render(relativePath, now: now, base: true)
    }

    public func linkBucket(now: Int64) -> Int64 { stamp(now: now) }

    /// The path and query of the link (what goes after the authority).
    public func path(to relativePath: String, now: Int64) -> String {
        render(relativePath, now: now, base: false)
    }

    /// The time a link signed at `now` carries: for `kiosk` the signing time (the verifier adds the
    /// lifetime L), for `nginx` the expiry. With a bucket B (`expiryBucketSeconds` clamped to 0...L) it is
    /// rounded up to a multiple of B, so the link stays good for at least L from `now` and less than L + B:
    ///
    /// - `nginx`: expires = ⌈(now + L) / B⌉·B, so now + L ≤ expires ≤ now + L + B − 1.
    /// - `kiosk`: timestamp t = ⌈now / B⌉·B. The verifier (ours, and lighttpd's `mod_secdownload`)
    ///   accepts a request at time r while |r − t| ≤ L, so the link is good until t + L, and
    ///   now + L ≤ t + L ≤ now + L + B − 1. t may lie up to B − 1 s after `now`, i.e. the link names a
    ///   signing time in the future; because B ≤ L that is inside the window the verifier accepts, so
    ///   the link is good from the moment it is handed out. (Rounding t down would instead cut up to
    ///   B − 1 s off the lifetime; a B above L would make a fresh link not yet valid.)
    ///
    /// Every `now` in one bucket ((k − 1)·B, k·B] (for `nginx`: every now + L) gives the same link.
    func stamp(now: Int64) -> Int64 {
        let bucket = max(0, min(expiryBucketSeconds, lifetimeSeconds))
        // A lifetime so long that the expiry passes Int64.max expires at Int64.max.
        let (expiry, overflow) = now.addingReportingOverflow(lifetimeSeconds)
        let value = format == .kiosk ? now : overflow ? .max : expiry
        return bucket > 1 ? Self.roundedUp(value, to: bucket) : value
    }

    /// The smallest multiple of `bucket` (> 0) at or above `value`; `value` itself where that would overflow.
    static func roundedUp(_ value: Int64, to bucket: Int64) -> Int64 {
        let remainder = value % bucket            // negative for a negative value
        guard remainder != 0 else { return value }
        let (rounded, overflow) = value.addingReportingOverflow(remainder > 0 ? bucket - remainder : -remainder)
        return overflow ? value : rounded
    }

    /// Base64url characters of a kiosk token (HMAC-SHA256) and of an nginx token (MD5).
    static let kioskTokenCount = Base64URL.encodedCount(SHA256.byteCount)
    static let nginxTokenCount = Base64URL.encodedCount(Insecure.MD5.byteCount)

    /// Writes the link into one string measured beforehand (no intermediate strings); the MAC is read in
    /// place and base64url-encoded straight into its slot in the link.
    private func render(_ relativePath: String, now: Int64, base: Bool) -> String {
        var relativePath = relativePath
        return relativePath.withUTF8 { path in
            let encodedCount = Self.percentEncodedCount(path)
            let head = (base ? baseBytes.count : 0) + prefixBytes.count + 1
            switch format {
            case .kiosk:
                // <base><prefix>/<token>/<hex timestamp>/<encoded path>; signed: "/<hex timestamp>/<path>".
                let timestamp = stamp(now: now)
                let digits = LinkBytes.digitCount(timestamp, radix: 16)
                let capacity = head + Self.kioskTokenCount + digits + 2 + encodedCount
                return String(unsafeUninitializedCapacity: capacity) { buffer in
                    var out = LinkBytes(buffer)
                    if base { out.append(baseBytes) }
                    out.append(prefixBytes)
                    out.append(UInt8(ascii: "/"))
                    let token = out.skip(Self.kioskTokenCount)
                    let message = out.position
                    out.append(UInt8(ascii: "/"))
                    out.append(timestamp, radix: 16, digits: digits)
                    out.append(UInt8(ascii: "/"))
                    writeKioskToken(signing: UnsafeBufferPointer(start: message, count: digits + 2), path, into: token)
                    Self.percentEncode(path, into: &out)
                    assert(out.count == capacity)
                    return capacity
                }
            case .nginx:
                // <base><prefix>/<encoded path>?md5=<token>&expires=<decimal>; signed: "<expires><prefix>/<path> <secret>".
                let expires = stamp(now: now)
                let digits = LinkBytes.digitCount(expires, radix: 10)
                let capacity = head + encodedCount + 5 + Self.nginxTokenCount + 9 + digits
                return String(unsafeUninitializedCapacity: capacity) { buffer in
                    var out = LinkBytes(buffer)
                    if base { out.append(baseBytes) }
                    out.append(prefixBytes)
                    out.append(UInt8(ascii: "/"))
                    Self.percentEncode(path, into: &out)
                    out.append("?md5=")
                    let token = out.skip(Self.nginxTokenCount)
                    out.append("&expires=")
                    let decimal = out.position
                    out.append(expires, radix: 10, digits: digits)
                    writeNginxToken(expires: UnsafeBufferPointer(start: decimal, count: digits), path, into: token)
                    assert(out.count == capacity)
                    return capacity
                }
            }
        }
    }

    /// Base64url of HMAC-SHA256(secret, `head` + `path`), `kioskTokenCount` bytes at `output`. The message
    /// is put together in a temporary buffer (on the stack when small): one update of the copied MAC.
    private func writeKioskToken(signing head: UnsafeBufferPointer<UInt8>, _ path: UnsafeBufferPointer<UInt8>,
                                 into output: UnsafeMutablePointer<UInt8>) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: head.count + path.count) { message in
            var cursor = LinkBytes(message)
            cursor.append(head)
            cursor.append(path)
            var mac = keyedMAC
            mac.update(data: UnsafeRawBufferPointer(message))
            _ = mac.finalize().withUnsafeBytes { Base64URL.encode($0, into: output) }
        }
    }

    /// Base64url of MD5(`expires` + prefix + "/" + `path` + " " + secret), `nginxTokenCount` bytes at `output`.
    private func writeNginxToken(expires: UnsafeBufferPointer<UInt8>, _ path: UnsafeBufferPointer<UInt8>,
                                 into output: UnsafeMutablePointer<UInt8>) {
        var md5 = Insecure.MD5()
        md5.update(bufferPointer: UnsafeRawBufferPointer(expires))
        prefixBytes.withUnsafeBytes { md5.update(bufferPointer: $0) }
        withUnsafeBytes(of: UInt8(ascii: "/")) { md5.update(bufferPointer: $0) }
        md5.update(bufferPointer: UnsafeRawBufferPointer(path))
        withUnsafeBytes(of: UInt8(ascii: " ")) { md5.update(bufferPointer: $0) }
        secret.withUnsafeBytes { md5.update(bufferPointer: $0) }
        _ = md5.finalize().withUnsafeBytes { Base64URL.encode($0, into: output) }
    }

    /// The token a kiosk link with this timestamp (hex, as in the link) and path must carry.
    func kioskToken(timestamp: String, relativePath: String) -> String {
        var timestamp = timestamp, relativePath = relativePath
        return timestamp.withUTF8 { stamp in
            relativePath.withUTF8 { path in
                var head = [UInt8]()
                head.reserveCapacity(stamp.count + 2)
                head.append(UInt8(ascii: "/")); head.append(contentsOf: stamp); head.append(UInt8(ascii: "/"))
                return String(unsafeUninitializedCapacity: Self.kioskTokenCount) { buffer in
                    let token = LinkBytes(buffer).position
                    head.withUnsafeBufferPointer { writeKioskToken(signing: $0, path, into: token) }
                    return Self.kioskTokenCount
                }
            }
        }
    }

    /// The token an nginx link with this `expires` (decimal, as in the link) and `uri` (the decoded path,
    /// prefix included) must carry.
    func nginxToken(expires: String, uri: String) -> String {
        var expires = expires, uri = uri
        var md5 = Insecure.MD5()
        expires.withUTF8 { md5.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        uri.withUTF8 { md5.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        withUnsafeBytes(of: UInt8(ascii: " ")) { md5.update(bufferPointer: $0) }
        secret.withUnsafeBytes { md5.update(bufferPointer: $0) }
        return md5.finalize().withUnsafeBytes { Base64URL.encode($0) }
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
            guard let signed = UInt64(timestamp, radix: 16), let signedAt = Int64(exactly: signed) else { return .expired }
            // As lighttpd: good while |now - timestamp| <= lifetime.
            let age = now - signedAt
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

    /// Whether `byte` stays as it is in a link: unreserved characters and `/`.
    @inline(__always)
    static func keepsUnencoded(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
             UInt8(ascii: "~"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    /// Length of `percentEncode` of `bytes`.
    static func percentEncodedCount(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var count = bytes.count
        for byte in bytes where !keepsUnencoded(byte) { count += 2 }
        return count
    }

    /// Writes `bytes` with every byte but unreserved characters and `/` as `%XX`.
    static func percentEncode(_ bytes: UnsafeBufferPointer<UInt8>, into out: inout LinkBytes) {
        let hex = LinkBytes.hexDigits(uppercase: true)
        for byte in bytes {
            if keepsUnencoded(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%")); out.append(hex[Int(widening: byte >> 4)]); out.append(hex[Int(widening: byte & 15)])
            }
        }
    }

    /// Encodes every byte but unreserved characters and `/`.
    static func percentEncode(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes in
            let count = percentEncodedCount(bytes)
            guard count > 0 else { return "" }
            return String(unsafeUninitializedCapacity: count) { buffer in
                var out = LinkBytes(buffer)
                percentEncode(bytes, into: &out)
                return out.count
            }
        }
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
