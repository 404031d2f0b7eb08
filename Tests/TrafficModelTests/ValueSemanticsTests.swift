import Foundation
import Testing
import TrafficModel

/// An exchange keeps its fields behind one shared reference; it must still behave as a
/// value: a change to a copy never reaches the original, and it encodes as before.
@Suite("Exchange: a value, however its fields are kept")
struct ExchangeValueSemanticsTests {
    static func sample() -> Exchange {
        Exchange(
            sequence: 3, startedAt: 1_700_000_000, duration: 0.25,
            request: RecordedRequest(method: "POST", url: "https://shop.example/api/order?id=7", headers: [HeaderField("Content-Type", "application/json")], body: Data(#"{"sku":1}"#.utf8)),
            response: RecordedResponse(status: 302, headers: [HeaderField("Location", "/done")]),
            initiator: .xhr, bodyKind: .text)
    }

    @Test("a copy changed in any field leaves the original as it was")
    func copiesAreIndependent() {
        let original = Self.sample()
        var copy = original
        copy.initiator = .fetch
        copy.request.headers.append(HeaderField("X-Trace", "1"))
        copy.response.status = 200
        copy.sequence = 9
        #expect(original.initiator == .xhr)
        #expect(original.request.headers.count == 1)
        #expect(original.response.status == 302)
        #expect(original.sequence == 3)
        #expect(copy != original)
        var same = original
        same.duration = 0.25  // written, not changed
        #expect(same == original)
        #expect(same.hashValue == original.hashValue)
    }

    @Test("it encodes to the same JSON keys and decodes back equal")
    func codableRoundTrip() throws {
        let original = Self.sample()
        let data = try JSONEncoder().encode(original)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys).isSuperset(of: ["sequence", "startedAt", "duration", "request", "response", "initiator", "frame", "bodyKind"]))
        #expect(try JSONDecoder().decode(Exchange.self, from: data) == original)
    }
}

/// A request target keeps its parts in one shared box: two targets parsed apart from the
/// same URL are still equal and hash alike, and a target on another host is another value.
@Suite("RequestTarget: equal by its parts, not by its box")
struct RequestTargetValueTests {
    @Test("targets parsed apart compare and hash by their parts")
    func equalByParts() throws {
        let a = try #require(RequestTarget("https://Shop.Example/api?x=1"))
        let b = try #require(RequestTarget("https://shop.example:443/api?x=1"))
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
        let moved = a.with(host: "203.0.113.7")
        #expect(moved != a && moved.host == "203.0.113.7" && moved.path == "/api" && moved.query == "x=1")
        #expect(a.host == "shop.example")
        #expect(RequestTarget("https://shop.example/api") != a)
    }
}

@Suite("Byte search in header values and sentences")
struct ContainsBytesTests {
    @Test("finds a needle anywhere, not past the end, and an empty one always", arguments: [
        ("application/json; charset=utf-8", "json", true),
        ("application/vnd.api+json", "json", true),
        ("json", "json", true),
        ("jso", "json", false),
        ("text/plain", "json", false),
        ("", "json", false),
        ("anything", "", true),
        ("The XHR POST /a: why", ": ", true),
        ("The XHR POST /a:why", ": ", false),
        ("jjson", "json", true),
        ("héllo wörld", "wö", true),
    ])
    func search(haystack: String, needle: String, found: Bool) {
        #expect(haystack.containsBytes(needle) == found)
        #expect(haystack[...].containsBytes(needle) == found)
    }

    @Test("whether JSON text needs an escape, sixteen and eight bytes at a time, agrees with a byte-by-byte test wherever the byte stands and whatever surrounds it")
    func jsonEscape() {
        let fillers: [UInt8] = [0x61, 0x7F, 0x80, 0xC3, 0xFF, 0x20, 0x21, 0x23, 0x5B, 0x5D]
        for special in [0x00, 0x09, 0x0A, 0x1F, 0x22, 0x5C] as [UInt8] {
            for length in 0...40 {
                for filler in fillers {
                    for at in -1..<length {
                        var bytes = [UInt8](repeating: filler, count: length)
                        if at >= 0 { bytes[at] = special }
                        let expected = bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
                        bytes.withUnsafeBufferPointer { #expect($0.needsJSONEscape == expected, "\(bytes)") }
                    }
                }
            }
        }
    }

    @Test("byte prefixes and suffixes: octets, not characters", arguments: [
        ("/a/b", "/a", true, false),
        ("/a", "/a", true, true),
        ("/a", "/a/b", false, false),
        ("x", "", true, true),
        ("", "", true, true),
        ("shop.example.com", "example.com", false, true),
        ("e\u{301}", "e", true, false),  // a combining accent: the bytes begin with "e"
        ("caf\u{E9}", "\u{E9}", false, true),
    ])
    func prefixAndSuffix(string: String, part: String, prefix: Bool, suffix: Bool) {
        #expect(string.hasBytePrefix(part) == prefix)
        #expect(string.hasByteSuffix(part) == suffix)
    }

    @Test("a SmallMap past its list keeps every entry, replaces and removes as a dictionary does")
    func smallMapOutgrowsItsList() {
        var map = SmallMap<String, Int>()
        var reference: [String: Int] = [:]
        for i in 0..<60 {
            map["k\(i % 40)"] = i
            reference["k\(i % 40)"] = i
            if i % 7 == 0 {
                map["k\(i / 2)"] = nil
                reference["k\(i / 2)"] = nil
            }
            #expect(map.count == reference.count)
        }
        for key in reference.keys { #expect(map[key] == reference[key]) }
        #expect(map["absent"] == nil)
        for i in 0..<40 where reference["k\(i)"] == nil { #expect(map["k\(i)"] == nil) }
    }
}
