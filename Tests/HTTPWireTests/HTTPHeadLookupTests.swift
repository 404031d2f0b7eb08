import HTTPWire
import TrafficModel
import Testing

/// A wire head's fields by name: the first one, or every one joined as RFC 9110 section
/// 5.3 reads a repeated field (Content-Encoding sent twice is one list of codings).
@Suite("HTTPHead: a field by name, the first or all of them joined")
struct HTTPHeadLookupTests {
    static func head() -> HTTPHead {
        var head = HTTPHead()
        head.headers = [
            HeaderField("Content-Encoding", "gzip"), HeaderField("Host", "a.example"),
            HeaderField("content-encoding", "br"), HeaderField("HOST", "b.example"),
        ]
        return head
    }

    @Test("first gives the first field of the name in any case")
    func first() {
        #expect(Self.head().first("host") == "a.example")
        #expect(Self.head().first("Transfer-Encoding") == nil)
    }

    @Test("combined joins every field of the name in wire order, the value alone when one has it")
    func combined() {
        #expect(Self.head().combined("Content-Encoding") == "gzip, br")
        var one = HTTPHead()
        one.headers = [HeaderField("Content-Encoding", "deflate")]
        #expect(one.combined("content-encoding") == "deflate")
        #expect(one.combined("Host") == "")
    }
}
