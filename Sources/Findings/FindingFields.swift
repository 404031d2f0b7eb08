import Foundation

/// A finding's expected or actual side: a few named strings (`bodyLength`, `cookie`,
/// `url`), kept in the byte order of their names.
///
/// Written as a dictionary literal and read by name like one, but stored as a short
/// ordered list: a finding holds two to five fields, and hashing each name into a
/// dictionary cost more than the rest of building the finding. The order is the one the
/// store writes its JSON in, so writing needs no sort.
public struct FindingFields: Sendable, Hashable, Codable, ExpressibleByDictionaryLiteral, Sequence {
    /// The fields as (name, value), in byte order of their names, each name once: the
    /// list a dictionary literal arrives in, kept as it is when already in order.
    @usableFromInline var pairs: [(String, String)] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        pairs = elements
        // Literals are mostly written in order; any other is sorted in place, and of two
        // equal names the later is kept, as assignment would keep it.
        var i = 1
        while i < pairs.count {
            // Move the pair back past every name it precedes.
            var j = i
            while j > 0, Self.precedes(pairs[j].0, pairs[j - 1].0) {
                pairs.swapAt(j, j - 1)
                j -= 1
            }
            // A name given twice: the later value replaces the earlier.
            if j > 0, pairs[j - 1].0 == pairs[j].0 { pairs.remove(at: j - 1) } else { i += 1 }
        }
    }

    public init(_ dictionary: [String: String]) {
        pairs.reserveCapacity(dictionary.count)
        for (key, value) in dictionary { self[key] = value }
    }

    public var count: Int { pairs.count }
    public var isEmpty: Bool { pairs.isEmpty }
    public var keys: [String] { pairs.map(\.0) }
    public var dictionary: [String: String] { Dictionary(uniqueKeysWithValues: pairs) }

    public subscript(key: String) -> String? {
        get { pairs.first { $0.0 == key }?.1 }
        set {
            if let i = pairs.firstIndex(where: { $0.0 == key }) {
                if let newValue { pairs[i].1 = newValue } else { pairs.remove(at: i) }
                return
            }
            guard let newValue else { return }
            // A handful of names: a new one moves back to its place from the end.
            pairs.append((key, newValue))
            var j = pairs.count - 1
            while j > 0, Self.precedes(pairs[j].0, pairs[j - 1].0) {
                pairs.swapAt(j, j - 1)
                j -= 1
            }
        }
    }

    public static func == (a: FindingFields, b: FindingFields) -> Bool {
        a.pairs.count == b.pairs.count && zip(a.pairs, b.pairs).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(pairs.count)
        for (key, value) in pairs {
            hasher.combine(key)
            hasher.combine(value)
        }
    }

    /// Visits each field in name order, reading the list in place.
    @inlinable public func forEachField(_ visit: (_ key: String, _ value: String) -> Void) {
        for i in pairs.indices { visit(pairs[i].0, pairs[i].1) }
    }

    public func makeIterator() -> some IteratorProtocol<(key: String, value: String)> {
        pairs.lazy.map { (key: $0.0, value: $0.1) }.makeIterator()
    }

    /// Byte order of the UTF-8, as the store's JSON and SQLite's BINARY collation order.
    static func precedes(_ a: String, _ b: String) -> Bool {
        var (a, b) = (a, b)
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = Swift.min(x.count, y.count)
                let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
                return order != 0 ? order < 0 : x.count < y.count
            }
        }
    }

    // A JSON object, as `[String: String]` encodes.
    struct Name: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Name.self)
        for key in container.allKeys { self[key.stringValue] = try container.decode(String.self, forKey: key) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Name.self)
        for (key, value) in pairs { try container.encode(value, forKey: Name(stringValue: key)) }
    }
}
