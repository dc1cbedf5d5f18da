import KioskIntegers
import KioskModels
import XMLRPC

/// The push notification methods Kiosk adds to the 2012 contract: `registrarAvisos` and `esborrarAvisos`.
public enum PushMethods {
    public static func register<Context: KioskRPCContext>(into dispatcher: inout XMLRPCDispatcher<Context>) {
        dispatcher.register(
            "epusuaris.registrarAvisos",
            signature: [["boolean", "string", "string", "string", "string", "string", "array"],
                        ["boolean", "string", "string", "string", "string", "string", "array", "string"]],
            help: "registrarAvisos(app_key, disp_key, iden_key, plataforma, token, edicions, idioma): registers the device's push "
                + "token (plataforma apns or fcm) for new issues of the editions listed (an array of edition ids; empty: every "
                + "edition the identity may read), replacing the device's earlier token; idioma (optional) picks the alert's "
                + "language. Answers true.",
            { params, context in try await registrarAvisos(params, context.environment) })
        dispatcher.register(
            "epusuaris.esborrarAvisos",
            signature: [["boolean", "string", "string", "string"], ["boolean", "string", "string", "string", "string"]],
            help: "esborrarAvisos(app_key, disp_key, iden_key, token): stops push notifications to the device (only while its "
                + "token is token, when given). Answers whether a registration was removed.",
            { params, context in try await esborrarAvisos(params, context.environment) })
    }

    static func registrarAvisos(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let editions = try editionIDs(params, 5, "edicions")
        _ = try await env.service.registerPush(
            appKey: try params.string(0, "app_key"), deviceKey: try params.string(1, "disp_key"),
            identityKey: try params.string(2, "iden_key"), platform: try params.string(3, "plataforma"),
            token: try params.string(4, "token"), editions: editions, language: try params.string(6, "idioma"))
        return .bool(true)
    }

    static func esborrarAvisos(_ params: XMLRPCParameters, _ env: KioskRPCEnvironment) async throws -> XMLRPCValue {
        let removed = try await env.service.unregisterPush(
            appKey: try params.string(0, "app_key"), deviceKey: try params.string(1, "disp_key"),
            identityKey: try params.string(2, "iden_key"), token: try params.string(3, "token"))
        return .bool(removed)
    }

    /// An array of edition ids, each a numeric string or an int; absent, nil or "" is an empty list.
    static func editionIDs(_ params: XMLRPCParameters, _ index: Int, _ name: String) throws(XMLRPCFault) -> [Int] {
        let items: [XMLRPCValue]
        switch params.value(index) {
        case .array(let values)?: items = values
        case nil, .nil?: return []
        case .string(let text)? where text.isEmpty: return []
        case let other?: throw .invalidParameter(name, "expected an array of edition ids, got \(other.typeName)")
        }
        guard items.count <= PushRegistrationRules.maximumEditions else {
            throw .invalidParameter(name, "at most \(PushRegistrationRules.maximumEditions) editions")
        }
        let list = XMLRPCParameters(items), ids = 1...Int(widening: Int32.max)
        return try items.indices.map { (offset: Int) throws(XMLRPCFault) -> Int in try list.int(offset, name, in: ids) }
    }
}
