import Foundation

/// A Boolean set and read from any thread or task.
package final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Bool

    package init(_ value: Bool = false) { self.value = value }

    package var isSet: Bool { lock.withLock { value } }
    package func set(_ newValue: Bool = true) { lock.withLock { value = newValue } }
}
