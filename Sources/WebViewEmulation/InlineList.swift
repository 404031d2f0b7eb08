/// A list whose first two elements sit in the value itself, the rest in an array.
///
/// An outcome's changes are one or two in most replays. Kept in an array, each
/// outcome's list was an allocation of its own, made while the outcome was built and
/// freed with it; a list of two or fewer allocates nothing here.
@frozen public struct InlineList<Element>: RandomAccessCollection, MutableCollection, RangeReplaceableCollection, ExpressibleByArrayLiteral {
    @usableFromInline var first0: Element?
    @usableFromInline var first1: Element?
    /// Every element after the second; nil while there is none.
    @usableFromInline var rest: [Element]?

    @inlinable public init() {}

    @inlinable public init(arrayLiteral elements: Element...) {
        self.init()
        append(contentsOf: elements)
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { first0 == nil ? 0 : first1 == nil ? 1 : 2 + (rest?.count ?? 0) }
    @inlinable public var isEmpty: Bool { first0 == nil }

    @inlinable public subscript(position: Int) -> Element {
        get {
            switch position {
            case 0: return first0!
            case 1: return first1!
            default: return rest![position - 2]
            }
        }
        set {
            precondition(position >= 0 && position < endIndex, "InlineList index out of range")
            switch position {
            case 0: first0 = newValue
            case 1: first1 = newValue
            default: rest![position - 2] = newValue
            }
        }
    }

    @inlinable public mutating func append(_ element: consuming Element) {
        if first0 == nil {
            first0 = element
        } else if first1 == nil {
            first1 = element
        } else if rest == nil {
            var more: [Element] = []
            more.reserveCapacity(4)
            more.append(element)
            rest = more
        } else {
            rest!.append(element)
        }
    }

    @inlinable public mutating func append<S: Sequence>(contentsOf elements: S) where S.Element == Element {
        for element in elements { append(element) }
    }

    /// Anything but appending (rare): the list rebuilt from an array.
    @inlinable public mutating func replaceSubrange<C: Collection>(_ range: Range<Int>, with elements: C) where C.Element == Element {
        var all = Array(self)
        all.replaceSubrange(range, with: elements)
        self = InlineList()
        append(contentsOf: all)
    }
}

extension InlineList: Sendable where Element: Sendable {}

extension InlineList: Equatable where Element: Equatable {
    @inlinable public static func == (a: InlineList, b: InlineList) -> Bool { a.elementsEqual(b) }
}

extension InlineList: Hashable where Element: Hashable {
    @inlinable public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for element in self { hasher.combine(element) }
    }
}

/// An outcome's changes, in the order the emulator made them.
public typealias ChangeList = InlineList<Change>
