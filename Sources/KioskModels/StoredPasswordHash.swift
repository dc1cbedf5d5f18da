import Crypto
import KioskIntegers

/// A stored password hash, by the scheme that made it.
///
/// Kiosk writes only bcrypt. The other schemes come from the 2012 system's Joomla database
/// (`user import`); an account signs in with them once, and its hash is then replaced by bcrypt.
public enum StoredPasswordHash: Sendable, Hashable {
    /// `$2a$`, `$2b$` or `$2y$` with a two-digit cost, 22 salt and 31 hash characters.
    case bcrypt(String)
    /// phpass portable hash (Joomla 3): `$P$` or `$H$`, the log2 of the rounds, 8 salt characters, 22 of hash.
    case phpass(String)
    /// Joomla 1.5/2.5: `md5hex:salt`, the MD5 of the password followed by the salt.
    case saltedMD5(digest: String, salt: String)
    /// The oldest Joomla rows: the bare MD5 of the password, 32 hex digits.
    case md5(digest: String)

    /// Reads `text` as one of the schemes; nil when it is none of them (e.g. a plain password).
    ///
    /// A 32-hex-digit text is taken for an MD5 digest: old exports hold digests, not such passwords.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        if Self.isBcrypt(bytes) {
            self = .bcrypt(text)
        } else if Self.isPHPass(bytes) {
            self = .phpass(text)
        } else if bytes.count == 32, bytes.allSatisfy(Self.isHexDigit) {
            self = .md5(digest: text.lowercased())
        } else if bytes.count > 33, bytes.count <= 33 + 64, bytes[32] == UInt8(ascii: ":"),
                  bytes[..<32].allSatisfy(Self.isHexDigit),
                  bytes[33...].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
            self = .saltedMD5(digest: String(decoding: bytes[..<32], as: UTF8.self).lowercased(),
                              salt: String(decoding: bytes[33...], as: UTF8.self))
        } else {
            return nil
        }
    }

    /// Whether this hash is to be replaced by bcrypt at the next successful sign-in.
    public var isLegacy: Bool {
        if case .bcrypt = self { return false }
        return true
    }

    /// Whether `password` matches a legacy hash, compared in constant time; always false for bcrypt,
    /// which the slow verifier checks.
    public func legacyMatches(_ password: String) -> Bool {
        switch self {
        case .bcrypt:
            return false
        case .md5(let digest):
            return ConstantTime.equals(Array(Self.md5Hex(Array(password.utf8)).utf8), Array(digest.utf8))
        case .saltedMD5(let digest, let salt):
            return ConstantTime.equals(Array(Self.md5Hex(Array((password + salt).utf8)).utf8), Array(digest.utf8))
        case .phpass(let stored):
            guard let computed = Self.phpass(password, setting: stored) else { return false }
            return ConstantTime.equals(Array(computed.utf8), Array(stored.utf8))
        }
    }

    // MARK: Schemes

    static func isBcrypt(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
              [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]),
              bytes[3] == UInt8(ascii: "$"), bytes[6] == UInt8(ascii: "$"),
              let cost = Int(String(decoding: bytes[4...5], as: UTF8.self)), (4...31).contains(cost)
        else { return false }
        return bytes[7...].allSatisfy { phpassAlphabet.contains($0) }
    }

    /// The rounds phpass may ask for: 2^7 to 2^20 (Joomla 3 wrote 2^15); more would make a sign-in a denial of service.
    static let phpassRounds = 7...20

    static func isPHPass(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 34, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "P") || bytes[1] == UInt8(ascii: "H"),
              bytes[2] == UInt8(ascii: "$"), let rounds = phpassAlphabet.firstIndex(of: bytes[3]),
              phpassRounds.contains(rounds)
        else { return false }
        return bytes[4...].allSatisfy { phpassAlphabet.contains($0) }
    }

    /// phpass's `crypt_private`: MD5 of salt + password, then 2^n times MD5 of the digest + password.
    static func phpass(_ password: String, setting: String) -> String? {
        let bytes = Array(setting.utf8)
        guard isPHPass(bytes), let log2 = phpassAlphabet.firstIndex(of: bytes[3]) else { return nil }
        let secret = Array(password.utf8)
        var digest = Array(Insecure.MD5.hash(data: Array(bytes[4..<12]) + secret))
        for _ in 0..<(1 << log2) {
            digest = Array(Insecure.MD5.hash(data: digest + secret))
        }
        return String(decoding: bytes[..<12], as: UTF8.self) + phpassEncode(digest)
    }

    /// phpass's `encode64`: little-endian groups of three bytes, six bits per character.
    static func phpassEncode(_ input: [UInt8]) -> String {
        var output: [UInt8] = []
        var index = 0
        while index < input.count {
            var value = UInt32(widening: input[index]); index += 1
            output.append(phpassAlphabet[Int(widening: value & 63)])
            if index < input.count { value |= UInt32(widening: input[index]) << 8 }
            output.append(phpassAlphabet[Int(widening: value >> 6 & 63)])
            if index >= input.count { break }
            index += 1
            if index < input.count { value |= UInt32(widening: input[index]) << 16 }
            output.append(phpassAlphabet[Int(widening: value >> 12 & 63)])
            if index >= input.count { break }
            index += 1
            output.append(phpassAlphabet[Int(widening: value >> 18 & 63)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    static let phpassAlphabet = Array("./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    static func md5Hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in Insecure.MD5.hash(data: bytes) {
            text.append(digits[Int(widening: byte >> 4)]); text.append(digits[Int(widening: byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
