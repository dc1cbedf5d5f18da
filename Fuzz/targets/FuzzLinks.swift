// libFuzzer target: SignedLinks.verify (both formats) on arbitrary request paths and queries, plus
// sign-then-verify round trips on arbitrary relative paths and signing times.
// Input: mode byte, then for mode 0: "<raw path>\n<query>"; mode 1: a relative path; mode 2: 8 bytes of
// time then a relative path.
import KioskEditions

private let secret = "fuzz-link-secret-0123456789abcdefghijklmnopqrstuv"
private let now: Int64 = 1_750_000_000
private let kiosk = SignedLinks(format: .kiosk, secret: secret, prefix: "/files", baseURL: "http://k", lifetimeSeconds: 3600)
private let nginx = SignedLinks(format: .nginx, secret: secret, prefix: "/files", baseURL: "http://k", lifetimeSeconds: 3600)

private func split(_ link: String) -> (String, String?) {
    guard let mark = link.firstIndex(of: "?") else { return (link, nil) }
    return (String(link[..<mark]), String(link[link.index(after: mark)...]))
}

private func expectValid(_ links: SignedLinks, _ relative: String, signedAt: Int64, checkedAt: Int64) {
    let (path, query) = split(links.path(to: relative, now: signedAt))
    let result = links.verify(rawPath: path, query: query, now: checkedAt)
    // Bytes, not Characters: a combining mark after "/" must not hide the "/".
    let parts = relative.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { Array($0) }
    // nginx's $uri merges "//" and resolves "." and ".." (a trailing "/" stays): those it would change.
    let unnormalised = parts.dropLast().contains([]) || parts.contains(Array(".".utf8)) || parts.contains(Array("..".utf8))
    let nul = relative.utf8.contains(0)
    switch result {
    case .valid(let back):
        if back != relative { fatalError("\(links.format): signed \(relative.debugDescription), verified \(back.debugDescription)") }
        if nul { fatalError("\(links.format): a NUL path verified") }
        if links.format == .nginx, unnormalised { fatalError("nginx: an unnormalised path verified") }
        let age = checkedAt - signedAt
        if age > 3600 || (links.format == .kiosk && age < -3600) { fatalError("\(links.format): verified out of its lifetime") }
    case .expired:
        if checkedAt - signedAt <= 3600 && checkedAt - signedAt >= (links.format == .kiosk ? -3600 : Int64.min) {
            fatalError("\(links.format): \(relative.debugDescription) expired inside its lifetime")
        }
    case .forbidden(let reason):
        // Only paths the verifier refuses on purpose may fail.
        if !nul && !(links.format == .nginx && unnormalised) && !relative.isEmpty {
            fatalError("\(links.format): own link for \(relative.debugDescription) refused: \(reason)")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLinks(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let rest = UnsafeBufferPointer(start: data + 1, count: size - 1)
    switch data[0] % 3 {
    case 0:
        let text = String(decoding: rest, as: UTF8.self)
        let newline = text.firstIndex(of: "\n")
        let path = newline.map { String(text[..<$0]) } ?? text
        let query = newline.map { String(text[text.index(after: $0)...]) }
        for links in [kiosk, nginx] {
            if case .valid(let relative) = links.verify(rawPath: path, query: query, now: now) {
                // A forgery: nothing the fuzzer writes should carry a valid token.
                fatalError("\(links.format): forged link accepted: \(path.debugDescription) -> \(relative.debugDescription)")
            }
        }
        _ = SignedLinks.percentDecode(text)
    case 1:
        guard let relative = String(validating: rest, as: UTF8.self) else { return 0 }
        expectValid(kiosk, relative, signedAt: now, checkedAt: now)
        expectValid(nginx, relative, signedAt: now, checkedAt: now)
    default:
        guard rest.count >= 8 else { return 0 }
        var raw: UInt64 = 0
        for index in 0..<8 { raw = raw << 8 | UInt64(rest[index]) }
        // A clock between 1970 and year ~36000 for the check, signing within ±2^24 s of it.
        let checkedAt = Int64(raw >> 24)
        let signedAt = max(0, checkedAt + Int64(Int32(truncatingIfNeeded: raw)) >> 7)
        let relative = String(decoding: UnsafeBufferPointer(rebasing: rest[8...]), as: UTF8.self)
        guard !relative.isEmpty else { return 0 }
        expectValid(kiosk, relative, signedAt: signedAt, checkedAt: checkedAt)
        expectValid(nginx, relative, signedAt: signedAt, checkedAt: checkedAt)
    }
    return 0
}
