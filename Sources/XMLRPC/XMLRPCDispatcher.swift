// Method registry, system.* methods (introspection, multicall, capabilities) and request handling.

import NIOCore

/// One registered method.
public struct XMLRPCMethod<Context: Sendable>: Sendable {
    public var name: String
    /// Signatures for `system.methodSignature`, return type first, e.g. `[["array", "string", "string"]]`.
    public var signatures: [[String]]
    public var help: String
    public var handler: @Sendable (XMLRPCParameters, Context) async throws -> XMLRPCValue

    public init(name: String, signatures: [[String]], help: String,
                handler: @escaping @Sendable (XMLRPCParameters, Context) async throws -> XMLRPCValue) {
        self.name = name
        self.signatures = signatures
        self.help = help
        self.handler = handler
    }
}

/// What ``XMLRPCDispatcher`` produced for one request body.
public struct XMLRPCDispatchResult: Sendable {
    /// The complete response document.
    public var body: ByteBuffer
    /// The method called; nil when the body could not be decoded.
    public var methodName: String?
    /// The top-level fault, if the response is one (faults inside a multicall are not top-level).
    public var fault: XMLRPCFault?

    public init(body: ByteBuffer, methodName: String?, fault: XMLRPCFault?) {
        self.body = body
        self.methodName = methodName
        self.fault = fault
    }
}

/// A registry of methods plus the `system.*` ones; turns a request body into a response body.
///
/// Handler errors become faults: an ``XMLRPCFault`` as is, an ``XMLRPCFaultConvertible`` as its fault,
/// anything else as -32603 "internal error" (reported to ``onInternalError``, never to the client).
public struct XMLRPCDispatcher<Context: Sendable>: Sendable {
    public var limits: XMLRPCLimits
    /// Members added to the `system.getCapabilities` struct after the standard ones.
    public var capabilities: [XMLRPCMember]
    /// Called with the error and the method name whenever a handler fails with an error that is not a
    /// fault (the client only sees -32603).
    public var onInternalError: (@Sendable (any Error, String) -> Void)?
    /// Called once per executed method (each `system.multicall` entry too, and the multicall itself)
    /// with its fault, if any, and its duration. Unknown methods are not reported here (their names
    /// come from clients); see ``XMLRPCDispatchResult/fault`` for those.
    public var observer: (@Sendable (_ method: String, _ fault: XMLRPCFault?, _ seconds: Double) -> Void)?

    private var methods: [String: XMLRPCMethod<Context>] = [:]

    public init(limits: XMLRPCLimits = .init(), capabilities: [XMLRPCMember] = []) {
        self.limits = limits
        self.capabilities = capabilities
    }

    /// The built-in methods, always present.
    public static var systemMethodNames: [String] { SystemMethod.allCases.map(\.rawValue) }

    /// Adds (or replaces) a method. The name must be a valid XML-RPC method name and not a `system.*`
    /// built-in.
    public mutating func register(
        _ name: String, signature: [[String]], help: String,
        _ handler: @escaping @Sendable (XMLRPCParameters, Context) async throws -> XMLRPCValue
    ) {
        register(XMLRPCMethod(name: name, signatures: signature, help: help, handler: handler))
    }

    /// Adds (or replaces) a method.
    public mutating func register(_ method: XMLRPCMethod<Context>) {
        precondition(isValidMethodName(method.name), "invalid XML-RPC method name \(method.name)")
        precondition(SystemMethod(rawValue: method.name) == nil, "\(method.name) is built in")
        methods[method.name] = method
    }

    /// A registered method (not the built-ins).
    public func method(named name: String) -> XMLRPCMethod<Context>? {
        methods[name]
    }

    /// Every method name, the `system.*` ones included, sorted.
    public var methodNames: [String] {
        (Array(methods.keys) + Self.systemMethodNames).sorted()
    }

    // MARK: Requests

    /// Decodes a request body (synchronously: the buffer need not outlive this call).
    public func decode(_ body: UnsafeRawBufferPointer, encoding: String? = nil) -> Result<XMLRPCCall, XMLRPCFault> {
        do throws(XMLRPCFault) {
            return .success(try XMLRPCDecoder.decodeCall(body, encoding: encoding, limits: limits))
        } catch {
            return .failure(error)
        }
    }

    /// Decodes, dispatches (including `system.multicall`) and encodes. Never fails: every problem is a
    /// fault response. The body is decoded before the first suspension point.
    public func respond(to body: UnsafeRawBufferPointer, encoding: String? = nil,
                        context: Context) async -> XMLRPCDispatchResult {
        let decoded = decode(body, encoding: encoding)
        return await respond(to: decoded, context: context)
    }

    /// Decodes, dispatches (including `system.multicall`) and encodes. Never fails.
    public func respond(to body: [UInt8], encoding: String? = nil, context: Context) async -> XMLRPCDispatchResult {
        let decoded = body.withUnsafeBytes { decode($0, encoding: encoding) }
        return await respond(to: decoded, context: context)
    }

    /// Dispatches an already decoded request (or answers its decoding fault).
    public func respond(to decoded: Result<XMLRPCCall, XMLRPCFault>, context: Context) async -> XMLRPCDispatchResult {
        switch decoded {
        case .success(let call):
            return await respond(to: call, context: context)
        case .failure(let fault):
            return XMLRPCDispatchResult(body: XMLRPCEncoder.encodeFault(fault), methodName: nil, fault: fault)
        }
    }

    /// Dispatches one call and encodes its response.
    public func respond(to call: XMLRPCCall, context: Context) async -> XMLRPCDispatchResult {
        let result = await execute(call, context: context, nested: false)
        switch result {
        case .success(let value):
            do throws(XMLRPCFault) {
                let body = try XMLRPCEncoder.encodeResponse(value)
                return XMLRPCDispatchResult(body: body, methodName: call.methodName, fault: nil)
            } catch {
                onInternalError?(XMLRPCNonFiniteDouble(), call.methodName)
                return XMLRPCDispatchResult(body: XMLRPCEncoder.encodeFault(error), methodName: call.methodName,
                                            fault: error)
            }
        case .failure(let fault):
            return XMLRPCDispatchResult(body: XMLRPCEncoder.encodeFault(fault), methodName: call.methodName,
                                        fault: fault)
        }
    }

    /// Answers a request without suspending when `answer` has the result at hand (an answer kept in
    /// memory): decodes, asks `answer` for a registered method's result, encodes and reports it like
    /// any call. nil when the body does not decode, the method is a built-in or unknown, or `answer`
    /// has nothing; the request then goes the usual way (`respond`), which gives any fault.
    public func respondImmediately(to body: UnsafeRawBufferPointer, encoding: String? = nil,
                                   answer: (XMLRPCCall) -> XMLRPCValue?) -> XMLRPCDispatchResult? {
        let start = ContinuousClock.now
        guard case .success(let call) = decode(body, encoding: encoding), methods[call.methodName] != nil,
              let value = answer(call), let encoded = try? XMLRPCEncoder.encodeResponse(value)
        else { return nil }
        report(call.methodName, .success(value), since: start)
        return XMLRPCDispatchResult(body: encoded, methodName: call.methodName, fault: nil)
    }

    /// Runs one call; `nested` is true inside `system.multicall`.
    public func execute(_ call: XMLRPCCall, context: Context, nested: Bool = false) async
        -> Result<XMLRPCValue, XMLRPCFault>
    {
        let name = call.methodName
        let parameters = XMLRPCParameters(call.params)
        if let system = SystemMethod(rawValue: name) {
            if system == .multicall && nested {
                return .failure(.invalidRequest("system.multicall may not be nested"))
            }
            let start = ContinuousClock.now
            let result: Result<XMLRPCValue, XMLRPCFault>
            do throws(XMLRPCFault) {
                result = .success(try await runSystem(system, parameters, context: context))
            } catch {
                result = .failure(error)
            }
            report(name, result, since: start)
            return result
        }
        guard let method = methods[name] else { return .failure(.methodNotFound(name)) }
        let start = ContinuousClock.now
        let result: Result<XMLRPCValue, XMLRPCFault>
        do {
            result = .success(try await method.handler(parameters, context))
        } catch let fault as XMLRPCFault {
            result = .failure(fault)
        } catch let convertible as any XMLRPCFaultConvertible {
            result = .failure(convertible.xmlrpcFault)
        } catch {
            onInternalError?(error, name)
            result = .failure(.internalError)
        }
        report(name, result, since: start)
        return result
    }

    private func report(_ name: String, _ result: Result<XMLRPCValue, XMLRPCFault>, since start: ContinuousClock.Instant) {
        guard let observer else { return }
        let elapsed = (ContinuousClock.now - start).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
        switch result {
        case .success: observer(name, nil, seconds)
        case .failure(let fault): observer(name, fault, seconds)
        }
    }

    // MARK: system.*

    private enum SystemMethod: String, CaseIterable {
        case listMethods = "system.listMethods"
        case methodHelp = "system.methodHelp"
        case methodSignature = "system.methodSignature"
        case getCapabilities = "system.getCapabilities"
        case multicall = "system.multicall"

        var signatures: [[String]] {
            switch self {
            case .listMethods: return [["array"]]
            case .methodHelp: return [["string", "string"]]
            case .methodSignature: return [["array", "string"]]
            case .getCapabilities: return [["struct"]]
            case .multicall: return [["array", "array"]]
            }
        }

        var help: String {
            switch self {
            case .listMethods:
                return "Returns the names of all methods, sorted."
            case .methodHelp:
                return "Returns the help text of the named method."
            case .methodSignature:
                return "Returns the signatures of the named method: an array of arrays of type names, "
                    + "return type first."
            case .getCapabilities:
                return "Returns the XML-RPC specifications and extensions this server implements."
            case .multicall:
                return "Runs an array of calls ({methodName, params} structs) in order; returns an array "
                    + "holding, for each, a one-element array with its result or a {faultCode, faultString} "
                    + "struct."
            }
        }
    }

    private func runSystem(_ method: SystemMethod, _ parameters: XMLRPCParameters,
                           context: Context) async throws(XMLRPCFault) -> XMLRPCValue {
        switch method {
        case .listMethods:
            return .array(methodNames.map { .string($0) })
        case .methodHelp:
            let name = try parameters.string(0, "method")
            if let system = SystemMethod(rawValue: name) { return .string(system.help) }
            guard let method = methods[name] else { throw unknown(name) }
            return .string(method.help)
        case .methodSignature:
            let name = try parameters.string(0, "method")
            let signatures: [[String]]
            if let system = SystemMethod(rawValue: name) {
                signatures = system.signatures
            } else if let method = methods[name] {
                signatures = method.signatures
            } else {
                throw unknown(name)
            }
            // Introspection convention: no known signature -> the string "undef".
            guard !signatures.isEmpty else { return .string("undef") }
            return .array(signatures.map { .array($0.map { .string($0) }) })
        case .getCapabilities:
            func capability(_ url: String, _ version: Int32) -> XMLRPCValue {
                .structure([XMLRPCMember("specUrl", .string(url)), XMLRPCMember("specVersion", .int(version))])
            }
            var members = [
                XMLRPCMember("xmlrpc", capability("http://www.xmlrpc.com/spec", 1)),
                XMLRPCMember("introspect",
                             capability("http://xmlrpc-c.sourceforge.net/xmlrpc-c/introspection.html", 1)),
                XMLRPCMember("multicall", capability("http://www.xmlrpc.com/discuss/msgReader$1208", 1)),
                XMLRPCMember("nil", capability("http://ontosys.com/xml-rpc/extensions.php", 20010516)),
                XMLRPCMember("faults_interop",
                             capability("http://xmlrpc-epi.sourceforge.net/specs/rfc.fault_codes.php", 20010516)),
            ]
            members.append(contentsOf: capabilities)
            return .structure(members)
        case .multicall:
            return try await multicall(parameters, context: context)
        }
    }

    private func unknown(_ name: String) -> XMLRPCFault {
        let shown = name.utf8.count > 256 ? String(name.prefix(64)) + "…" : name
        return .invalidParameter("method", "unknown method \(shown)")
    }

    private func multicall(_ parameters: XMLRPCParameters, context: Context) async throws(XMLRPCFault) -> XMLRPCValue {
        guard case .array(let calls)? = parameters.value(0) else {
            throw .invalidParameter("calls", "expected an array of {methodName, params} structs")
        }
        guard calls.count <= limits.maxMulticallCalls else {
            throw .invalidParameter("calls", "more than \(limits.maxMulticallCalls) calls")
        }
        var results: [XMLRPCValue] = []
        results.reserveCapacity(calls.count)
        for entry in calls {
            let outcome: Result<XMLRPCValue, XMLRPCFault>
            if case .structure = entry {
                if case .string(let name)? = entry["methodName"], isValidMethodName(name) {
                    switch entry["params"] {
                    case .array(let params)?:
                        outcome = await execute(XMLRPCCall(methodName: name, params: params),
                                                context: context, nested: true)
                    case nil, .nil?:
                        outcome = await execute(XMLRPCCall(methodName: name, params: []),
                                                context: context, nested: true)
                    default:
                        outcome = .failure(.invalidRequest("multicall params must be an array"))
                    }
                } else {
                    outcome = .failure(.invalidRequest("multicall entry without a valid methodName"))
                }
            } else {
                outcome = .failure(.invalidRequest("multicall entry must be a struct"))
            }
            switch outcome {
            case .success(let value):
                if value.containsNonFiniteDouble {
                    if case .string(let name)? = entry["methodName"] { onInternalError?(XMLRPCNonFiniteDouble(), name) }
                    results.append(Self.faultStruct(.internalError))
                } else {
                    results.append(.array([value]))
                }
            case .failure(let fault):
                results.append(Self.faultStruct(fault))
            }
        }
        return .array(results)
    }

    private static func faultStruct(_ fault: XMLRPCFault) -> XMLRPCValue {
        .structure([
            XMLRPCMember("faultCode", .int(Int32(clamping: fault.code))),
            XMLRPCMember("faultString", .string(fault.message)),
        ])
    }
}

/// Reported to `onInternalError` when a result cannot be encoded (XML-RPC has no infinity or NaN).
public struct XMLRPCNonFiniteDouble: Error, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String { "a result holds an infinite or NaN double, which XML-RPC cannot carry" }
}

extension XMLRPCValue {
    var containsNonFiniteDouble: Bool {
        switch self {
        case .double(let number): return !number.isFinite
        case .array(let values): return values.contains { $0.containsNonFiniteDouble }
        case .structure(let members): return members.contains { $0.value.containsNonFiniteDouble }
        default: return false
        }
    }
}
