import AsyncHTTPClient
import Foundation
import KioskGoogleAuth
import NIOPosix
import NIOSSL

/// `Tests/Clients/google_standin.py` for one test: Google's token endpoint and FCM's HTTP v1 send over HTTPS
/// on loopback, with the device tokens the test seeds. `httpClient` trusts only the stand-in's test authority.
final class FCMStandIn: @unchecked Sendable {
    let directory: URL
    let port: Int
    let httpClient: HTTPClient
    private let process: Process
    private let input: FileHandle
    private let output: Pipe

    var baseURL: String { "https://127.0.0.1:\(port)" }
    static let packageName = "com.example.kiosk"
    static let project = "kiosk-test"

    /// One message FCM received.
    struct Received: Decodable {
        let token: String
        let status: Int
        let time: Double
    }

    /// Starts the stand-in with `fcm` (the "fcm" part of DIR/purchases.json), runs `body`, stops it.
    static func run<T>(fcm: [String: Any] = [:], _ body: (FCMStandIn) async throws -> T) async throws -> T {
        let standIn = try FCMStandIn(fcm: fcm)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(standIn))
        } catch {
            result = .failure(error)
        }
        try? standIn.input.close()
        standIn.process.waitUntilExit()
        try? FileManager.default.removeItem(at: standIn.directory)
        try await standIn.httpClient.shutdown()
        let value = try result.get()
        guard standIn.process.terminationStatus == 0 else {
            throw FCMStandInFailure("google_standin.py exited with \(standIn.process.terminationStatus): a request raised")
        }
        return value
    }

    private init(fcm: [String: Any]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-standin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: ["packageName": Self.packageName, "fcm": fcm])
            .write(to: directory.appendingPathComponent("purchases.json"))
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Clients/google_standin.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--dir", directory.path, "--package-name", Self.packageName]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        self.process = process
        self.input = stdin.fileHandleForWriting
        self.output = stdout
        guard let line = Self.readLine(stdout.fileHandleForReading), let port = Int(line) else {
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
            throw FCMStandInFailure("google_standin.py did not start; it needs python3 with the PyPI packages cryptography and pyjwt")
        }
        self.port = port
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent("ca.pem").path))
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        httpClient = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    func serviceAccount() throws -> GoogleServiceAccount {
        try GoogleServiceAccount(contentsOf: directory.appendingPathComponent("service_account.json"))
    }

    /// The messages received so far and how many access tokens were issued.
    func state() throws -> (received: [Received], tokenRequests: Int, errors: [String]) {
        try input.write(contentsOf: Data(#"{"op": "state"}"#.utf8) + Data([UInt8(ascii: "\n")]))
        guard let line = Self.readLine(output.fileHandleForReading),
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        else { throw FCMStandInFailure("google_standin.py did not answer its state") }
        let received = try JSONDecoder().decode(
            [Received].self, from: JSONSerialization.data(withJSONObject: object["fcmMessages"] ?? []))
        return (received, object["tokenRequests"] as? Int ?? -1, object["errors"] as? [String] ?? [])
    }

    /// The messages as sent, whole.
    func messages() throws -> [[String: Any]] {
        try input.write(contentsOf: Data(#"{"op": "state"}"#.utf8) + Data([UInt8(ascii: "\n")]))
        guard let line = Self.readLine(output.fileHandleForReading),
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let list = object["fcmMessages"] as? [[String: Any]]
        else { throw FCMStandInFailure("google_standin.py did not answer its state") }
        return list.compactMap { $0["message"] as? [String: Any] }
    }

    /// One line of the stand-in's output, read byte by byte (the answers are short and rare).
    private static func readLine(_ handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while true {
            guard let chunk = try? handle.read(upToCount: 1), let byte = chunk.first else {
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}

struct FCMStandInFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
