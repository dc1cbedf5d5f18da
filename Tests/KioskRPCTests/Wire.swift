import Foundation
import KioskModels
import KioskRPC
import KioskTestSupport
import Logging
import Testing
import XMLRPC

/// The kiosk methods in the XML-RPC dispatcher as the server registers them, over `ServiceFixture`
/// (SQLite, sample issues), with links and bundles that name what they were given. No HTTP.
struct Wire {
    let fixture: ServiceFixture
    let dispatcher: XMLRPCDispatcher<WireContext>
    let context: WireContext
    let sections: SectionLog

    static let tokenSecret = Array("wire-token-secret-0123456789abcdefghij".utf8)
    static let tokenLifetime = 300
    /// Where Kiosk's own web kiosks are: `presencia` has none stored, so it links to its own.
    static let ownWebKiosks = "http://kiosk.test/web"

    /// Catalogue answers are kept (`AnswerCache`) unless `answerCacheBytes` is 0.
    init(signInPolicy: SignInPolicy = SignInPolicy(), answerCacheBytes: Int = 1 << 20) async throws {
        fixture = try await ServiceFixture.sqlite(signInPolicy: signInPolicy)
        sections = SectionLog()
        let environment = KioskRPCEnvironment(
            service: fixture.service, links: TestLinks(), bundles: TestBundles(), ownWebKiosks: Self.ownWebKiosks,
            webKioskTokens: WebKioskTokenSigner(secret: Self.tokenSecret), webKioskTokenLifetime: Self.tokenLifetime,
            observer: sections, answers: AnswerCache(name: "answers", byteLimit: answerCacheBytes, observer: sections))
        context = WireContext(environment: environment, logger: Logger(label: "wire", factory: { _ in SwiftLogNoOpLogHandler() }))
        var dispatcher = XMLRPCDispatcher<WireContext>()
        KioskMethods.register(into: &dispatcher)
        self.dispatcher = dispatcher
    }

    /// Sends a request body calling `method` with `params`, each the inner XML of a `<value>` (a bare
    /// text is an untyped string, as the 2012 apps send), and decodes the answer's body.
    func call(_ method: String, _ params: [String]) async throws -> Result<XMLRPCValue, XMLRPCFault> {
        let values = params.map { "<param><value>\($0)</value></param>" }.joined()
        let body = #"<?xml version="1.0"?><methodCall><methodName>\#(method)</methodName><params>\#(values)</params></methodCall>"#
        let result = await dispatcher.respond(to: Array(body.utf8), context: context)
        let answer = try XMLRPCDecoder.decodeResponse(result.body)
        if case .failure(let fault) = answer { #expect(result.fault == fault, "the dispatcher reports the fault it answers") }
        return answer
    }

    /// The answer, failing the test on a fault.
    func value(_ method: String, _ params: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> XMLRPCValue {
        let answer = try await call(method, params)
        if case .failure(let fault) = answer { Issue.record("\(method): \(fault)", sourceLocation: sourceLocation) }
        return try answer.get()
    }

    /// The fault answered; nil (and a failed test) for a value.
    func fault(_ method: String, _ params: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws -> XMLRPCFault? {
        let answer = try await call(method, params)
        guard case .failure(let fault) = answer else {
            Issue.record("\(method) answered a value", sourceLocation: sourceLocation)
            return nil
        }
        return fault
    }

    /// The identity key `registrar` gives `device` on `app`, signed in when a username is given.
    func register(_ app: String = "quiosc", device: String, username: String = "", password: String = "") async throws -> String {
        try await value("epusuaris.registrar", [app, device, username, password, "", "iOS"])["iden_key"]?.stringValue ?? ""
    }
}

struct WireContext: KioskRPCContext {
    let environment: KioskRPCEnvironment
    let logger: Logger
}

/// `https://files.test/<path>?expires=<now + 3600>`.
struct TestLinks: LinkSigning {
    func link(to relativePath: String, now: Int64) -> String { "https://files.test/\(relativePath)?expires=\(now + 3600)" }
    func linkBucket(now: Int64) -> Int64 { now }
}

/// The bundle the issue records; for an issue without one, `built.zip` of its revision, as if just built.
struct TestBundles: IssueBundles {
    func bundle(for contents: IssueContents, offered: OfferedEdition) async throws -> BundleInfo {
        contents.bundle ?? BundleInfo(path: "\(contents.editionID)/\(contents.date)/r\(contents.revision)/built.zip",
                                      size: 1, sha256: String(repeating: "0", count: 64))
    }
}

/// What the methods reported: unknown `seccioQ` names and answer cache lookups, in order.
final class SectionLog: KioskRPCObserver, CacheObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []
    private var lookups: [String] = []
    var unknown: [String] { lock.withLock { entries } }
    /// `method:hit` or `method:miss`.
    var cacheLookups: [String] { lock.withLock { lookups } }
    func unknownSection(appKey: String, section: String) { lock.withLock { entries.append("\(appKey):\(section)") } }
    func cacheLookup(cache: String, lookup: String, hit: Bool) { lock.withLock { lookups.append("\(lookup):\(hit ? "hit" : "miss")") } }
    func cacheEvicted(cache: String, entries: Int, reason: CacheEviction) {}
}

extension XMLRPCValue {
    /// A structure's member names in order.
    var memberNames: [String] { structureValue?.map(\.name) ?? [] }

    /// Whether every value inside (through arrays and structures) is a `string`, as the 2012 contract has it.
    var onlyStrings: Bool {
        switch self {
        case .string: true
        case .array(let values): values.allSatisfy(\.onlyStrings)
        case .structure(let members): members.allSatisfy(\.value.onlyStrings)
        default: false
        }
    }
}
