import Crypto
import Foundation
import Testing
@testable import KioskWebhooks

@Suite struct WebhookSignerTests {
    static let body = #"{"data":{"app":"quiosc"},"id":"evt_42","timestamp":"2023-01-19T00:13:51Z","type":"app.changed"}"#

    /// The value Python's `standardwebhooks` 1.1.0 gives for the same secret, id, timestamp and body.
    @Test func signsAsTheReferenceLibrary() throws {
        let signer = try WebhookSigner(secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        #expect(signer.signature(id: "evt_42", timestamp: 1_674_087_231, body: Array(Self.body.utf8))
            == "v1,fDmosbSQ+IyPCOQJzzigyAA/IZP8lD6Dz7gEZqfBmrE=")
    }

    /// The three lines of docs/events.md, as written there.
    @Test func theDocumentedSwiftCheckVerifies() throws {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        let webhookID = "evt_42", webhookTimestamp = "1674087231", body = Data(Self.body.utf8)
        for (webhookSignature, expected) in [("v1,fDmosbSQ+IyPCOQJzzigyAA/IZP8lD6Dz7gEZqfBmrE=", true),
                                             ("v1,bm9wZQ== v1,fDmosbSQ+IyPCOQJzzigyAA/IZP8lD6Dz7gEZqfBmrE=", true),
                                             ("v1,gDmosbSQ+IyPCOQJzzigyAA/IZP8lD6Dz7gEZqfBmrE=", false)] {
            let key = SymmetricKey(data: Data(base64Encoded: String(secret.dropFirst("whsec_".count))) ?? Data())
            let signed = Data("\(webhookID).\(webhookTimestamp).".utf8) + body
            let valid = webhookSignature.split(separator: " ").contains { $0.hasPrefix("v1,") && Data(base64Encoded: String($0.dropFirst(3))).map { HMAC<SHA256>.isValidAuthenticationCode($0, authenticating: signed, using: key) } == true }
            #expect(valid == expected, "\(webhookSignature)")
        }
    }

    @Test func rotationSignsWithEachSecret() throws {
        let old = WebhookSecret.generate()
        let new = WebhookSecret.generate()
        let signer = WebhookSigner(secrets: [new, old])
        let header = signer.signature(id: "evt_1", timestamp: 1_700_000_000, body: Array(Self.body.utf8))
        let parts = header.split(separator: " ")
        #expect(parts.count == 2)
        #expect(parts.allSatisfy { $0.hasPrefix("v1,") })
        #expect(WebhookSigner(secrets: [old]).verifies(header, id: "evt_1", timestamp: 1_700_000_000, body: Array(Self.body.utf8)))
        #expect(WebhookSigner(secrets: [new]).verifies(header, id: "evt_1", timestamp: 1_700_000_000, body: Array(Self.body.utf8)))
        #expect(!WebhookSigner(secrets: [WebhookSecret.generate()]).verifies(header, id: "evt_1", timestamp: 1_700_000_000,
                                                                              body: Array(Self.body.utf8)))
        #expect(!signer.verifies(header, id: "evt_1", timestamp: 1_700_000_001, body: Array(Self.body.utf8)))
        #expect(!signer.verifies(header, id: "evt_2", timestamp: 1_700_000_000, body: Array(Self.body.utf8)))
        let headers = signer.headers(id: "evt_1", timestamp: 1_700_000_000, body: Array(Self.body.utf8))
        #expect(headers.map(\.name) == ["webhook-id", "webhook-timestamp", "webhook-signature"])
        #expect(headers.map(\.value) == ["evt_1", "1700000000", header])
    }

    @Test func newSecretsHaveTheStandardForm() throws {
        let secret = WebhookSecret.generate()
        #expect(secret.text.hasPrefix("whsec_"))
        #expect(Data(base64Encoded: String(secret.text.dropFirst(6)))?.count == 24)
        #expect(try WebhookSecret(secret.text) == secret)
        #expect(WebhookSecret.generate() != secret)
        #expect(!"\(secret)".contains(secret.text.dropFirst(6)))
    }

    @Test(arguments: [
        ("hunter2", "does not start with \"whsec_\""),
        ("whsec_", "is not base64"),
        ("whsec_not*base64", "is not base64"),
        ("whsec_" + Data(count: 16).base64EncodedString(), "holds 16 bytes"),
        ("whsec_" + Data(count: 65).base64EncodedString(), "holds 65 bytes"),
        ("whsec_====", "is not valid base64"),
    ])
    func malformedSecretsAreRefused(text: String, problem: String) {
        #expect {
            _ = try WebhookSecret(text)
        } throws: { error in
            "\(error)".contains(problem)
        }
    }

    @Test func unpaddedSecretsAreRead() throws {
        let padded = "whsec_" + Data(repeating: 7, count: 25).base64EncodedString()
        #expect(padded.hasSuffix("="))
        let unpadded = String(padded.reversed().drop(while: { $0 == "=" }).reversed())
        let a = WebhookSigner(secrets: [try WebhookSecret(padded)])
        let b = WebhookSigner(secrets: [try WebhookSecret(unpadded)])
        #expect(a.signature(id: "evt_1", timestamp: 1, body: [1, 2]) == b.signature(id: "evt_1", timestamp: 1, body: [1, 2]))
    }

    @Test func anEndpointNeedsASecret() {
        #expect(throws: WebhookSecretProblem.self) { try WebhookSigner(secrets: [String]()) }
        #expect {
            _ = try WebhookSigner(secrets: [WebhookSecret.generate().text, "whsec_x"])
        } throws: { error in
            "\(error)".contains("number 2")
        }
    }
}
