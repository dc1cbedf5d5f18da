import Foundation
@testable import KioskEditions
import KioskModels
import Testing

@Suite struct SignedLinksTests {
    let secret = "s3cr3t-for-tests-0123456789abcdefghij"
    let relative = "1/2025-06-30/r2/jpgA/001.jpg"
    let now: Int64 = 1_751_284_800   // 2025-06-30T12:00:00Z

    func links(_ format: LinkFormat, lifetime: Int64 = 3600) -> SignedLinks {
        SignedLinks(format: format, secret: secret, prefix: "/files", baseURL: "https://kiosk.example.cat/", lifetimeSeconds: lifetime)
    }

    /// Splits a link into the raw path and query, as a server receives them.
    func request(_ url: String) -> (path: String, query: String?) {
        let path = String(url.dropFirst("https://kiosk.example.cat".count))
        guard let mark = path.firstIndex(of: "?") else { return (path, nil) }
        return (String(path[..<mark]), String(path[path.index(after: mark)...]))
    }

    func python(_ code: String, _ arguments: String...) throws -> String {
        let result = try run(["python3", "-c", code] + arguments)
        guard result.status == 0 else { throw CheckFailure(result.error) }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func kioskFormatIsLighttpdSecdownloadHMACSHA256() throws {
        let url = links(.kiosk).link(to: relative, now: now)
        let hex = String(now, radix: 16)
        // Computed independently, exactly as lighttpd's mod_secdownload documents it.
        let token = try python("""
            import base64, hashlib, hmac, sys
            mac = hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha256).digest()
            print(base64.urlsafe_b64encode(mac).rstrip(b'=').decode())
            """, secret, "/\(hex)/\(relative)")
        #expect(token.count == 43)
        #expect(url == "https://kiosk.example.cat/files/\(token)/\(hex)/\(relative)")
        let (path, query) = request(url)
        #expect(links(.kiosk).verify(rawPath: path, query: query, now: now) == .valid(relativePath: relative))
        #expect(links(.kiosk).verify(rawPath: path, query: query, now: now + 3600) == .valid(relativePath: relative))
        // One signer, many links (each copies the keyed HMAC): every token is still the independent one.
        let signer = links(.kiosk)
        for (index, other) in ["1/2025-06-30/r1/jpg/001.jpg", relative, "8/2025-05-31/r2/8-2025-05-31.zip"].enumerated() {
            let stamp = String(now + Int64(index), radix: 16)
            let expected = try python("""
                import base64, hashlib, hmac, sys
                print(base64.urlsafe_b64encode(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha256).digest()).rstrip(b'=').decode())
                """, secret, "/\(stamp)/\(other)")
            #expect(signer.link(to: other, now: now + Int64(index)) == "https://kiosk.example.cat/files/\(expected)/\(stamp)/\(other)")
        }
    }

    @Test func nginxFormatIsSecureLinkMD5() throws {
        let url = links(.nginx).link(to: relative, now: now)
        let expires = now + 3600
        let token = try python("""
            import base64, hashlib, sys
            print(base64.urlsafe_b64encode(hashlib.md5(sys.argv[1].encode()).digest()).rstrip(b'=').decode())
            """, "\(expires)/files/\(relative) \(secret)")
        #expect(url == "https://kiosk.example.cat/files/\(relative)?md5=\(token)&expires=\(expires)")
        let (path, query) = request(url)
        #expect(links(.nginx).verify(rawPath: path, query: query, now: now) == .valid(relativePath: relative))
        #expect(links(.nginx).verify(rawPath: path, query: query, now: expires) == .valid(relativePath: relative))
        // Query parameters in another order, or with others around, are fine.
        #expect(links(.nginx).verify(rawPath: path, query: "x=1&expires=\(expires)&md5=\(token)", now: now) == .valid(relativePath: relative))
    }

    /// A difference at any position of a token is seen. (That the comparison takes the same time
    /// whatever the bytes is by construction in `ConstantTime.equals`; it is not timed here.)
    @Test func tokenComparisonLooksAtEveryByte() {
        let token = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFG".utf8)
        #expect(ConstantTime.equals(token, token))
        for index in token.indices {
            var other = token
            other[index] ^= 0x01
            #expect(!ConstantTime.equals(token, other), "a difference at byte \(index) went unseen")
        }
        #expect(!ConstantTime.equals(token, Array(token.dropLast())))
        #expect(!ConstantTime.equals([], token))
        #expect(ConstantTime.equals([], []))
    }

    @Test(arguments: LinkFormat.allCases)
    func tamperedLinksAreForbidden(format: LinkFormat) {
        let signer = links(format)
        let (path, query) = request(signer.link(to: relative, now: now))
        func check(_ path: String, _ query: String?) -> LinkCheck { signer.verify(rawPath: path, query: query, now: now) }
        func isForbidden(_ result: LinkCheck) -> Bool { if case .forbidden = result { true } else { false } }
        // Another file with the same token.
        #expect(isForbidden(check(path.replacingOccurrences(of: "001.jpg", with: "002.jpg"), query)))
        #expect(isForbidden(check(path.replacingOccurrences(of: "jpgA/001.jpg", with: "1-2025-06-30.zip"), query)))
        // Another secret.
        let other = SignedLinks(format: format, secret: secret + "x", prefix: "/files", baseURL: "https://kiosk.example.cat")
        #expect(isForbidden(check(request(other.link(to: relative, now: now)).path, request(other.link(to: relative, now: now)).query)))
        switch format {
        case .kiosk:
            // A later timestamp (to extend the lifetime) breaks the token.
            let later = String(now + 7200, radix: 16)
            #expect(isForbidden(check(path.replacingOccurrences(of: String(now, radix: 16), with: later), query)))
            var token = Array(path.dropFirst("/files/".count).prefix(43))
            token[5] = token[5] == "A" ? "B" : "A"
            #expect(isForbidden(check("/files/" + String(token) + path.dropFirst("/files/".count + 43), query)))
            #expect(isForbidden(check("/files/short/\(String(now, radix: 16))/\(relative)", nil)))
            #expect(isForbidden(check(path.replacingOccurrences(of: "/\(String(now, radix: 16))/", with: "/xyz/"), query)))
        case .nginx:
            #expect(isForbidden(check(path, query?.replacingOccurrences(of: "expires=\(now + 3600)", with: "expires=\(now + 99_999)"))))
            #expect(isForbidden(check(path, nil)))
            #expect(isForbidden(check(path, "expires=\(now + 3600)")))
            #expect(isForbidden(check(path, "md5=&expires=\(now + 3600)")))
        }
        // Outside the prefix, or with dot segments spelled out.
        #expect(isForbidden(check("/other" + path, query)))
        #expect(isForbidden(check(path.replacingOccurrences(of: "r2/", with: "r2/%2e%2e/r2/"), query)))
        #expect(isForbidden(check(path + "%", query)))
        #expect(isForbidden(check(path + "%00", query)))
    }

    @Test(arguments: LinkFormat.allCases)
    func expiredLinksAreGone(format: LinkFormat) {
        let signer = links(format, lifetime: 60)
        let (path, query) = request(signer.link(to: relative, now: now))
        #expect(signer.verify(rawPath: path, query: query, now: now + 60) == .valid(relativePath: relative))
        #expect(signer.verify(rawPath: path, query: query, now: now + 61) == .expired)
        #expect(signer.verify(rawPath: path, query: query, now: now + 86_400) == .expired)
    }

    @Test func percentEncodedLinksVerifyAfterOneDecoding() {
        let signer = links(.kiosk)
        let (path, query) = request(signer.link(to: relative, now: now))
        // A client that encodes characters needlessly still gets the file.
        #expect(signer.verify(rawPath: path.replacingOccurrences(of: "jpgA", with: "jpg%41"), query: query, now: now)
            == .valid(relativePath: relative))
        // Double encoding is decoded once only: "%252e" becomes the literal "%2e", never "..".
        let twice = SignedLinks.percentDecode("/files/a/%252e%252e/b")
        #expect(twice == "/files/a/%2e%2e/b")
        #expect(!EditionsDirectory.isServablePath("a/%2e%2e/b"))
    }
}
