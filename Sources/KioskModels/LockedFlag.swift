import Foundation

/// A Boolean set and read from any thread or task.
public final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Bool

    public init(_ value: Bool = false) { self.value = value }

    public var isSet: Bool { lock.withLock { value } }
    public func set(_ newValue: Bool = true) { lock.withLock { value = newValue } }
}
