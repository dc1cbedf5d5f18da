#if canImport(Glibc)
import KioskIntegers
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The time the kiosk's rules read, in Unix seconds: one clock, passed to whatever needs the time;
/// tests give their own.
public protocol KioskClock: Sendable {
    var now: Int64 { get }
}

/// The system's wall clock.
public struct SystemClock: KioskClock {
    public init() {}
    public var now: Int64 { Int64(widening: time(nil)) }
}
