import KioskIntegers
import KioskModels
import XMLRPC

/// A call of an identity-free catalogue method, `getEdicions` or `getDarrersEdicio`, as read from its
/// parameters: what its answer depends on, the key it is kept under (`AnswerCache`), and the device to
/// note as seen. The answer is the same for every device of an app, so the identity key is not in the key.
struct CatalogueCall {
    /// `getDarrersEdicio`'s listing; nil for `getEdicions`.
    struct Listing {
        var editionID: Int
        var date: IssueDate?
        var count: Int
        var direction: ListingDirection
    }

    var appKey: String
    var identityKey: String
    var listing: Listing?

    /// `getEdicions(appkey, idenkey)`.
    static func getEdicions(_ params: XMLRPCParameters) throws -> CatalogueCall {
        CatalogueCall(appKey: try params.string(0, "appkey"), identityKey: try params.string(1, "idenkey"), listing: nil)
    }

    /// `getDarrersEdicio(appkey, idenkey, edicio_id, data, num, direccio)`.
    static func getDarrersEdicio(_ params: XMLRPCParameters) throws -> CatalogueCall {
        try listingCall(params).call
    }

    /// `getDarrersEdicio`'s call and its listing, which such a call always has.
    static func listingCall(_ params: XMLRPCParameters) throws -> (call: CatalogueCall, listing: Listing) {
        let appKey = try params.string(0, "appkey")
        let identityKey = try params.string(1, "idenkey")
        let listing = Listing(
            editionID: try params.int(2, "edicio_id", in: 1...Int(widening: Int32.max)),
            date: try KioskMethods.optionalDate(params, 3, "data"),
            count: try params.int(4, "num", default: IssueListing.defaultCount, in: IssueListing.countRange),
            direction: try KioskMethods.listingDirection(params, 5, "direccio"))
        return (CatalogueCall(appKey: appKey, identityKey: identityKey, listing: listing), listing)
    }

    /// The call `name` with `params`, if it is `getEdicions` or `getDarrersEdicio` and its parameters are valid.
    static func read(_ name: String, _ params: XMLRPCParameters) -> CatalogueCall? {
        switch name {
        case "epquiosc.getEdicions": try? getEdicions(params)
        case "epquiosc.getDarrersEdicio": try? getDarrersEdicio(params)
        default: nil
        }
    }

    /// Notes the caller's device as seen: the one place for every answer of a catalogue call, made or
    /// kept, whichever way it was given (the router, or the connection's kept answers).
    func noteCaller(in service: KioskService) {
        service.noteSeen(appKey: appKey, identityKey: identityKey)
    }

    /// The name its answers are kept under.
    var cacheMethod: String { listing == nil ? "getEdicions" : "getDarrersEdicio" }

    /// What, beside the catalogue version and the link bucket, its answer depends on.
    var cacheArguments: [String] {
        guard let listing else { return [appKey] }
        return [appKey, String(listing.editionID), listing.date?.description ?? "", String(listing.count), "\(listing.direction)"]
    }
}

extension KioskMethods {
    /// The answer of `call` kept under catalogue version `catalogueVersion` and the link bucket of now,
    /// for an identity-free catalogue call with valid parameters; the device is noted as seen, as the
    /// method does on a kept answer. nil: the call goes the usual way (`respond`), which makes the
    /// answer or gives the fault.
    public static func keptAnswer(to call: XMLRPCCall, catalogueVersion: Int64, env: KioskRPCEnvironment) -> XMLRPCValue? {
        guard let catalogueCall = CatalogueCall.read(call.methodName, XMLRPCParameters(call.params)),
              let answer = env.keptAnswer(catalogueCall.cacheMethod, catalogueCall.cacheArguments,
                                          catalogueVersion: catalogueVersion, now: env.service.clock.now)
        else { return nil }
        catalogueCall.noteCaller(in: env.service)
        return answer
    }
}
