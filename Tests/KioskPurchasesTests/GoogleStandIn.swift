import KioskTestSupport
import AsyncHTTPClient
import Foundation
import KioskGoogleAuth
import KioskPurchases
import NIOPosix
import NIOSSL

/// `Tests/Clients/google_standin.py` run for one test: Google's token endpoint, the Play Developer API and
/// the OIDC keys over HTTPS on loopback, with the purchases the test seeds. The stand-in makes a test
/// certificate authority and a certificate for 127.0.0.1 signed by it; `httpClient` trusts exactly that
/// authority, and every Google type under test must be given it (the default `.shared` client trusts the
/// system's roots and cannot reach the stand-in). Commands go to its stdin as JSON lines and are answered on
/// its stdout. Use it through `run`, which stops it and shuts the client down however the test ends.
final class GoogleStandIn: @unchecked Sendable {
    let directory: URL
    let port: Int
    /// Trusts only the stand-in's test authority (`caFile`); shut down by `run`.
    let httpClient: HTTPClient
    private let process: Process
    private let input: FileHandle
    private let output: LineReader

    var baseURL: String { "https://127.0.0.1:\(port)" }
    var keysURL: String { baseURL + "/oauth2/v3/certs" }
    var serviceAccountFile: URL { directory.appendingPathComponent("service_account.json") }
    var wrongServiceAccountFile: URL { directory.appendingPathComponent("wrong_service_account.json") }
    /// The test authority that signed the stand-in's certificate.
    var caFile: URL { directory.appendingPathComponent("ca.pem") }
    /// Another test authority, which signed nothing the stand-in serves.
    var otherCAFile: URL { directory.appendingPathComponent("other_ca.pem") }
    static let packageName = "com.example.kiosk"
    static let clientEmail = "kiosk-server@kiosk-test.iam.gserviceaccount.com"

    /// Starts the stand-in with `purchases` (the JSON of DIR/purchases.json), runs `body` with it, then stops
    /// it and shuts its client down, also when `body` throws. Throws `body`'s error first, then the stand-in's
    /// (a request raised), then the client's. Fails, not skips, when Python or its packages are missing.
    static func run<T>(
        purchases: [String: Any] = [:], expiresIn: Int = 3599, _ body: (GoogleStandIn) async throws -> T
    ) async throws -> T {
        let standIn = try await GoogleStandIn(purchases: purchases, expiresIn: expiresIn)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(standIn))
        } catch {
            result = .failure(error)
        }
        var stopError: (any Error)?
        do {
            try await standIn.stop()
        } catch {
            stopError = error
        }
        var shutdownError: (any Error)?
        do {
            try await standIn.httpClient.shutdown()
        } catch {
            shutdownError = error
        }
        let value = try result.get()
        if let stopError { throw stopError }
        if let shutdownError { throw shutdownError }
        return value
    }

    /// A client that trusts only the certificates in `pemFile`, for TLS `minimum`...`maximum`.
    static func client(
        trusting pemFile: URL, minimumTLSVersion: TLSVersion = .tlsv12, maximumTLSVersion: TLSVersion? = nil
    ) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(pemFile.path))
        tls.minimumTLSVersion = minimumTLSVersion
        tls.maximumTLSVersion = maximumTLSVersion
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    /// `body` with `client`, which is shut down afterwards, also when `body` throws.
    static func using<T>(_ client: HTTPClient, _ body: (HTTPClient) async throws -> T) async throws -> T {
        let result: Result<T, any Error>
        do {
            result = .success(try await body(client))
        } catch {
            result = .failure(error)
        }
        try await client.shutdown()
        return try result.get()
    }

    private init(purchases: [String: Any], expiresIn: Int) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("google-standin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var seeded = purchases
        seeded["packageName"] = seeded["packageName"] ?? Self.packageName
        try JSONSerialization.data(withJSONObject: seeded).write(to: directory.appendingPathComponent("purchases.json"))

        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Clients/google_standin.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", script.path, "--dir", directory.path, "--package-name", Self.packageName,
            "--client-email", Self.clientEmail, "--expires-in", "\(expiresIn)",
        ]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        let output = LineReader(stdout.fileHandleForReading)
        guard let line = await output.next(), let port = Int(line) else {
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
            throw StandInFailure("google_standin.py did not start (exit \(process.terminationStatus)); "
                + "it needs python3 with the PyPI packages cryptography and pyjwt")
        }
        let client: HTTPClient
        do {
            client = try Self.client(trusting: directory.appendingPathComponent("ca.pem"))
        } catch {
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
            throw StandInFailure("the stand-in's test authority (ca.pem) could not be read: \(error)")
        }
        self.process = process
        self.input = stdin.fileHandleForWriting
        self.output = output
        self.port = port
        self.httpClient = client
    }

    /// Sends one command and returns its JSON answer.
    func command(_ request: [String: Any]) async throws -> [String: Any] {
        var line = try JSONSerialization.data(withJSONObject: request)
        line.append(UInt8(ascii: "\n"))
        try input.write(contentsOf: line)
        guard let answer = await output.next(),
            let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any]
        else { throw StandInFailure("google_standin.py did not answer \(request["op"] ?? "")") }
        return object
    }

    /// Counts and recorded calls.
    func state() async throws -> StandInState {
        let object = try await command(["op": "state"])
        return try JSONDecoder().decode(StandInState.self, from: JSONSerialization.data(withJSONObject: object))
    }

    /// An OIDC token with `claims`, signed with the test key `key` (named `kid` in its header) by `alg`.
    func mint(_ claims: [String: Any], key: String = "oidc-a", kid: String? = nil, alg: String = "RS256") async throws -> String {
        var request: [String: Any] = ["op": "mint", "claims": claims, "key": key, "alg": alg]
        if let kid { request["kid"] = kid }
        guard let token = try await command(request)["token"] as? String else { throw StandInFailure("mint failed") }
        return token
    }

    /// Adds the test key `kid` to the served JWKS.
    func publish(kid: String) async throws {
        _ = try await command(["op": "publish", "kid": kid])
    }

    /// Closes stdin and waits for the exit; throws when the stand-in raised or did not exit cleanly. A test
    /// may stop it early (to find its port closed); `run` stops it again, which does nothing more. The
    /// client stays up until `run` ends.
    func stop() async throws {
        try? input.close()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.process.waitUntilExit()
                continuation.resume()
            }
        }
        try? FileManager.default.removeItem(at: directory)
        guard process.terminationStatus == 0 else {
            throw StandInFailure("google_standin.py exited with \(process.terminationStatus): a request raised")
        }
    }

    func serviceAccount(wrongKey: Bool = false) throws -> GoogleServiceAccount {
        try GoogleServiceAccount(contentsOf: wrongKey ? wrongServiceAccountFile : serviceAccountFile)
    }
}

struct StandInState: Decodable {
    struct Call: Decodable, Equatable {
        let method: String
        let segments: [String]
        let action: String?
    }
    struct Settled: Decodable, Equatable {
        let kind: String
        let id: String
        let token: String
    }
    let tokenRequests: Int
    let tokenRefusals: [String]
    let jwksRequests: Int
    let apiCalls: [Call]
    let acknowledged: [Settled]
    let consumed: [Settled]
    let errors: [String]
    /// The TLS version of each handshake that succeeded ("TLSv1.2", "TLSv1.3").
    let tlsVersions: [String]
    /// Each handshake that failed, as Python's ssl module reported it.
    let tlsFailures: [String]
}

struct StandInFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

