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
            var index = fields.startIndex
            while index < fields.endIndex, Self.precedes(fields[index].key, key) { index += 1 }
            let present = index < fields.endIndex && fields[index].key == key
            switch (present, newValue) {
            case (true, let value?): fields[index].value = value
            case (true, nil): fields.remove(at: index)
            case (false, let value?): fields.insert(Field(key: key, value: value), at: index)
            case (false, nil): break
            }
        }
    }

    public func makeIterator() -> some IteratorProtocol<(key: String, value: String)> {
        fields.lazy.map { (key: $0.key, value: $0.value) }.makeIterator()
    }

    /// Byte order of the UTF-8, as the store's JSON and SQLite's BINARY collation order.
    static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
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
