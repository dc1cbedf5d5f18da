import Foundation

/// `Tests/Clients/webhook_receiver.py` run for one test: an endpoint on loopback that verifies every
/// delivery with the `standardwebhooks` PyPI package, once per secret it is given, and answers as the path
/// says (`/answer/STATUS?retry_after=…&location=…&body_bytes=N&delay=S`, `/hang?seconds=S`). Use it through `run`,
/// which stops it however the test ends and fails the test when a request handler raised.
package final class WebhookReceiver: @unchecked Sendable {
    package let port: Int
    package let directory: URL
    private let process: Process
    private let input: FileHandle
    private let output: LineReader

    package var baseURL: String { "http://127.0.0.1:\(port)" }
    /// With `tls`: the test authority that signed the receiver's certificate (localhost, receiver.example, 127.0.0.1).
    package var caFile: URL { directory.appendingPathComponent("ca.pem") }

    /// Starts the receiver verifying with `secrets`, runs `body`, then stops it. Throws `body`'s error
    /// first, then the receiver's. Fails, not skips, when Python or `standardwebhooks` is missing.
    package static func run<T>(secrets: [String], tls: Bool = false, _ body: (WebhookReceiver) async throws -> T) async throws -> T {
        let receiver = try await WebhookReceiver(secrets: secrets, tls: tls)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(receiver))
        } catch {
            result = .failure(error)
        }
        var stopError: (any Error)?
        do {
            try await receiver.stop()
        } catch {
            stopError = error
        }
        let value = try result.get()
        if let stopError { throw stopError }
        return value
    }

    private init(secrets: [String], tls: Bool) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-receiver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Clients/webhook_receiver.py")   // Tests/KioskTestSupport/../Clients
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--dir", directory.path] + (tls ? ["--tls"] : [])
            + secrets.flatMap { ["--secret", $0] }
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        let output = LineReader(stdout.fileHandleForReading)
        guard let line = await output.next(), let port = Int(line) else {
            try? stdin.fileHandleForWriting.close()
            process.waitUntilExit()
            throw ReceiverFailure("webhook_receiver.py did not start (exit \(process.terminationStatus)); it needs python3 "
                + "with the PyPI package standardwebhooks (python3 -m pip install standardwebhooks==1.1.0), and cryptography for TLS")
        }
        self.process = process
        self.input = stdin.fileHandleForWriting
        self.output = output
        self.port = port
    }

    /// What it received so far.
    package func deliveries() async throws -> [ReceivedDelivery] {
        try input.write(contentsOf: Data("{\"op\":\"state\"}\n".utf8))
        guard let line = await output.next() else { throw ReceiverFailure("webhook_receiver.py did not answer") }
        let state = try JSONDecoder().decode(ReceiverState.self, from: Data(line.utf8))
        if !state.errors.isEmpty { throw ReceiverFailure("webhook_receiver.py raised: \(state.errors.joined(separator: "\n"))") }
        return state.deliveries
    }

    private func stop() async throws {
        try? input.close()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.process.waitUntilExit()
                continuation.resume()
            }
        }
        try? FileManager.default.removeItem(at: directory)
        guard process.terminationStatus == 0 else {
            throw ReceiverFailure("webhook_receiver.py exited with \(process.terminationStatus): a request handler raised")
        }
    }
}

/// One POST as the receiver saw it.
package struct ReceivedDelivery: Decodable {
    package let path: String
    package let id: String?
    package let timestamp: String?
    package let signature: String?
    package let host: String?
    package let userAgent: String?
    package let contentType: String?
    package let body: String
    package let arrived: Double
    /// The indexes of the receiver's secrets that verify it (standardwebhooks).
    package let verified: [Int]
    /// The library's refusal, by secret index.
    package let errors: [String: String]
}

private struct ReceiverState: Decodable {
    let deliveries: [ReceivedDelivery]
    let errors: [String]
}

package struct ReceiverFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// Lines of a pipe, read off the cooperative threads.
package final class LineReader: @unchecked Sendable {
    private let handle: FileHandle
    private var buffer = Data()
    private let lock = NSLock()

    package init(_ handle: FileHandle) { self.handle = handle }

    /// The next line, nil at the end of the stream.
    package func next() async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: self.readLine())
            }
        }
    }

    private func readLine() -> String? {
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }
}

/// A clock of `Date`s the test moves (for code that takes `() -> Date`).
package final class MovingDateClock: @unchecked Sendable {
    private var current: Date
    private let lock = NSLock()

    package init(_ start: Date = Date()) { current = start }

    package var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    package func advance(by seconds: TimeInterval) {
        lock.lock()
        current += seconds
        lock.unlock()
    }

    package var function: @Sendable () -> Date { { self.now } }
}
