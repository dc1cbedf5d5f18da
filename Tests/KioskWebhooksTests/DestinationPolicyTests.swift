import Testing
@testable import KioskWebhooks

@Suite struct DestinationPolicyTests {
    static func refusal(_ url: String, allow: [String] = [], resolver: any HostResolver = SystemHostResolver()) async -> String? {
        do {
            _ = try await DestinationPolicy(allowHosts: allow, resolver: resolver).check(url)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test(arguments: [
        ("http://127.0.0.1/hook", "a loopback address"),
        ("http://127.8.9.10:8080/hook", "a loopback address"),
        ("http://[::1]/hook", "a loopback address"),
        ("http://[::ffff:127.0.0.1]/hook", "an IPv6 form of a loopback address"),
        ("http://[::127.0.0.1]/hook", "an IPv6 form of a loopback address"),
        ("http://[::ffff:169.254.169.254]/", "an IPv6 form of a link-local address"),
        ("http://[64:ff9b::a00:1]/", "an IPv6 form of a private network address"),
        ("http://[2002:c0a8:101::1]/", "an IPv6 form of a private network address"),
        ("http://[fe80::1]/hook", "a link-local address"),
        ("http://169.254.169.254/latest/meta-data/", "a link-local address"),
        ("http://10.0.0.1/hook", "a private network address"),
        ("http://172.16.5.4/hook", "a private network address"),
        ("http://172.31.255.255/hook", "a private network address"),
        ("https://192.168.1.1/hook", "a private network address"),
        ("http://[fd00::1]/hook", "a private network address"),
        ("http://[fc00::1]/hook", "a private network address"),
        ("http://100.64.0.1/hook", "a shared (carrier-grade NAT) address"),
        ("http://100.127.255.254/hook", "a shared (carrier-grade NAT) address"),
        ("http://0.0.0.0/hook", "the unspecified address"),
        ("http://[::]/hook", "the unspecified address"),
        ("http://224.0.0.1/hook", "a multicast address"),
        ("http://[ff02::1]/hook", "a multicast address"),
        ("http://255.255.255.255/hook", "the broadcast address"),
        ("http://240.0.0.1/hook", "a reserved address"),
        ("http://192.0.2.10/hook", "an address reserved for documentation"),
        ("http://[2001:db8::1]/hook", "an address reserved for documentation"),
    ])
    func refusedAddresses(url: String, kind: String) async throws {
        let reason = try #require(await Self.refusal(url), "\(url) was accepted")
        #expect(reason.contains(kind), "\(url): \(reason)")
        #expect(reason.contains("webhooks.allow_hosts"))
    }

    @Test(arguments: [
        "http://localhost/hook", "http://LOCALHOST.:8080/hook", "http://metadata.google.internal/computeMetadata/v1/",
        "http://printer.local/", "http://api.localhost/", "http://intranet/", "http://metadata.goog/",
    ])
    func refusedNames(url: String) async throws {
        let reason = try #require(await Self.refusal(url), "\(url) was accepted")
        #expect(reason.contains("name"), "\(url): \(reason)")
    }

    @Test func aNameIsRefusedForWhatItResolvesTo() async throws {
        // Resolved by the system: `localhost` is refused by name first, so use a name the table maps.
        let reason = try #require(await Self.refusal("https://hooks.example.com/in", resolver: FixedResolver(["hooks.example.com": ["93.184.215.14", "127.0.0.1"]])))
        #expect(reason.contains("resolves to 127.0.0.1, a loopback address"))
        let rebound = try #require(await Self.refusal("https://hooks.example.com/in", resolver: FixedResolver(["hooks.example.com": ["::ffff:10.1.2.3"]])))
        #expect(rebound.contains("an IPv6 form of a private network address"))
        let unknown = try #require(await Self.refusal("https://nowhere.example.com/in", resolver: FixedResolver([:])))
        #expect(unknown.contains("could not be resolved"))
    }

    @Test func theSystemResolverIsChecked() async throws {
        // A name with a dot that the system resolves to loopback (getaddrinfo reads 127.1 as 127.0.0.1).
        let reason = try #require(await Self.refusal("http://127.1/hook"))
        #expect(reason.contains("a loopback address"), "\(reason)")
        let addresses = try await SystemHostResolver().addresses(of: "localhost")
        #expect(!addresses.isEmpty)
        #expect(addresses.allSatisfy { $0.refusal == .loopback })
    }

    @Test func allowedByName() async throws {
        let policy = DestinationPolicy(allowHosts: ["127.0.0.1", "LocalHost", "::1"])
        let literal = try await policy.check("http://127.0.0.1:8080/hook?x=1")
        #expect(literal.allowedByName)
        #expect(literal.address == IPAddress("127.0.0.1"))
        #expect(literal.url.target == "/hook?x=1")
        #expect(literal.url.hostHeader == "127.0.0.1:8080")
        let name = try await policy.check("https://localhost/hook")
        #expect(name.allowedByName)
        #expect(name.address.refusal == .loopback)
        #expect(name.url.hostHeader == "localhost")
        let v6 = try await policy.check("http://[::1]:9000/")
        #expect(v6.url.hostHeader == "[::1]:9000")
        // Allowing one host allows no other.
        #expect(await Self.refusal("http://127.0.0.2/", allow: ["127.0.0.1"]) != nil)
    }

    @Test func publicDestinationsPass() async throws {
        let policy = DestinationPolicy(resolver: FixedResolver(["hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]]))
        let destination = try await policy.check("https://hooks.example.com/kiosk")
        #expect(destination.address == IPAddress("93.184.215.14"))
        #expect(!destination.allowedByName)
        #expect(destination.url.port == 443)
        let literal = try await policy.check("http://8.8.8.8/")
        #expect(literal.url.port == 80)
        #expect(literal.url.target == "/")
    }

    @Test(arguments: [
        ("ftp://example.com/hook", "http or https"),
        ("file:///etc/passwd", "http or https"),
        ("https://user:secret@example.com/hook", "user name or password"),
        ("https://user@example.com/hook", "user name or password"),
        ("https:///hook", "no host"),
        ("not a url", "not a URL"),
        ("http://[fe80::1%25eth0]/", "IPv6 zone"),
        ("https://exa mple.com/", "not a URL"),
    ])
    func refusedForms(url: String, problem: String) async throws {
        let reason = try #require(await Self.refusal(url, allow: ["example.com"]), "\(url) was accepted")
        #expect(reason.contains(problem), "\(url): \(reason)")
    }

    @Test func addressesPrintAsWritten() {
        #expect(IPAddress("::ffff:127.0.0.1")?.description == "::ffff:127.0.0.1")
        #expect(IPAddress("10.0.0.1")?.description == "10.0.0.1")
        #expect(IPAddress("fd00::1")?.isIPv6 == true)
        #expect(IPAddress("example.com") == nil)
        #expect(IPAddress("8.8.8.8")?.refusal == nil)
        #expect(IPAddress("2a00:1450:4007:80e::200e")?.refusal == nil)
    }
}

/// A resolver that answers from a table (a stand-in for DNS).
struct FixedResolver: HostResolver {
    let table: [String: [String]]
    init(_ table: [String: [String]]) { self.table = table }

    func addresses(of host: String) async throws -> [IPAddress] {
        guard let addresses = table[host] else { throw ResolutionFailed(host: host, message: "unknown in the test's table") }
        return addresses.compactMap(IPAddress.init)
    }
}
