import Foundation
import Testing
import Findings

/// A finding's expected and actual fields behave as the dictionary they are written as,
/// and keep their names in byte order, the order the store writes them in.
@Suite("Finding fields: a dictionary literal kept in byte order")
struct FindingFieldsTests {
    @Test("read, replaced and removed by name; ordered by bytes, upper case first; later literal keys win")
    func dictionaryBehaviour() {
        var f: FindingFields = ["z": "3", "a": "1", "é": "5", "B": "0", "m": "2"]
        #expect(f.keys == ["B", "a", "m", "z", "é"])
        #expect(f["a"] == "1" && f["missing"] == nil && f.count == 5)
        f["a"] = "one"
        f["m"] = nil
        f["c"] = "new"
        f["gone"] = nil
        #expect(f.keys == ["B", "a", "c", "z", "é"])
        #expect(f["a"] == "one")
        #expect(f == ["é": "5", "c": "new", "z": "3", "a": "one", "B": "0"])
        #expect(f.dictionary == ["é": "5", "c": "new", "z": "3", "a": "one", "B": "0"])
        #expect(FindingFields(["x": "1", "w": "2"]).keys == ["w", "x"])
        let repeated: FindingFields = ["k": "first", "k": "second"]
        #expect(repeated.count == 1 && repeated["k"] == "second")
        #expect(FindingFields().isEmpty && ([:] as FindingFields).isEmpty)
    }

    @Test("encodes as a JSON object and decodes back equal")
    func json() throws {
        let f: FindingFields = ["bodyLength": "12", "bodySHA256": "ab\"c", "url": "https://a.example/?q=1"]
        let data = try JSONEncoder().encode(f)
        #expect(try JSONDecoder().decode([String: String].self, from: data) == f.dictionary)
        #expect(try JSONDecoder().decode(FindingFields.self, from: data) == f)
        #expect(throws: (any Error).self) { try JSONDecoder().decode(FindingFields.self, from: Data(#"{"a":1}"#.utf8)) }
    }
}
