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

/// Media types and methods are matched without case, as bytes: what lowercasing the
/// Unicode text and `hasPrefix` said for the ASCII they are written in.
@Suite("A prefix compared without ASCII case")
struct CaseInsensitivePrefixTests {
    @Test("agrees with lowercased() and hasPrefix on ASCII, any case, any length", arguments: [
        ("image/png", "image/"), ("Image/PNG", "image/"), ("IMAGE/", "image/"), ("imag", "image/"), ("", ""), ("video/mp4", ""),
        ("application/octet-stream; x=1", "application/octet-stream"), ("application/octets", "application/octet-stream"),
        ("text/plain", "image/"), ("font/woff2", "FONT/"), ("get", "GET"), ("GeT", "get"), ("GETS", "GET"), ("GE", "GET"),
    ])
    func agreesOnASCII(_ text: String, _ prefix: String) {
        #expect(text.hasCaseInsensitivePrefix(prefix) == text.lowercased().hasPrefix(prefix.lowercased()), "\(text) / \(prefix)")
    }

    @Test("letters beyond ASCII are compared as their bytes, never folded")
    func beyondASCII() {
        #expect("ÉTÉ/x".hasCaseInsensitivePrefix("ÉTÉ/"))
        #expect(!"ÉTÉ/x".hasCaseInsensitivePrefix("été/"))
        #expect("Straße-1".hasCaseInsensitivePrefix("STRAßE"))
    }
}
