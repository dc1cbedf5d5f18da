import Foundation
import KioskPurchases
import Testing

/// Kiosk and Apple's own verifier (PyPI app-store-server-library, run by Tests/Clients/apple_verify.py) give
/// the same verdict on every case of one corpus, valid and forged: both accept, or both refuse for the same
/// kind of reason (another app, another environment, or anything else).
@Suite("App Store signed data: Apple's verifier agrees")
struct AppleAgreementTests {
    struct Case {
        var name: String
        var kind: String
        var jws: String
        var environment = AppleEnvironment.production
        var root: [UInt8]
        var bundleId = AppleTestAuthority.bundleId
        var appAppleId = AppleTestAuthority.appAppleId
    }

    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Clients/apple_verify.py").path

    @Test func appleLibraryAgreesOnEveryCase() async throws {
        let cases = try Self.corpus()
        let kiosk = try await Self.kioskVerdicts(cases)
        let apple = try await Self.appleVerdicts(cases)
        #expect(apple.count == cases.count)
        for testCase in cases {
            let ours = try #require(kiosk[testCase.name])
            let theirs = try #require(apple[testCase.name], "Apple's verifier gave no verdict on \(testCase.name)")
            #expect(ours == theirs, "\(testCase.name): Kiosk \(ours), Apple \(theirs)")
        }
        // The corpus is not one-sided.
        #expect(kiosk.values.filter { $0 == "accepted" }.count == 8)
        #expect(kiosk.values.filter { $0 != "accepted" }.count == cases.count - 8)
    }

    // MARK: - The corpus

    static func corpus() throws -> [Case] {
        let authority = try AppleTestAuthority()
        let root = authority.rootDER
        let foreign = try AppleTestAuthority()
        let unmarkedIntermediate = try AppleTestAuthority(intermediateMarker: false)
        let unmarkedLeaf = try AppleTestAuthority(leafMarker: false)
        let expiredLeaf = try AppleTestAuthority(
            leafValidity: AppleTestAuthority.date("2024-01-01T00:00:00Z")...AppleTestAuthority.date("2026-01-01T00:00:00Z"))
        let payload = AppleTestAuthority.transactionPayload()
        let transactionJSON = try AppleTestAuthority.json(payload)
        let good = try authority.transaction()
        let parts = good.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func header(_ alg: String) throws -> String {
            AppleTestAuthority.base64URL(try AppleTestAuthority.json(["alg": alg, "x5c": authority.x5c]))
        }
        let sandboxData: [String: Any] = [
            "bundleId": AppleTestAuthority.bundleId, "environment": "Sandbox",
            "signedTransactionInfo": try authority.transaction(["environment": "Sandbox"]),
            "signedRenewalInfo": try authority.renewalInfo(["environment": "Sandbox"]),
        ]
        let signedDate = AppleTestAuthority.milliseconds(AppleTestAuthority.signedDate)

        return [
            // Accepted.
            Case(name: "transaction", kind: "transaction", jws: good, root: root),
            Case(name: "renewal info", kind: "renewalInfo", jws: try authority.renewalInfo(), root: root),
            Case(name: "notification", kind: "notification", jws: try authority.notification(), root: root),
            Case(name: "TEST notification", kind: "notification", jws: try authority.sign([
                "notificationType": "TEST", "notificationUUID": "3f6ae3a5-5c2c-4a52-9a2b-6c0b1b0e3d11", "version": "2.0",
                "signedDate": signedDate,
                "data": ["bundleId": AppleTestAuthority.bundleId, "appAppleId": AppleTestAuthority.appAppleId, "environment": "Production"],
            ]), root: root),
            Case(name: "summary notification", kind: "notification", jws: try authority.sign([
                "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY",
                "notificationUUID": "9d1e7f0a-6c55-4bd8-8a7e-1b3c9f2e4d21", "version": "2.0", "signedDate": signedDate,
                "summary": [
                    "requestIdentifier": "871d9f2c-1c7a-4b3e-a0e7-6a8d7b3c2e10", "environment": "Production",
                    "appAppleId": AppleTestAuthority.appAppleId, "bundleId": AppleTestAuthority.bundleId,
                    "productId": "kiosk.monthly", "storefrontCountryCodes": ["FRA"], "succeededCount": 5, "failedCount": 0,
                ],
            ]), root: root),
            Case(name: "Sandbox transaction, Sandbox accepted", kind: "transaction",
                 jws: try authority.transaction(["environment": "Sandbox"]), environment: .sandbox, root: root),
            Case(name: "Sandbox notification, Sandbox accepted", kind: "notification",
                 jws: try authority.notification(["data": sandboxData]), environment: .sandbox, root: root),
            Case(name: "unknown enumerated values", kind: "transaction",
                 jws: try authority.transaction(["type": "Hologram Subscription", "inAppOwnershipType": "BORROWED", "offerType": 9]),
                 root: root),

            // Refused: algorithm.
            Case(name: "alg none", kind: "transaction", jws: try header("none") + "." + parts[1] + ".", root: root),
            Case(name: "alg HS256", kind: "transaction", jws: try header("HS256") + "." + parts[1] + "." + parts[2], root: root),
            Case(name: "alg RS256", kind: "transaction",
                 jws: try header("RS256") + "." + parts[1] + "." + AppleTestAuthority.base64URL((0..<256).map { UInt8(truncatingIfNeeded: $0) }),
                 root: root),
            // Refused: chain.
            Case(name: "chain of two", kind: "transaction",
                 jws: try authority.sign(payload, x5c: Array(authority.x5c.prefix(2))), root: root),
            Case(name: "chain of four", kind: "transaction",
                 jws: try authority.sign(payload, x5c: authority.x5c + [authority.x5c[2]]), root: root),
            Case(name: "foreign root", kind: "transaction", jws: try foreign.transaction(), root: root),
            Case(name: "foreign chain naming the trusted root", kind: "transaction",
                 jws: try foreign.sign(payload, x5c: [foreign.x5c[0], foreign.x5c[1], authority.x5c[2]]), root: root),
            Case(name: "intermediate without its marker", kind: "transaction",
                 jws: try unmarkedIntermediate.transaction(), root: unmarkedIntermediate.rootDER),
            Case(name: "leaf without its marker", kind: "transaction",
                 jws: try unmarkedLeaf.transaction(), root: unmarkedLeaf.rootDER),
            Case(name: "leaf expired at signedDate", kind: "transaction",
                 jws: try expiredLeaf.transaction(), root: expiredLeaf.rootDER),
            Case(name: "leaf certificate not DER", kind: "transaction",
                 jws: try authority.sign(payload, x5c: [Data([1, 2, 3]).base64EncodedString(), authority.x5c[1], authority.x5c[2]]),
                 root: root),
            // Refused: signature.
            Case(name: "tampered payload", kind: "transaction",
                 jws: try AppleTestAuthority.tamperingPayload(good) { $0["productId"] = "kiosk.lifetime" }, root: root),
            Case(name: "tampered signature", kind: "transaction", jws: try AppleTestAuthority.tamperingSignature(good), root: root),
            Case(name: "signature of 72 bytes", kind: "transaction",
                 jws: parts[0] + "." + parts[1] + "." + AppleTestAuthority.base64URL([UInt8](repeating: 1, count: 72)), root: root),
            // Refused: the app.
            Case(name: "another bundle", kind: "transaction", jws: try authority.transaction(["bundleId": "com.other.app"]), root: root),
            Case(name: "Sandbox transaction, Production only", kind: "transaction",
                 jws: try authority.transaction(["environment": "Sandbox"]), root: root),
            Case(name: "Sandbox renewal info, Production only", kind: "renewalInfo",
                 jws: try authority.renewalInfo(["environment": "Sandbox"]), root: root),
            Case(name: "Production notification, another appAppleId", kind: "notification",
                 jws: try authority.notification(dataChanges: ["appAppleId": 987_654_321]), root: root),
            Case(name: "Production notification without appAppleId", kind: "notification",
                 jws: try authority.notification(["data": try authority.notificationDataWithout("appAppleId")]), root: root),
            Case(name: "notification for another bundle", kind: "notification",
                 jws: try authority.notification(dataChanges: ["bundleId": "com.other.app"]), root: root),
            // With the app's Apple ID, so that the environment is the one fault: Apple's library checks the ID
            // against its configured environment (Production), Kiosk against the notification's (Sandbox, which
            // has none), so without it both refuse but for different reasons.
            Case(name: "Sandbox notification, Production only", kind: "notification",
                 jws: try authority.notification(["data": sandboxData.merging(["appAppleId": AppleTestAuthority.appAppleId]) { $1 }]),
                 root: root),
            // Refused: inside a notification.
            Case(name: "inner transaction from a foreign authority", kind: "notification",
                 jws: try authority.notification(dataChanges: ["signedTransactionInfo": try foreign.transaction()]), root: root),
            Case(name: "inner transaction tampered", kind: "notification",
                 jws: try authority.notification(dataChanges: [
                    "signedTransactionInfo": try AppleTestAuthority.tamperingPayload(good) { $0["productId"] = "kiosk.lifetime" },
                 ]), root: root),
            Case(name: "inner renewal info with a tampered signature", kind: "notification",
                 jws: try authority.notification(dataChanges: [
                    "signedRenewalInfo": try AppleTestAuthority.tamperingSignature(try authority.renewalInfo()),
                 ]), root: root),
            Case(name: "inner transaction for another bundle", kind: "notification",
                 jws: try authority.notification(dataChanges: ["signedTransactionInfo": try authority.transaction(["bundleId": "com.other.app"])]),
                 root: root),
            // Refused: garbage.
            Case(name: "not three parts", kind: "transaction", jws: parts[0] + "." + parts[1], root: root),
            Case(name: "four parts", kind: "transaction", jws: good + ".e30", root: root),
            Case(name: "bad base64url header", kind: "transaction", jws: "!!!." + parts[1] + "." + parts[2], root: root),
            Case(name: "bad base64url payload", kind: "transaction", jws: parts[0] + ".a*b." + parts[2], root: root),
            Case(name: "header not JSON", kind: "transaction",
                 jws: AppleTestAuthority.base64URL(Array("not json".utf8)) + "." + parts[1] + "." + parts[2], root: root),
            Case(name: "payload not JSON", kind: "transaction",
                 jws: try authority.sign(payloadJSON: Array(transactionJSON.dropLast()), header: ["alg": "ES256", "x5c": authority.x5c]),
                 root: root),
            // Left out, each kept in Kiosk's own tests (AppleRefusedTests):
            // - signedDate beyond the clock skew: offline, Apple's library never compares signedDate with the
            //   present; it verifies the chain at signedDate and accepts.
            // - a body over the size limit: Apple's library takes the signedPayload string, not a body.
            // - a transaction lacking a field Kiosk needs (productId): Apple's models make every field optional
            //   and accept it.
            // - a Production notification for an app with no appAppleId configured: Apple's SignedDataVerifier
            //   refuses to be made for Production without one (ValueError), so there is no verdict to compare.
            // - a Production notification carrying a Sandbox transaction, for an app accepting both: one Apple
            //   verifier holds one environment, so that identity cannot be expressed.
        ]
    }

    // MARK: - Verdicts

    static func kioskVerdicts(_ cases: [Case]) async throws -> [String: String] {
        var verdicts: [String: String] = [:]
        for testCase in cases {
            let verifier = try AppleSignedDataVerifier(
                rootCertificatesDER: [testCase.root], chainCache: nil, clock: { AppleTestAuthority.now })
            let app = AppleStoreIdentity(
                bundleId: testCase.bundleId, appAppleId: Int64(testCase.appAppleId), environments: [testCase.environment])
            let error = await refusal { () async throws(PurchaseVerificationError) -> Void in
                switch testCase.kind {
                case "transaction": _ = try await verifier.transaction(testCase.jws, for: app)
                case "renewalInfo": _ = try await verifier.renewalInfo(testCase.jws, for: app)
                default: _ = try await verifier.notification(testCase.jws, for: app)
                }
            }
            verdicts[testCase.name] = switch error?.reason {
            case nil: "accepted"
            case .wrongApp?: "refused: another app"
            case .wrongEnvironment?: "refused: another environment"
            default: "refused"
            }
        }
        return verdicts
    }

    static func appleVerdicts(_ cases: [Case]) async throws -> [String: String] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apple-corpus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let corpus: [String: Any] = [
            "cases": cases.map { testCase -> [String: Any] in
                [
                    "name": testCase.name, "kind": testCase.kind, "jws": testCase.jws,
                    "environment": testCase.environment.rawValue, "root": Data(testCase.root).base64EncodedString(),
                    "bundleId": testCase.bundleId, "appAppleId": testCase.appAppleId,
                ]
            }
        ]
        let corpusFile = folder.appendingPathComponent("corpus.json")
        try JSONSerialization.data(withJSONObject: corpus, options: [.sortedKeys]).write(to: corpusFile)
        let outputFile = folder.appendingPathComponent("verdicts.jsonl")
        let errorFile = folder.appendingPathComponent("errors.txt")
        let status = try await runPython([script, corpusFile.path], output: outputFile, errors: errorFile)
        let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        try #require(status == 0, "apple_verify.py exited with \(status): \(errors)")

        var verdicts: [String: String] = [:]
        let output = try String(contentsOf: outputFile, encoding: .utf8)
        for line in output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let name = try #require(object["name"] as? String)
            let verdict = try #require(object["verdict"] as? String)
            let status = object["status"] as? String
            verdicts[name] = switch (verdict, status) {
            case ("accepted", _): "accepted"
            case (_, "INVALID_APP_IDENTIFIER"): "refused: another app"
            case (_, "INVALID_ENVIRONMENT"): "refused: another environment"
            default: "refused"
            }
        }
        return verdicts
    }

    /// Runs `python3` (from PATH) with output and errors to files, without holding a thread while it runs.
    static func runPython(_ arguments: [String], output: URL, errors: URL) async throws -> Int32 {
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let outputHandle = try FileHandle(forWritingTo: output)
        let errorHandle = try FileHandle(forWritingTo: errors)
        defer {
            try? outputHandle.close()
            try? errorHandle.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.standardOutput = outputHandle
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        return try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
    }
}
