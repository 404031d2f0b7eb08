import Testing
import TrafficModel

/// A header named twice: the classifier and the CORS check read the first field of a
/// name, cookie provenance every Set-Cookie field, in wire order.
@Suite("Header lookup: the first field of a name, or every one, in wire order")
struct HeaderLookupTests {
    static let fields = [
        HeaderField("Origin", "https://first.example"), HeaderField("Set-Cookie", "a=1"), HeaderField("content-type", "text/plain"),
        HeaderField("ORIGIN", "https://second.example"), HeaderField("set-cookie", "b=2"), HeaderField("Set-Cookie", "c=3"),
    ]

    @Test("first gives the first field of the name in any case, nil when none has it")
    func first() {
        #expect(Self.fields.first("origin") == "https://first.example")
        #expect(Self.fields.first("Content-Type") == "text/plain")
        #expect(Self.fields.first("Referer") == nil)
        #expect(Self.fields.contains("SET-COOKIE") && !Self.fields.contains("Cookie"))
        #expect([HeaderField]().first("Origin") == nil)
    }

    @Test("all gives every field of the name in wire order")
    func all() {
        #expect(Self.fields.all("Set-Cookie") == ["a=1", "b=2", "c=3"])
        #expect(Self.fields.all("origin") == ["https://first.example", "https://second.example"])
        #expect(Self.fields.all("Cookie").isEmpty)
    }
}
