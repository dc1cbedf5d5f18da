// Integer conversions that cannot trap: `T(widening: x)` exists only where every value of x's type
// is a value of T, so the compiler checks what a plain `T(x)` would check at run time. `Int` and
// `UInt` are taken as 64 bits wide (checked below).

#if !_pointerBitWidth(_64)
#error("Kiosk needs a 64-bit Int: the widening conversions below take Int64 into Int and back")
#endif

extension Int {
    @inlinable package init(widening value: Int8) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: Int16) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: Int32) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: Int64) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: Int) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt8) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt16) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt32) { self.init(truncatingIfNeeded: value) }
}

extension Int64 {
    @inlinable package init(widening value: Int8) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: Int16) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: Int32) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: Int64) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: Int) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt8) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt16) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt32) { self.init(truncatingIfNeeded: value) }
}

extension Int32 {
    @inlinable package init(widening value: Int8) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: Int16) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: Int32) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt8) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt16) { self.init(truncatingIfNeeded: value) }
}

extension UInt64 {
    @inlinable package init(widening value: UInt8) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt16) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt32) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt64) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt) { self.init(truncatingIfNeeded: value) }
}

extension UInt16 {
    @inlinable package init(widening value: UInt8) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt16) { self.init(truncatingIfNeeded: value) }
}

extension UInt32 {
    @inlinable package init(widening value: UInt8) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt16) { self.init(truncatingIfNeeded: value) }
    @inlinable package init(widening value: UInt32) { self.init(truncatingIfNeeded: value) }
}
