import TrafficModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Header fields read before, found again by their bytes, so that a field spelled exactly
/// as one met earlier shares its strings rather than being made again (a validation, a
/// copy and, past 15 bytes, an allocation each, and as many frees later).
///
/// A capture repeats most fields many times over: every request of a session carries the
/// same User-Agent, Accept and Host, every response the same Server and Content-Type, on
/// every connection. The cache is direct-mapped: a field's slot comes from its lengths and
/// a few of its bytes, and a field met there is taken only when its name and value match
/// byte for byte (the case of the name included); otherwise the new field takes the slot.
///
/// A reference, so that the parsers of every connection one collector reads can share one
/// (`HTTPConnection(fieldCache:)`); they and the cache run on that collector's thread.
public final class HeaderFieldCache: @unchecked Sendable {
    /// Held through a pointer, not an array property: a class's stored property is checked
    /// for exclusive access at run time on every use, which cost more than the lookup.
    private let slots: UnsafeMutableBufferPointer<HeaderField?>
    /// A slot is the key's top bits: 64 less this many.
    private let shift: UInt64

    /// `slots` is rounded up to a power of two.
    public init(slots: Int = 64) {
        var n = 1
        var bits: UInt64 = 0
        while n < max(slots, 1) {
            n <<= 1
            bits += 1
        }
        self.slots = .allocate(capacity: n)
        self.slots.initialize(repeating: nil)
        shift = 64 - bits
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    /// The field of these bytes: the one met before when there is one, else a new one,
    /// kept for the next time. `make` turns bytes into text.
    @inline(__always)
    func field(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, make: (UnsafeBufferPointer<UInt8>) -> String) -> HeaderField {
        // The top bits: a multiply carries each byte's bits upward only.
        let slot = Int(truncatingIfNeeded: Self.key(name, value) >> shift)
        if let earlier = slots[slot], Self.same(name, earlier.name), Self.same(value, earlier.value) { return earlier }
        let field = HeaderField(make(name), make(value))
        slots[slot] = field
        return field
    }

    /// The lengths, the name's first eight bytes and the value's first and last eight,
    /// mixed: fields of one name differ mostly at their value's ends, or in its length.
    @inline(__always)
    static func key(_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let m: UInt64 = 0x9E37_79B9_7F4A_7C15
        var h = UInt64(truncatingIfNeeded: name.count &<< 20 &+ value.count)
        h = (h ^ head(name)) &* m
        h = (h ^ head(value)) &* m
        return (h ^ tail(value)) &* m
    }

    /// Up to the first eight bytes, as a number.
    @inline(__always)
    static func head(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard let base = bytes.baseAddress else { return 0 }
        if bytes.count >= 8 { return UnsafeRawPointer(base).loadUnaligned(as: UInt64.self) }
        var word: UInt64 = 0
        for k in 0..<bytes.count { word |= UInt64(bytes[k]) &<< (8 * UInt64(k)) }
        return word
    }

    /// The last eight bytes, or fewer, as a number.
    @inline(__always)
    static func tail(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard let base = bytes.baseAddress, bytes.count > 8 else { return 0 }
        return UnsafeRawPointer(base + bytes.count - 8).loadUnaligned(as: UInt64.self)
    }

    /// Whether `bytes` are `text`'s UTF-8, exactly.
    @inline(__always)
    static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ text: String) -> Bool {
        guard text.utf8.count == bytes.count else { return false }
        guard let base = bytes.baseAddress else { return true }
        return text.utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, base, bytes.count) == 0 } ?? text.utf8.elementsEqual(bytes)
    }
}
