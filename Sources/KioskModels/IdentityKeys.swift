import Crypto
import KioskIntegers

#if canImport(FoundationEssentials)
import FoundationEssentials     // ContiguousBytes
#else
import Foundation
#endif

/// Issues identity keys: HMAC-SHA256 of (app, device, user) with the server's secret.
///
/// The same inputs give the same key, so a reinstalled app gets its key back; without the
/// secret a key cannot be made, and a key names exactly one (app, device, user).
public struct IdentityKeyIssuer: Sendable {
    private let secret: SymmetricKey

    public init(secret: [UInt8]) {
        self.secret = SymmetricKey(data: secret)
    }

    public func key(appKey: String, deviceKey: String, userID: Int) -> String {
        var message = [UInt8]("kiosk-identity-v1".utf8)
        for part in [appKey, deviceKey, String(userID)] {
            message.append(0)
            message.append(contentsOf: part.utf8)
        }
        return Base64URL.encode(HMAC<SHA256>.authenticationCode(for: message, using: secret))
    }

    /// The account token a reader's store purchases carry (StoreKit's `appAccountToken`, Google Play's
    /// `obfuscatedAccountId`): a UUID (version 8) made from the secret and the owner, the signed-in reader
    /// (`userID` other than 0; the same on every device and app) or else the app's device. It tells the
    /// stores nothing about the reader, and only this server can make it.
    public func storeAccountToken(appKey: String, deviceKey: String, userID: Int) -> UUID {
        var message = [UInt8]("kiosk-store-account-v1".utf8)
        for part in userID != 0 ? ["reader", String(userID)] : ["device", appKey, deviceKey] {
            message.append(0)
            message.append(contentsOf: part.utf8)
        }
        var bytes = Array(HMAC<SHA256>.authenticationCode(for: message, using: secret).prefix(16))
        bytes[6] = bytes[6] & 0x0f | 0x80   // version 8: made by its own rule
        bytes[8] = bytes[8] & 0x3f | 0x80   // the RFC 9562 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// Whether `key` is the one this server issues for (app, device, user), compared in constant time.
    public func isValid(_ key: String, appKey: String, deviceKey: String, userID: Int) -> Bool {
        ConstantTime.equals(Array(key.utf8), Array(self.key(appKey: appKey, deviceKey: deviceKey, userID: userID).utf8))
    }
}

/// Base64url without padding (RFC 4648 §5), used by every token Kiosk signs.
public enum Base64URL {
    /// The 64 digits, at a fixed address (no array, no lazy global).
    private static let digits: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    /// Characters in the encoding of `count` bytes.
    public static func encodedCount(_ count: Int) -> Int { (count * 4 + 2) / 3 }

    /// Writes the encoding of `bytes` at `output`, which must have room for `encodedCount(bytes.count)`
    /// bytes; returns how many it wrote.
    @discardableResult
    public static func encode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) -> Int {
        let table = digits.utf8Start
        let count = bytes.count
        var index = 0
        var written = 0
        while index + 3 <= count {
            let chunk = UInt32(widening: bytes[index]) << 16 | UInt32(widening: bytes[index + 1]) << 8 | UInt32(widening: bytes[index + 2])
            output[written] = table[Int(widening: chunk >> 18)]
            output[written + 1] = table[Int(widening: chunk >> 12 & 63)]
            output[written + 2] = table[Int(widening: chunk >> 6 & 63)]
            output[written + 3] = table[Int(widening: chunk & 63)]
            index += 3
            written += 4
        }
        let rest = count - index
        if rest > 0 {
            var chunk = UInt32(widening: bytes[index]) << 16
            if rest == 2 { chunk |= UInt32(widening: bytes[index + 1]) << 8 }
            output[written] = table[Int(widening: chunk >> 18)]
            output[written + 1] = table[Int(widening: chunk >> 12 & 63)]
            written += 2
            if rest == 2 { output[written] = table[Int(widening: chunk >> 6 & 63)]; written += 1 }
        }
        return written
    }

    /// The encoding of `bytes`, written straight into the string's storage.
    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        guard !bytes.isEmpty else { return "" }
        return String(unsafeUninitializedCapacity: encodedCount(bytes.count)) { encode(bytes, into: $0.baseAddress!) }
    }

    /// The encoding of any bytes: contiguous ones (arrays, MACs, digests) are read in place, others
    /// copied once.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(UnsafeRawBufferPointer($0)) }) { return encoded }
        if let contiguous = bytes as? any ContiguousBytes { return contiguous.withUnsafeBytes { encode($0) } }
        return Array(bytes).withUnsafeBytes { encode($0) }
    }

    /// Decodes unpadded base64url; nil for any other character or an impossible length.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode(bytes: $0) }) { return decoded }
        var copy = String(text)
        return copy.withUTF8 { decode(bytes: $0) }
    }

    /// Decodes unpadded base64url ASCII; nil for any other byte or an impossible length.
    public static func decode(bytes text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var output = [UInt8]()
        output.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            buffer = buffer << 6 | UInt32(widening: value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> bits))
            }
        }
        guard bits < 6, buffer & ((1 << bits) - 1) == 0 else { return nil }
        return output
    }
}

/// Comparison whose time does not depend on where the inputs differ.
public enum ConstantTime {
    public static func equals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
