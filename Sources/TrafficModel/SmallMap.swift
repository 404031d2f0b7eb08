/// A map that is a short list of pairs while it holds few entries, and a dictionary once
/// it holds more than `listLimit`.
///
/// The emulator keeps several small maps per replay (the rule that kept a cookie out of a
/// jar, a change the jar link held back), and a replay of a usual flow puts a handful of
/// entries in each: comparing a few keys costs less than hashing one String, and a list is one
/// allocation to make and free, where a dictionary is a table that grows and rehashes.
/// A map that outgrows the list keeps a dictionary's cost per lookup, so a flow with
/// thousands of cookies stays linear.
public struct SmallMap<Key: Hashable, Value> {
    @usableFromInline var pairs: [(key: Key, value: Value)] = []
    @usableFromInline var table = [Key: Value]()
    @usableFromInline var usesTable = false

    /// How many entries the list holds before the map becomes a dictionary.
    public static var listLimit: Int { 24 }

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { usesTable ? table.isEmpty : pairs.isEmpty }
    @inlinable public var count: Int { usesTable ? table.count : pairs.count }

    @inlinable public subscript(key: Key) -> Value? {
        get {
            if usesTable { return table[key] }
            for pair in pairs where pair.key == key { return pair.value }
            return nil
        }
        set {
            if usesTable {
                table[key] = newValue
                return
            }
            if let i = pairs.firstIndex(where: { $0.key == key }) {
                if let newValue { pairs[i].value = newValue } else { pairs.remove(at: i) }
            } else if let newValue {
                if pairs.count < Self.listLimit {
                    if pairs.capacity == 0 { pairs.reserveCapacity(4) }
                    pairs.append((key, newValue))
                } else {
                    table = Dictionary(uniqueKeysWithValues: pairs.lazy.map { ($0.key, $0.value) })
                    table[key] = newValue
                    pairs = []
                    usesTable = true
                }
            }
        }
    }
}

extension SmallMap: Sendable where Key: Sendable, Value: Sendable {}
