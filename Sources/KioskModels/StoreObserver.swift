/// What a store reports about its own work as it happens; metrics plug in here, at the wiring (as
/// postgres-nio reports to its observer). A store times each operation where it enters its database.
public protocol StoreObserver: Sendable {
    /// One operation finished: how long it took and whether it threw.
    func storeOperation(_ operation: StoreOperation, duration: Duration, failed: Bool)
    /// Whether the store knows the catalogue version at once (PostgreSQL: whether its listening connection is up).
    func catalogueListener(connected: Bool)
}

extension StoreObserver {
    public func catalogueListener(connected: Bool) {}
}

/// The observer when nobody listens.
public struct UnobservedStore: StoreObserver {
    public init() {}
    public func storeOperation(_ operation: StoreOperation, duration: Duration, failed: Bool) {}
}

/// A store operation, named by the store method it runs in (`#function`): `consumeDemo(appKey:deviceKey:quota:at:)`
/// is `consume_demo`. Equal and hashed by that text without copying it, so an observer keys its series by it cheaply.
public struct StoreOperation: Hashable, Sendable, CustomStringConvertible {
    private let function: StaticString

    public init(_ function: StaticString) { self.function = function }

    /// The method's base name in snake case: what metrics label the operation with.
    public var name: String {
        var name = ""
        for character in String(describing: function).prefix(while: { $0 != "(" }) {
            if character.isUppercase {
                if !name.isEmpty { name.append("_") }
                name.append(contentsOf: character.lowercased())
            } else {
                name.append(character)
            }
        }
        return name
    }

    public var description: String { name }

    public static func == (lhs: StoreOperation, rhs: StoreOperation) -> Bool {
        lhs.function.withUTF8Buffer { left in rhs.function.withUTF8Buffer { right in left.elementsEqual(right) } }
    }

    public func hash(into hasher: inout Hasher) {
        function.withUTF8Buffer { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension StoreObserver {
    /// Runs `body`, reporting its time and whether it threw as `operation`.
    public func timing<Result>(_ operation: StaticString, _ body: () throws -> Result) rethrows -> Result {
        let start = ContinuousClock.now
        do {
            let result = try body()
            storeOperation(StoreOperation(operation), duration: start.duration(to: .now), failed: false)
            return result
        } catch {
            storeOperation(StoreOperation(operation), duration: start.duration(to: .now), failed: true)
            throw error
        }
    }

    /// `timing` for asynchronous work.
    public func timing<Result>(_ operation: StaticString, isolation: isolated (any Actor)? = #isolation,
                               _ body: () async throws -> Result) async rethrows -> Result {
        let start = ContinuousClock.now
        do {
            let result = try await body()
            storeOperation(StoreOperation(operation), duration: start.duration(to: .now), failed: false)
            return result
        } catch {
            storeOperation(StoreOperation(operation), duration: start.duration(to: .now), failed: true)
            throw error
        }
    }
}
