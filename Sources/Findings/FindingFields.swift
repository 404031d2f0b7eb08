import Foundation

/// A finding's expected or actual side: a few named strings (`bodyLength`, `cookie`,
/// `url`), kept in the byte order of their names.
///
/// Written as a dictionary literal and read by name like one, but stored as a short
/// ordered list: a finding holds two to five fields, and hashing each name into a
/// dictionary cost more than the rest of building the finding. The order is the one the
/// store writes its JSON in, so writing needs no sort.
public struct FindingFields: Sendable, Hashable, Codable, ExpressibleByDictionaryLiteral, Sequence {
    public struct Field: Sendable, Hashable {
        public var key: String
        public var value: String
    }

    /// The fields, in byte order of their names, each name once.
    public private(set) var fields: [Field] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        fields.reserveCapacity(elements.count)
        for (key, value) in elements { self[key] = value }
    }

    public init(_ dictionary: [String: String]) {
        fields.reserveCapacity(dictionary.count)
        for (key, value) in dictionary { self[key] = value }
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }
    public var keys: [String] { fields.map(\.key) }
    public var dictionary: [String: String] { Dictionary(uniqueKeysWithValues: fields.map { ($0.key, $0.value) }) }

    public subscript(key: String) -> String? {
        get { fields.first { $0.key == key }?.value }
        set {
            if let i = fields.firstIndex(where: { $0.key == key }) {
                if let newValue { fields[i].value = newValue } else { fields.remove(at: i) }
                return
            }
            guard let newValue else { return }
            // A handful of names: a new one moves back to its place from the end.
            fields.append(Field(key: key, value: newValue))
            var j = fields.count - 1
            while j > 0, Self.precedes(fields[j].key, fields[j - 1].key) {
                fields.swapAt(j, j - 1)
                j -= 1
            }
        }
    }

    public func makeIterator() -> some IteratorProtocol<(key: String, value: String)> {
        fields.lazy.map { (key: $0.key, value: $0.value) }.makeIterator()
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
        for field in fields { try container.encode(field.value, forKey: Name(stringValue: field.key)) }
    }
}
