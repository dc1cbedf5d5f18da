import Foundation
import JWTKit

/// A Google Cloud service account's key file (the JSON the console downloads), for calling Google APIs
/// (the Play Developer API, Firebase Cloud Messaging) as that account.
///
/// Only `type` (`service_account`), `client_email`, `private_key` (PEM, RSA), `private_key_id`,
/// `token_uri` and `project_id` are read. The private key never leaves this value: no description prints it.
public struct GoogleServiceAccount: Sendable, CustomStringConvertible {
    /// A key file that is not a usable service account key. `message` names the field, never its value.
    public struct InvalidKeyFile: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    public let clientEmail: String
    public let privateKeyID: String
    /// The key file's `token_uri`, when it has one.
    public let tokenURI: String?
    /// The key file's `project_id`, when it has one: the Firebase project FCM sends in by default.
    public let projectID: String?
    let privateKey: Insecure.RSA.PrivateKey

    /// Reads a key file's JSON.
    public init(json: Data) throws(InvalidKeyFile) {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw InvalidKeyFile(message: "the service account key file is not a JSON object")
        }
        func field(_ name: String) throws(InvalidKeyFile) -> String {
            guard let value = object[name] as? String, !value.isEmpty else {
                throw InvalidKeyFile(message: "the service account key file has no \(name)")
            }
            return value
        }
        guard try field("type") == "service_account" else {
            throw InvalidKeyFile(message: "the key file's type is not service_account")
        }
        self.clientEmail = try field("client_email")
        self.privateKeyID = try field("private_key_id")
        let pem = try field("private_key")
        do {
            self.privateKey = try Insecure.RSA.PrivateKey(pem: pem)
        } catch {
            throw InvalidKeyFile(message: "the service account's private_key is not a PEM RSA private key of 2048 bits or more")
        }
        self.tokenURI = object["token_uri"] as? String
        self.projectID = (object["project_id"] as? String).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Reads a key file.
    public init(contentsOf file: URL) throws {
        try self.init(json: Data(contentsOf: file))
    }

    public var description: String { "GoogleServiceAccount(\(clientEmail), key \(privateKeyID))" }
}
