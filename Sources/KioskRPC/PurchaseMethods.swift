import KioskIntegers
import KioskModels
import XMLRPC

/// The store purchase methods Kiosk adds to the 2012 contract: `getProductes`, `registrarCompra`,
/// `restaurarCompres` and `bescanviarCredit`. Every member is a `string`, as in the rest of the contract.
public enum PurchaseMethods {
    public static func register<Context: KioskRPCContext>(into dispatcher: inout XMLRPCDispatcher<Context>) {
        dispatcher.register(
            "epquiosc.getProductes", signature: [["struct", "string", "string"]],
            help: "getProductes(appkey, idenkey): the identity's store account token (compte) and the products the app sells "
                + "(id, id_apple, id_google, tipus, edicions, credits, abast).",
            { params, context in try await getProductes(params, context.environment) })
        dispatcher.register(
            "epusuaris.registrarCompra",
            signature: [["struct", "string", "string", "string", "string", "string", "string", "string"],
                        ["struct", "string", "string", "string", "string", "struct", "string", "string"],
                        ["struct", "string", "string", "string", "string", "string", "int", "string"],
                        ["struct", "string", "string", "string", "string", "struct", "int", "string"]],
            help: "registrarCompra(app_key, disp_key, iden_key, botiga, compra, edicio_id, data): verifies a store purchase "
                + "(botiga apple: the StoreKit 2 signed transaction; google: a struct of producte and token) and binds it to "
                + "the identity; an issue purchase to the issue named. Answers as registrar, plus compra.",
            { params, context in try await registrarCompra(params, context.environment) })
        dispatcher.register(
            "epusuaris.restaurarCompres",
            signature: [["struct", "string", "string", "string", "string", "array"]],
            help: "restaurarCompres(app_key, disp_key, iden_key, botiga, compres): registers each purchase a device restored "
                + "from its store. Answers as registrar, plus compres.",
            { params, context in try await restaurarCompres(params, context.environment) })
        dispatcher.register(
            "epusuaris.bescanviarCredit",
            signature: [["struct", "string", "string", "string", "string", "string"],
                        ["struct", "string", "string", "string", "int", "string"]],
            help: "bescanviarCredit(app_key, disp_key, iden_key, edicio_id, data): opens an issue with one credit of a pack "
                + "(nothing is spent on an issue already open). Answers as registrar, plus compra.",
            { params, context in try await bescanviarCredit(params, context.environment) })
    }

    static func getProductes(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let appKey = try params.string(0, "appkey")
        let (token, products) = try await env.service.products(appKey: appKey, identityKey: try params.string(1, "idenkey"))
        let subscriberEditions = try await env.service.subscriberEditions(appKey: appKey)
        return .structure([
            XMLRPCMember("compte", .string(token)),
            XMLRPCMember("productes", .array(products.map { product in
                .structure([
                    XMLRPCMember("id", .string(product.id)),
                    XMLRPCMember("id_apple", .string(product.storeID(in: .apple))),
                    XMLRPCMember("id_google", .string(product.storeID(in: .google))),
                    XMLRPCMember("tipus", .string(product.kind.rawValue)),
                    XMLRPCMember("edicions", .array(product.coveredEditions(subscriberEditions: subscriberEditions).sorted()
                        .map { .string(String($0)) })),
                    XMLRPCMember("credits", .string(String(product.credits))),
                    XMLRPCMember("abast", .string(product.kind == .subscription ? product.scope.rawValue : "")),
                ])
            })),
        ])
    }

    static func registrarCompra(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let store = try storefront(params, 3)
        let evidence = try purchaseEvidence(params.value(4), store: store, name: "compra")
        let editionID = try params.int(5, "edicio_id", default: 0, in: 0...Int(widening: Int32.max))
        let date = try KioskMethods.optionalDate(params, 6, "data")
        var issue: IssueRef?
        if editionID != 0 || date != nil {
            guard editionID != 0, let date else {
                throw XMLRPCFault.invalidParameter(editionID == 0 ? "edicio_id" : "data", "an issue is named by both edicio_id and data")
            }
            issue = IssueRef(editionID: editionID, date: date)
        }
        let (registration, held) = try await env.service.registerPurchase(
            appKey: try params.string(0, "app_key"), deviceKey: try params.string(1, "disp_key"),
            identityKey: try params.string(2, "iden_key"), evidence: evidence, issue: issue)
        return .structure(KioskMethods.registrationMembers(registration) + [
            XMLRPCMember("compra", purchaseValue(held, env.service.clock.now)),
        ])
    }

    static func restaurarCompres(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let store = try storefront(params, 3)
        guard case .array(let items)? = params.value(4) else {
            throw XMLRPCFault.invalidParameter("compres", "expected an array of purchases")
        }
        let evidence = try items.map { try purchaseEvidence($0, store: store, name: "compres") }
        let (registration, restored) = try await env.service.restorePurchases(
            appKey: try params.string(0, "app_key"), deviceKey: try params.string(1, "disp_key"),
            identityKey: try params.string(2, "iden_key"), evidence: evidence)
        let now = env.service.clock.now
        return .structure(KioskMethods.registrationMembers(registration) + [
            XMLRPCMember("compres", .array(restored.map { purchaseValue($0, now) })),
        ])
    }

    static func bescanviarCredit(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let editionID = try params.int(3, "edicio_id", in: 1...Int(widening: Int32.max))
        guard let date = try KioskMethods.optionalDate(params, 4, "data") else {
            throw XMLRPCFault.invalidParameter("data", "expected a date YYYY-MM-DD")
        }
        let (registration, pack) = try await env.service.spendCredit(
            appKey: try params.string(0, "app_key"), deviceKey: try params.string(1, "disp_key"),
            identityKey: try params.string(2, "iden_key"), issue: IssueRef(editionID: editionID, date: date))
        return .structure(KioskMethods.registrationMembers(registration) + [
            XMLRPCMember("compra", pack.map { purchaseValue($0, env.service.clock.now) } ?? .structure([])),
        ])
    }

    // MARK: Shapes

    /// `botiga`: `apple` or `google`.
    static func storefront(_ params: XMLRPCParameters, _ index: Int) throws -> Storefront {
        let text = try params.string(index, "botiga").trimmingASCIISpaces.lowercased()
        guard let store = Storefront(rawValue: text) else { throw XMLRPCFault.invalidParameter("botiga", "expected apple or google") }
        return store
    }

    /// A longest JWS or token an app may send: StoreKit's transactions are a few kilobytes.
    static let evidenceLimit = 64 * 1024

    /// `compra`: Apple's signed transaction as a string; Google's as a struct of `producte` and `token`.
    static func purchaseEvidence(_ value: XMLRPCValue?, store: Storefront, name: String) throws -> PurchaseEvidence {
        switch (store, value) {
        case (.apple, .string(let jws)?):
            let jws = jws.trimmingASCIISpaces
            guard !jws.isEmpty else { throw XMLRPCFault.invalidParameter(name, "expected the StoreKit signed transaction (JWS)") }
            guard jws.utf8.count <= evidenceLimit else {
                throw PurchaseError.unverifiable("the signed transaction is over \(evidenceLimit) bytes")
            }
            return .apple(signedTransaction: jws)
        case (.google, .structure(let members)?):
            func member(_ key: String) -> String? {
                guard case .string(let text)? = members.first(where: { $0.name == key })?.value else { return nil }
                return text.trimmingASCIISpaces
            }
            guard let productID = member("producte"), StoreProductID.isValid(productID) else {
                throw XMLRPCFault.invalidParameter(name, "expected a struct with producte, the Google Play product id")
            }
            guard let token = member("token"), !token.isEmpty, token.utf8.count <= evidenceLimit,
                  token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                throw XMLRPCFault.invalidParameter(name, "expected a struct with token, the Google Play purchase token")
            }
            return .google(productID: productID, token: token)
        case (.apple, _):
            throw XMLRPCFault.invalidParameter(name, "expected the StoreKit signed transaction (JWS) as a string")
        case (.google, _):
            throw XMLRPCFault.invalidParameter(name, "expected a struct with producte and token")
        }
    }

    /// `compra` in an answer: `producte`, `tipus`, `estat`, `fins` (a subscription's last day), `credits` (left in a pack),
    /// and the issues it opens as `exemplars` (`edicio_id`, `data`).
    static func purchaseValue(_ held: HeldPurchase, _ now: Int64) -> XMLRPCValue {
        let purchase = held.purchase
        let until = purchase.product.kind == .subscription && purchase.accessEnd > 0
            ? IssueDate(unixTime: purchase.accessEnd - 1).description : ""
        return .structure([
            XMLRPCMember("producte", .string(purchase.product.id)),
            XMLRPCMember("tipus", .string(purchase.product.kind.rawValue)),
            XMLRPCMember("estat", .string(purchase.state(at: now).rawValue)),
            XMLRPCMember("fins", .string(until)),
            XMLRPCMember("credits", .string(String(purchase.unspentCredits))),
            XMLRPCMember("exemplars", .array(purchase.issues.map { issue in
                .structure([XMLRPCMember("edicio_id", .string(String(issue.editionID))),
                            XMLRPCMember("data", .string(issue.date.description))])
            })),
        ])
    }
}
