import Foundation
import Testing
import TrafficModel

/// A header named twice: the classifier and the CORS check read the first field of a
/// name, cookie provenance every Set-Cookie field, in wire order.
@Suite("Header lookup: the first field of a name, or every one, in wire order")
struct HeaderLookupTests {
    static let fields: HeaderList = [
        HeaderField("Origin", "https://first.example"), HeaderField("Set-Cookie", "a=1"), HeaderField("content-type", "text/plain"),
        HeaderField("ORIGIN", "https://second.example"), HeaderField("set-cookie", "b=2"), HeaderField("Set-Cookie", "c=3"),
    ]

    @Test("first gives the first field of the name in any case, nil when none has it")
    func first() {
        #expect(Self.fields.first("origin") == "https://first.example")
        #expect(Self.fields.first("Content-Type") == "text/plain")
        #expect(Self.fields.first("Referer") == nil)
        #expect(Self.fields.contains("SET-COOKIE") && !Self.fields.contains("Cookie"))
        #expect(HeaderList().first("Origin") == nil)
    }

    @Test("all gives every field of the name in wire order")
    func all() {
        #expect(Self.fields.all("Set-Cookie") == ["a=1", "b=2", "c=3"])
        #expect(Self.fields.all("origin") == ["https://first.example", "https://second.example"])
        #expect(Self.fields.all("Cookie").isEmpty)
    }

    @Test("names compare without ASCII case only: letters beyond ASCII, and bytes that differ by 0x20 but are not letters, do not match")
    func caseOnlyForASCIILetters() {
        let fields: HeaderList = [HeaderField("X-Été", "1"), HeaderField("A[b", "2"), HeaderField("X-Ok", "3")]
        #expect(fields.first("x-été") == nil && fields.first("X-Été") == "1")
        #expect(fields.first("A{b") == nil && fields.first("a[B") == "2")
        #expect(fields.first("x-ok") == "3" && fields.first("x-o") == nil && fields.first("x-okk") == nil)
    }
}

/// An exchange's fields are one list of bytes with offsets; edits rebuild it. Read one
/// field at a time it must be the array of fields it was made from.
@Suite("Header lists: read, edited and encoded as the array of fields they hold")
struct HeaderListTests {
    static let fields = [
        HeaderField("Host", "shop.example"), HeaderField("Cookie", "sid=1; théme=é"), HeaderField("X-Empty", ""),
        HeaderField("", "a value without a name"), HeaderField("Accept", "*/*"),
    ]

    @Test("a list made from fields reads them back in order, by index, by name and in place")
    func readsBack() {
        let list = HeaderList(Self.fields)
        #expect(Array(list) == Self.fields)
        #expect(list.count == 5 && list[1] == Self.fields[1] && list.last == Self.fields[4])
        #expect(list.first("x-empty") == "" && list.first("") == "a value without a name")
        var pairs: [String] = []
        list.forEach { name, value in pairs.append(String(decoding: name, as: UTF8.self) + "=" + String(decoding: value, as: UTF8.self)) }
        #expect(pairs == Self.fields.map { $0.name + "=" + $0.value })
        #expect(list.firstValue("COOKIE") { $0.count } == "sid=1; théme=é".utf8.count)
    }

    @Test("edits (set, insert, remove, replace, append) give the list the same edits give an array")
    func edits() {
        var list = HeaderList(Self.fields)
        var array = Self.fields
        list[2] = HeaderField("X-Empty", "no longer")
        array[2] = HeaderField("X-Empty", "no longer")
        list.insert(HeaderField("Origin", "https://shop.example"), at: 0)
        array.insert(HeaderField("Origin", "https://shop.example"), at: 0)
        list.remove(at: 3)
        array.remove(at: 3)
        list.replaceSubrange(1..<3, with: [HeaderField("A", "1")])
        array.replaceSubrange(1..<3, with: [HeaderField("A", "1")])
        list.append(HeaderField("Z", "26"))
        array.append(HeaderField("Z", "26"))
        list.removeAll { $0.name == "Accept" }
        array.removeAll { $0.name == "Accept" }
        #expect(Array(list) == array)
        #expect(list == HeaderList(array) && list.hashValue == HeaderList(array).hashValue)
    }

    @Test("lists are equal when their fields are: the same bytes cut elsewhere are a different list")
    func equality() {
        let ab: HeaderList = [HeaderField("ab", "c")]
        let a: HeaderList = [HeaderField("a", "bc")]
        #expect(ab != a)
        #expect(HeaderList([HeaderField("a", "b"), HeaderField("c", "d")]) != [HeaderField("a", "bc"), HeaderField("", "d")])
        #expect(HeaderList(Self.fields) == HeaderList(Self.fields))
    }

    @Test("a list encodes as the array of its fields, and decodes from one")
    func codable() throws {
        let list = HeaderList(Self.fields)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let encoded = try encoder.encode(list)
        #expect(encoded == (try encoder.encode(Self.fields)))
        #expect(try JSONDecoder().decode(HeaderList.self, from: encoded) == list)
    }

    @Test("a copy is its own list once either changes; a list grows past any room it was given")
    func copiesAndGrowth() {
        var list = HeaderList()
        list.reserveCapacity(fields: 2, bytes: 8)
        var expected: [HeaderField] = []
        // Past the room for fields and for bytes, many times over, with empty names and values.
        for k in 0..<300 {
            let field = HeaderField(k % 7 == 0 ? "" : "X-\(k)", String(repeating: "v", count: k % 50))
            list.append(field)
            expected.append(field)
        }
        #expect(Array(list) == expected)
        let before = list
        var copy = list
        copy.append(HeaderField("After", "copy"))
        copy[0] = HeaderField("Changed", "0")
        #expect(Array(before) == expected && Array(list) == expected)
        #expect(copy.count == 301 && copy[0] == HeaderField("Changed", "0") && copy.last == HeaderField("After", "copy"))
        #expect(Array(copy[1..<300]) == Array(expected[1...]))
        #expect(HeaderList().isEmpty && HeaderList() == [] && HeaderList().first("X") == nil)
    }

    @Test("a folded value grows the last field only")
    func extendLast() {
        var list: HeaderList = [HeaderField("A", "1"), HeaderField("B", "two")]
        Array("more".utf8).withUnsafeBufferPointer { list.extendLastValue(separator: 0x20, $0) }
        Array("!".utf8).withUnsafeBufferPointer { list.extendLastValue(separator: nil, $0) }
        #expect(Array(list) == [HeaderField("A", "1"), HeaderField("B", "two more!")])
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
