#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A message's header fields in wire order, held as the UTF-8 of every name and value back
/// to back in one buffer, after the offsets where each ends.
///
/// An exchange's fields are read many times and changed almost never, and most of them
/// are the same across a capture (User-Agent, Accept, Server). Held as strings, each
/// field is two reference-counted objects, shared between exchanges: every copy of a list,
/// every value looked up and every list freed counted each string up or down, on
/// whichever core did it, and this was the largest cost of reading a capture after its
/// SHA-256. As bytes, a list is one object however many fields it has (none when it is
/// empty), a lookup compares bytes in place, and the store writes the bytes out as they are.
///
/// It is a collection of `HeaderField`s, so code that reads or edits fields one by one
/// (reports, exports, the secrets filter) works as on an array; the element is made on
/// each access. Hot paths read through `first`, `firstValue` and `forEach` instead.
public struct HeaderList: @unchecked Sendable {
    /// The buffer: for field k, where its name ends (UInt32 2k) and where its value ends
    /// (2k + 1), counted in bytes from the start of the text; then the text. A field's name
    /// starts where the field before it ends. Shared between copies until one changes it.
    @usableFromInline final class Buffer: ManagedBuffer<Buffer.Counts, UInt8> {
        @usableFromInline struct Counts {
            @usableFromInline var fields = 0, bytes = 0, fieldCapacity = 0, byteCapacity = 0
        }
    }

    /// Nil for a list with no field: most messages' trailers, a new list.
    @usableFromInline var buffer: Buffer?

    /// What a reader of the list sees: the offsets and the text, valid while the list is.
    @usableFromInline struct Contents {
        @usableFromInline let ends: UnsafeRawPointer?
        @usableFromInline let text: UnsafeBufferPointer<UInt8>
        @usableFromInline let count: Int

        @inlinable init(ends: UnsafeRawPointer?, text: UnsafeBufferPointer<UInt8>, count: Int) {
            self.ends = ends
            self.text = text
            self.count = count
        }

        @inlinable func end(_ i: Int) -> Int { Int(ends!.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
        @inlinable func name(_ k: Int) -> UnsafeBufferPointer<UInt8> { slice((k == 0 ? 0 : end(2 * k - 1))..<end(2 * k)) }
        @inlinable func value(_ k: Int) -> UnsafeBufferPointer<UInt8> { slice(end(2 * k)..<end(2 * k + 1)) }
        @inlinable func slice(_ r: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: text.baseAddress.map { $0 + r.lowerBound }, count: r.count) }
    }

    @inlinable
    func withContents<R>(_ body: (Contents) throws -> R) rethrows -> R {
        guard let buffer else { return try body(Contents(ends: nil, text: UnsafeBufferPointer(start: nil, count: 0), count: 0)) }
        return try buffer.withUnsafeMutablePointers { counts, elements in
            let c = counts.pointee
            return try body(Contents(ends: UnsafeRawPointer(elements), text: UnsafeBufferPointer(start: elements + 8 * c.fieldCapacity, count: c.bytes), count: c.fields))
        }
    }

    public init() {}

    public init<S: Sequence>(_ fields: S) where S.Element == HeaderField {
        self.init()
        for field in fields { append(field) }
    }

    /// Room for `fields` fields of `bytes` bytes in all, so that a list filled from a
    /// parsed head is allocated once.
    public mutating func reserveCapacity(fields: Int, bytes byteCount: Int) {
        let counts = buffer.map { b in b.withUnsafeMutablePointerToHeader { $0.pointee } } ?? Buffer.Counts()
        guard fields > counts.fieldCapacity || byteCount > counts.byteCapacity else { return }
        grow(fields: Swift.max(fields, counts.fieldCapacity), bytes: Swift.max(byteCount, counts.byteCapacity))
    }

    /// A new buffer of at least these capacities holding this list's fields.
    @usableFromInline mutating func grow(fields: Int, bytes byteCount: Int) {
        let made = Buffer.create(minimumCapacity: 8 * fields + byteCount) { _ in Buffer.Counts() }
        let grown = unsafeDowncast(made, to: Buffer.self)
        withContents { old in
            grown.withUnsafeMutablePointers { counts, elements in
                // The allocation may be larger than asked: the text takes the rest.
                counts.pointee = Buffer.Counts(fields: old.count, bytes: old.text.count, fieldCapacity: fields, byteCapacity: grown.capacity - 8 * fields)
                if let ends = old.ends { UnsafeMutableRawPointer(elements).copyMemory(from: ends, byteCount: 8 * old.count) }
                if let text = old.text.baseAddress { (elements + 8 * fields).update(from: text, count: old.text.count) }
            }
        }
        buffer = grown
    }

    /// Appends a field from its bytes, which must be UTF-8 (the parser makes them so) and
    /// not this list's own (a growth frees them).
    public mutating func append(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let added = name.count + value.count
        var counts = buffer.map { b in b.withUnsafeMutablePointerToHeader { $0.pointee } } ?? Buffer.Counts()
        if counts.fields == counts.fieldCapacity || counts.bytes + added > counts.byteCapacity || !isKnownUniquelyReferenced(&buffer) {
            grow(fields: counts.fields == counts.fieldCapacity ? Swift.max(8, 2 * counts.fieldCapacity) : counts.fieldCapacity,
                 bytes: counts.bytes + added > counts.byteCapacity ? Swift.max(counts.bytes + added, 2 * counts.byteCapacity, 256) : counts.byteCapacity)
            counts = buffer!.withUnsafeMutablePointerToHeader { $0.pointee }
        }
        buffer!.withUnsafeMutablePointers { header, elements in
            let text = elements + 8 * counts.fieldCapacity + counts.bytes
            if let n = name.baseAddress { text.update(from: n, count: name.count) }
            if let v = value.baseAddress { (text + name.count).update(from: v, count: value.count) }
            let ends = UnsafeMutableRawPointer(elements) + 8 * counts.fields
            ends.storeBytes(of: UInt32(truncatingIfNeeded: counts.bytes + name.count), as: UInt32.self)
            (ends + 4).storeBytes(of: UInt32(truncatingIfNeeded: counts.bytes + added), as: UInt32.self)
            header.pointee.fields = counts.fields + 1
            header.pointee.bytes = counts.bytes + added
        }
    }

    public mutating func append(_ field: HeaderField) {
        var (name, value) = (field.name, field.value)
        name.withUTF8 { n in value.withUTF8 { v in append(name: n, value: v) } }
    }

    /// Adds `separator` and `more` to the last field's value (an obs-fold continuation line).
    public mutating func extendLastValue(separator: UInt8?, _ more: UnsafeBufferPointer<UInt8>) {
        guard !isEmpty else { return }
        var last = self[count - 1]
        var added = separator.map { [$0] } ?? []
        added.append(contentsOf: more)
        last.value += String(decoding: added, as: UTF8.self)
        self[count - 1] = last
    }

    /// Field `k`'s name and value bytes, read in place.
    @inlinable
    public func withField<R>(_ k: Int, _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withContents { try body($0.name(k), $0.value(k)) }
    }

    /// Every field's name and value bytes, in wire order, read in place.
    @inlinable
    public func forEach(_ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try withContents { c in
            var start = 0
            for k in 0..<c.count {
                let nameEnd = c.end(2 * k), valueEnd = c.end(2 * k + 1)
                try body(c.slice(start..<nameEnd), c.slice(nameEnd..<valueEnd))
                start = valueEnd
            }
        }
    }

    /// The value bytes of the first field named `name` (ASCII case-insensitively), read in
    /// place by `body`; nil when no field has the name.
    @inlinable
    public func firstValue<R>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        guard buffer != nil else { return nil }
        var name = name
        return try name.withUTF8 { wanted in
            try withContents { c in
                var start = 0
                for k in 0..<c.count {
                    let nameEnd = c.end(2 * k), valueEnd = c.end(2 * k + 1)
                    if nameEnd - start == wanted.count, String.caseInsensitiveEqual(c.slice(start..<nameEnd), wanted) {
                        return try body(c.slice(nameEnd..<valueEnd))
                    }
                    start = valueEnd
                }
                return nil
            }
        }
    }

    /// Calls `body` with the value bytes of every field named `name`, in wire order.
    @inlinable
    public func forEachValue(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        var name = name
        try name.withUTF8 { wanted in
            try forEach { n, v in
                if n.count == wanted.count, String.caseInsensitiveEqual(n, wanted) { try body(v) }
            }
        }
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

    /// The bytes of every name and value, as `forEach` reads them.
    public var byteCount: Int { buffer.map { b in b.withUnsafeMutablePointerToHeader { $0.pointee.bytes } } ?? 0 }
}

extension HeaderList: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public var count: Int { buffer.map { b in b.withUnsafeMutablePointerToHeader { $0.pointee.fields } } ?? 0 }
    public var isEmpty: Bool { count == 0 }
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
        rebuilt.reserveCapacity(fields: count - subrange.count + newElements.count, bytes: byteCount)
        for k in 0..<subrange.lowerBound { withField(k) { rebuilt.append(name: $0, value: $1) } }
        for field in newElements { rebuilt.append(field) }
        for k in subrange.upperBound..<count { withField(k) { rebuilt.append(name: $0, value: $1) } }
        self = rebuilt
    }

    public mutating func reserveCapacity(_ n: Int) { reserveCapacity(fields: n, bytes: byteCount) }
}

extension HeaderList: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: HeaderField...) { self.init(elements) }
}

extension HeaderList: Hashable {
    /// Two lists are equal when their fields are, in order: the same bytes cut at the same
    /// places.
    public static func == (a: HeaderList, b: HeaderList) -> Bool {
        a.withContents { x in
            b.withContents { y in
                x.count == y.count && x.text.count == y.text.count && (x.count == 0 || memcmp(x.ends!, y.ends!, 8 * x.count) == 0)
                    && (x.text.isEmpty || memcmp(x.text.baseAddress!, y.text.baseAddress!, x.text.count) == 0)
            }
        }
    }

    public func hash(into hasher: inout Hasher) {
        withContents { c in
            hasher.combine(c.count)
            if let ends = c.ends { hasher.combine(bytes: UnsafeRawBufferPointer(start: ends, count: 8 * c.count)) }
            hasher.combine(bytes: UnsafeRawBufferPointer(c.text))
        }
    }
}

extension HeaderList: Codable {
    /// Encoded as the array of fields it holds, as `[HeaderField]` was.
    public init(from decoder: Decoder) throws {
        // swift-format-ignore: UseShorthandTypeNames
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
