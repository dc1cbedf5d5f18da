import KioskTestSupport
import Crypto
import Foundation
@testable import KioskEditions
import KioskModels
import Testing
@testable import KioskFiles

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

    func python(_ code: String, _ arguments: String...) async throws -> String {
        let result = try await run(["python3", "-c", code] + arguments)
        guard result.status == 0 else { throw CheckFailure(result.error) }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func kioskFormatIsLighttpdSecdownloadHMACSHA256() async throws {
        let url = links(.kiosk).link(to: relative, now: now)
        let hex = String(now, radix: 16)
        // Computed independently, exactly as lighttpd's mod_secdownload documents it.
        let token = try await python("""
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
            let expected = try await python("""
                import base64, hashlib, hmac, sys
                print(base64.urlsafe_b64encode(hmac.new(sys.argv[1].encode(), sys.argv[2].encode(), hashlib.sha256).digest()).rstrip(b'=').decode())
                """, secret, "/\(stamp)/\(other)")
            #expect(signer.link(to: other, now: now + Int64(index)) == "https://kiosk.example.cat/files/\(expected)/\(stamp)/\(other)")
        }
    }

    @Test func nginxFormatIsSecureLinkMD5() async throws {
        let url = links(.nginx).link(to: relative, now: now)
        let expires = now + 3600
        let token = try await python("""
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

    /// Relative paths of 0 to 300 UTF-8 bytes: ASCII, characters that must be escaped, two-, three- and
    /// four-byte characters, combining marks.
    static func variedPaths() -> [String] {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", "/", "-", ".", "_", "~", " ", "%", "?", "#", "&", "=", "+", ":", "@",
                                      "é", "ç", "·", "ß", "中", "文", "€", "\u{0301}", "\u{035A}", "😀", "𝄞", "\u{FFFD}"]
        var noise = Noise(seed: 42)
        return (0...300).map { length in
            var path = String.UnicodeScalarView()
            var bytes = 0
            while true {
                let scalar = pool[Int(noise.next() % UInt64(pool.count))]
                let size = String(scalar).utf8.count
                if bytes + size > length { break }
                path.append(scalar)
                bytes += size
            }
            while bytes < length { path.append("x"); bytes += 1 }
            return String(path)
        }
    }

    /// Every link of many paths (0-300 bytes, escapes, unicode) and signing times, in both formats, equals
    /// the one Python builds from the documented recipe (`hmac`, `hashlib`, `base64`, `urllib.parse.quote`).
    @Test func manyLinksMatchAnIndependentImplementation() async throws {
        let paths = Self.variedPaths()
        let times: [Int64] = [0, 1, 15, 16, now, 0xFFFF_FFFF, (1 << 40) + 12_345]
        let cases = paths.enumerated().map { (index, path) in (path, times[index % times.count]) }
        let temp = TemporaryFolder()
        let input = temp.path + "/cases.json"
        let json = try JSONSerialization.data(withJSONObject: cases.map { [$0.0, Int($0.1)] as [Any] })
        try json.write(to: URL(fileURLWithPath: input))
        let output = try await python("""
            import base64, hashlib, hmac, json, sys
            from urllib.parse import quote
            secret, base, prefix, lifetime = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
            b64 = lambda raw: base64.urlsafe_b64encode(raw).rstrip(b'=').decode()
            out = []
            for path, now in json.load(open(sys.argv[5])):
                stamp = format(now, 'x')
                mac = hmac.new(secret.encode(), ('/' + stamp + '/' + path).encode(), hashlib.sha256).digest()
                kiosk = base + prefix + '/' + b64(mac) + '/' + stamp + '/' + quote(path, safe='/')
                expires = now + lifetime
                md5 = hashlib.md5((str(expires) + prefix + '/' + path + ' ' + secret).encode()).digest()
                nginx = base + prefix + '/' + quote(path, safe='/') + '?md5=' + b64(md5) + '&expires=' + str(expires)
                out.append([kiosk, nginx])
            print(json.dumps(out))
            """, secret, "https://kiosk.example.cat", "/files", "3600", input)
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String]])
        #expect(expected.count == cases.count)
        let kiosk = links(.kiosk), nginx = links(.nginx)
        for ((path, time), pair) in zip(cases, expected) {
            #expect(kiosk.link(to: path, now: time) == pair[0], "kiosk \(path.debugDescription) at \(time)")
            #expect(nginx.link(to: path, now: time) == pair[1], "nginx \(path.debugDescription) at \(time)")
            #expect("https://kiosk.example.cat" + kiosk.path(to: path, now: time) == pair[0])
            #expect("https://kiosk.example.cat" + nginx.path(to: path, now: time) == pair[1])
            if !path.isEmpty, !path.utf8.contains(0) {
                let (raw, query) = request(pair[0])
                #expect(kiosk.verify(rawPath: raw, query: query, now: time) == .valid(relativePath: path), "\(path.debugDescription)")
            }
        }
        // Negative times are spelled as String(_:radix:) spells them (such links never verify).
        #expect(kiosk.path(to: "a", now: -255).contains("/-ff/a"))
        #expect(nginx.path(to: "a", now: -7_200).hasSuffix("&expires=-3600"))
    }

    /// Base64url against Foundation's base64 (with the URL alphabet, unpadded), for every length up to 100,
    /// through each entry point: contiguous bytes, a MAC, any sequence, raw memory.
    @Test func base64URLMatchesFoundation() {
        var noise = Noise(seed: 5)
        for length in 0...100 {
            var bytes = [UInt8]()
            while bytes.count < length { bytes.append(UInt8(truncatingIfNeeded: noise.next())) }
            let reference = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == reference, "length \(length)")
            #expect(Base64URL.encode(AnySequence(bytes)) == reference, "length \(length), generic")
            #expect(bytes.withUnsafeBytes { Base64URL.encode($0) } == reference, "length \(length), raw")
            #expect(Base64URL.encodedCount(length) == reference.utf8.count)
            #expect(Base64URL.decode(reference) == bytes)
        }
        let mac = HMAC<SHA256>.authenticationCode(for: Array("message".utf8), using: SymmetricKey(data: Array(secret.utf8)))
        #expect(Base64URL.encode(mac) == Base64URL.encode(Array(mac)))
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

    /// With an expiry bucket B, every link signed within one bucket is the same, it verifies from the
    /// moment it is signed, and it expires at least the lifetime L and less than L + B after signing:
    /// checked at the edges of a bucket, one second each side of the deadline, for both formats.
    @Test(arguments: LinkFormat.allCases)
    func bucketedLinksLastAtLeastTheLifetimeAndLessThanABucketMore(format: LinkFormat) {
        let lifetime: Int64 = 3600, bucket: Int64 = 300
        let signer = SignedLinks(format: format, secret: secret, prefix: "/files", baseURL: "https://kiosk.example.cat",
                                 lifetimeSeconds: lifetime, expiryBucketSeconds: bucket)
        let edge = (now / bucket + 1) * bucket      // a multiple of B after `now`
        // The deadline of a link signed at t: for kiosk the rounded timestamp + L, for nginx the rounded expiry.
        func deadline(_ link: String) -> Int64 {
            switch format {
            case .kiosk: Int64(link.split(separator: "/")[4], radix: 16)! + lifetime
            case .nginx: Int64(link.split(separator: "=").last!)!
            }
        }
        var previous: String?
        for signedAt in [edge - bucket + 1, edge - bucket / 2, edge - 1, edge] {
            let link = signer.link(to: relative, now: signedAt)
            if let previous { #expect(link == previous, "signed at \(signedAt): another link within the bucket") }
            previous = link
            let end = deadline(link)
            #expect(end - signedAt >= lifetime && end - signedAt < lifetime + bucket, "signed at \(signedAt): good until \(end)")
            #expect(end == edge + lifetime)
            let (path, query) = request(link)
            for at in [signedAt, signedAt + lifetime, end] {
                #expect(signer.verify(rawPath: path, query: query, now: at) == .valid(relativePath: relative), "signed at \(signedAt), checked at \(at)")
            }
            #expect(signer.verify(rawPath: path, query: query, now: end + 1) == .expired)
        }
        // One second into the next bucket: the next link, a bucket later.
        let next = signer.link(to: relative, now: edge + 1)
        #expect(next != previous)
        #expect(deadline(next) == edge + bucket + lifetime)
        // The same link is what an unbucketed signer hands out at the bucket's edge.
        let plain = SignedLinks(format: format, secret: secret, prefix: "/files", baseURL: "https://kiosk.example.cat",
                                lifetimeSeconds: lifetime)
        #expect(plain.link(to: relative, now: edge) == previous)
        // 0 (and 1) turn it off.
        for off: Int64 in [0, 1] {
            let unbucketed = SignedLinks(format: format, secret: secret, prefix: "/files", baseURL: "https://kiosk.example.cat",
                                         lifetimeSeconds: lifetime, expiryBucketSeconds: off)
            #expect(unbucketed.link(to: relative, now: now + 7) == plain.link(to: relative, now: now + 7))
        }
    }

    /// A bucket longer than the lifetime is clamped to it: a kiosk link's timestamp never lies more than
    /// the lifetime ahead, so a fresh link is valid at once.
    @Test(arguments: LinkFormat.allCases)
    func aBucketLongerThanTheLifetimeIsClamped(format: LinkFormat) {
        let lifetime: Int64 = 60
        let signer = SignedLinks(format: format, secret: secret, prefix: "/files", baseURL: "https://kiosk.example.cat",
                                 lifetimeSeconds: lifetime, expiryBucketSeconds: 86_400)
        let clamped = SignedLinks(format: format, secret: secret, prefix: "/files", baseURL: "https://kiosk.example.cat",
                                  lifetimeSeconds: lifetime, expiryBucketSeconds: lifetime)
        for signedAt in (now + 1)...(now + lifetime) {
            let link = signer.link(to: relative, now: signedAt)
            #expect(link == clamped.link(to: relative, now: signedAt))
            let (path, query) = request(link)
            #expect(signer.verify(rawPath: path, query: query, now: signedAt) == .valid(relativePath: relative))
            #expect(signer.verify(rawPath: path, query: query, now: signedAt + lifetime) == .valid(relativePath: relative))
            #expect(signer.verify(rawPath: path, query: query, now: signedAt + 2 * lifetime) == .expired)
        }
        #expect(SignedLinks.roundedUp(-5, to: 300) == 0 && SignedLinks.roundedUp(-305, to: 300) == -300)
        #expect(SignedLinks.roundedUp(600, to: 300) == 600 && SignedLinks.roundedUp(601, to: 300) == 900)
        #expect(SignedLinks.roundedUp(.max, to: 300) == .max)
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
