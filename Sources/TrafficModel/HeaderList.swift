#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A message's header fields in wire order, held as the UTF-8 of every name and value back
/// to back in one array, with the offsets where each ends in another.
///
/// An exchange's fields are read many times and changed almost never, and most of them
/// are the same across a capture (User-Agent, Accept, Server). Held as strings, each
/// field is two reference-counted objects, shared between exchanges: every copy of a list,
/// every value looked up and every list freed counted each string up or down, on
/// whichever core did it, and this was the largest cost of reading a capture after its
/// SHA-256. As bytes, a list is two objects however many fields it has, a lookup compares
/// bytes in place, and the store writes the bytes out as they are.
///
/// It is a collection of `HeaderField`s, so code that reads or edits fields one by one
/// (reports, exports, the secrets filter) works as on an array; the element is made on
/// each access. Hot paths read through `first`, `firstValue` and `forEach` instead.
public struct HeaderList: Sendable {
    /// Every name and value's UTF-8, in order.
    @usableFromInline var bytes: [UInt8]
    /// For field k: where its name ends (2k) and where its value ends (2k + 1), in `bytes`.
    /// Its name starts where the field before it ends.
    @usableFromInline var ends: [UInt32]

    public init() {
        bytes = []
        ends = []
    }

    public init<S: Sequence>(_ fields: S) where S.Element == HeaderField {
        self.init()
        for field in fields { append(field) }
    }

    /// Room for `fields` fields of `bytes` bytes in all, so that a list filled from a
    /// parsed head is allocated once.
    public mutating func reserveCapacity(fields: Int, bytes byteCount: Int) {
        bytes.reserveCapacity(byteCount)
        ends.reserveCapacity(2 * fields)
    }

    /// Appends a field from its bytes, which must be UTF-8 (the parser makes them so).
    @inlinable
    public mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        bytes.append(contentsOf: name)
        ends.append(UInt32(truncatingIfNeeded: bytes.count))
        bytes.append(contentsOf: value)
        ends.append(UInt32(truncatingIfNeeded: bytes.count))
    }

    public mutating func append(_ field: HeaderField) {
        var (name, value) = (field.name, field.value)
        name.withUTF8 { n in value.withUTF8 { v in append(name: n, value: v) } }
    }

    /// Adds `separator` and `more` to the last field's value (an obs-fold continuation line).
    public mutating func extendLastValue(separator: UInt8?, _ more: UnsafeBufferPointer<UInt8>) {
        guard !ends.isEmpty else { return }
        if let separator { bytes.append(separator) }
        bytes.append(contentsOf: more)
        ends[ends.count - 1] = UInt32(truncatingIfNeeded: bytes.count)
    }

    @inlinable func nameRange(_ k: Int) -> Range<Int> { (k == 0 ? 0 : Int(ends[2 * k - 1]))..<Int(ends[2 * k]) }
    @inlinable func valueRange(_ k: Int) -> Range<Int> { Int(ends[2 * k])..<Int(ends[2 * k + 1]) }

    /// Field `k`'s name and value bytes, read in place.
    @inlinable
    public func withField<R>(_ k: Int, _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try bytes.withUnsafeBufferPointer { b in
            try body(UnsafeBufferPointer(rebasing: b[nameRange(k)]), UnsafeBufferPointer(rebasing: b[valueRange(k)]))
        }
    }

    /// Every field's name and value bytes, in wire order, read in place.
    @inlinable
    public func forEach(_ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try bytes.withUnsafeBufferPointer { b in
            try ends.withUnsafeBufferPointer { e in
                var start = 0
                var k = 0
                while k < e.count {
                    let nameEnd = Int(e[k]), valueEnd = Int(e[k + 1])
                    try body(UnsafeBufferPointer(rebasing: b[start..<nameEnd]), UnsafeBufferPointer(rebasing: b[nameEnd..<valueEnd]))
                    start = valueEnd
                    k += 2
                }
            }
        }
    }

    /// The value bytes of the first field named `name` (ASCII case-insensitively), read in
    /// place by `body`; nil when no field has the name.
    @inlinable
    public func firstValue<R>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        var name = name
        return try name.withUTF8 { wanted in
            try bytes.withUnsafeBufferPointer { b in
                try ends.withUnsafeBufferPointer { e in
                    var start = 0
                    var k = 0
                    while k < e.count {
                        let nameEnd = Int(e[k]), valueEnd = Int(e[k + 1])
                        if nameEnd - start == wanted.count, Self.sameLetters(b, start, wanted) {
                            return try body(UnsafeBufferPointer(rebasing: b[nameEnd..<valueEnd]))
                        }
                        start = valueEnd
                        k += 2
                    }
                    return nil
                }
            }
        }
    }

    /// Calls `body` with the value bytes of every field named `name`, in wire order.
    @inlinable
    public func forEachValue(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        var name = name
        try name.withUTF8 { wanted in
            try forEach { n, v in
                if n.count == wanted.count, Self.sameLetters(n, 0, wanted) { try body(v) }
            }
        }
    }

    /// Whether `b[start...]` begins with `wanted`'s bytes, ASCII letters compared without case.
    @inlinable
    static func sameLetters(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        for k in 0..<wanted.count {
            let x = b[start + k], y = wanted[k]
            if x != y, x | 0x20 != y | 0x20 || (x | 0x20) &- 97 >= 26 { return false }
        }
        return true
    }

    /// The first value of the named header, compared ASCII case-insensitively.
    public func first(_ name: String) -> String? {
        firstValue(name) { String(decoding: $0, as: UTF8.self) }
    }

    /// Every value of the named header, in wire order.
    public func all(_ name: String) -> [String] {
        var values: [String] = []
        forEachValue(name) { values.append(String(decoding: $0, as: UTF8.self)) }
        return values
    }

    public func contains(_ name: String) -> Bool { firstValue(name) { _ in true } ?? false }

    /// The bytes of every name and value, as `forEach` reads them, for writers that copy
    /// them out whole.
    public var byteCount: Int { bytes.count }
}

extension HeaderList: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { ends.count / 2 }
    public var count: Int { ends.count / 2 }
    public var isEmpty: Bool { ends.isEmpty }
    @inlinable public func index(after i: Int) -> Int { i + 1 }
    @inlinable public func index(before i: Int) -> Int { i - 1 }

    /// The field at `k`, made from its bytes; setting one rebuilds the list (edits are
    /// rare: the secrets filter, tests).
    public subscript(k: Int) -> HeaderField {
        get {
            withField(k) { n, v in HeaderField(String(decoding: n, as: UTF8.self), String(decoding: v, as: UTF8.self)) }
        }
        set { replaceSubrange(k..<k + 1, with: CollectionOfOne(newValue)) }
    }

    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C) where C.Element == HeaderField {
        var rebuilt = HeaderList()
        rebuilt.reserveCapacity(fields: count - subrange.count + newElements.count, bytes: bytes.count)
        for k in 0..<subrange.lowerBound { withField(k) { rebuilt.append(name: $0, value: $1) } }
        for field in newElements { rebuilt.append(field) }
        for k in subrange.upperBound..<count { withField(k) { rebuilt.append(name: $0, value: $1) } }
        self = rebuilt
    }

    public mutating func reserveCapacity(_ n: Int) { ends.reserveCapacity(2 * n) }
}

extension HeaderList: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: HeaderField...) { self.init(elements) }
}

extension HeaderList: Hashable {
    /// Two lists are equal when their fields are, in order: the same bytes cut at the same
    /// places.
    public static func == (a: HeaderList, b: HeaderList) -> Bool { a.ends == b.ends && a.bytes == b.bytes }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ends.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        ends.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

extension HeaderList: Codable {
    /// Encoded as the array of fields it holds, as `[HeaderField]` was.
    public init(from decoder: Decoder) throws {
        self.init(try Array<HeaderField>(from: decoder))
    }

    public func encode(to encoder: Encoder) throws {
        let fields: [HeaderField] = Array(self)
        try fields.encode(to: encoder)
    }
}

extension HeaderList: CustomStringConvertible {
    public var description: String { Array(self).description }
}
