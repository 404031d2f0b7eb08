/// Which of a list's elements are marked: bits for the first 64 (a request's cookies fit),
/// a set beyond.
public struct IndexMarks: Sendable {
    @usableFromInline var bits: UInt64 = 0
    @usableFromInline var beyond: Set<Int> = []
    @usableFromInline var marked = 0
    /// How many are marked.
    @inlinable public var count: Int { marked }

    @inlinable public init() {}

    @inlinable public subscript(i: Int) -> Bool { i < 64 ? bits & (1 << UInt64(i)) != 0 : beyond.contains(i) }

    @inlinable public mutating func mark(_ i: Int) {
        guard !self[i] else { return }
        if i < 64 { bits |= 1 << UInt64(i) } else { beyond.insert(i) }
        marked += 1
    }
}
