import CZlib
import Foundation
import Testing
@testable import HTTPWire
import TrafficModel

/// The HTTP/1.1 cases a capture meets (docs/design.md, "Capture import and live capture"), each fed whole and in every
/// two-piece split, since TCP may cut a stream anywhere.
@Suite("HTTP/1.1 parsing of captured streams")
struct HTTPParserTests {
    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// Runs a connection over the client and server bytes, split at `split` in each.
    static func exchanges(client: String, server: String, split: Int? = nil, finish: Bool = true) -> [HTTPConnection.Exchange] {
        var c = HTTPConnection()
        let cb = bytes(client)
        let sb = bytes(server)
        let cs = min(split ?? cb.count, cb.count)
        let ss = min(split ?? sb.count, sb.count)
        Array(cb[..<cs]).withUnsafeBytes { c.clientData($0, time: 1) }
        Array(cb[cs...]).withUnsafeBytes { c.clientData($0, time: 1.1) }
        Array(sb[..<ss]).withUnsafeBytes { c.serverData($0, time: 2) }
        Array(sb[ss...]).withUnsafeBytes { c.serverData($0, time: 2.1) }
        if finish { c.finish(time: 3) }
        return c.completed
    }

    /// The same result for every split point.
    static func everySplit(client: String, server: String, _ check: ([HTTPConnection.Exchange]) -> Void) {
        let longest = max(client.utf8.count, server.utf8.count)
        for split in 0...longest { check(exchanges(client: client, server: server, split: split)) }
    }

    static func body(_ m: HTTPMessage?) -> String { String(decoding: m?.body ?? Data(), as: UTF8.self) }

    @Test("keep-alive and pipelining pair each response with its request, in order")
    func pipelining() {
        let client = "GET /a HTTP/1.1\r\nHost: h5.example\r\n\r\nPOST /b HTTP/1.1\r\nHost: h5.example\r\nContent-Length: 5\r\n\r\nhelloGET /c HTTP/1.1\r\nHost: h5.example\r\n\r\n"
        let server = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nAHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nBBHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
        Self.everySplit(client: client, server: server) { exchanges in
            #expect(exchanges.map { $0.request?.head.target } == ["/a", "/b", "/c"])
            #expect(exchanges.map { $0.response?.head.status } == [200, 201, 404])
            #expect(exchanges.map { Self.body($0.response) } == ["A", "BB", ""])
            #expect(Self.body(exchanges[1].request) == "hello")
        }
    }

    @Test("start-line words: the usual ones and their near misses read exactly as sent")
    func startLineWords() {
        // The usual methods, versions and reason come from literals; every near miss (a
        // letter's case, a digit, a byte more or less) must still read as its own bytes.
        let methods = ["GET", "POST", "get", "GEt", "GETS", "GE", "POS", "PUT", "post"]
        let versions = ["HTTP/1.1", "HTTP/1.0", "HTTP/1.2", "HTTP/2.0", "http/1.1"]
        let reasons = ["OK", "Ok", "OKAY", "O", "Not Found", ""]
        for method in methods {
            for version in versions where version.hasPrefix("HTTP/1") {
                let exchanges = Self.exchanges(client: "\(method) /a \(version)\r\nHost: h\r\n\r\n", server: "")
                #expect(exchanges.first?.request?.head.method == method)
                #expect(exchanges.first?.request?.head.version == version)
            }
        }
        for version in versions where version.hasPrefix("HTTP/") {
            for reason in reasons {
                let line = reason.isEmpty ? "\(version) 200" : "\(version) 200 \(reason)"
                let exchanges = Self.exchanges(client: "GET / HTTP/1.1\r\nHost: h\r\n\r\n", server: line + "\r\nContent-Length: 0\r\n\r\n")
                #expect(exchanges.first?.response?.head.version == version, "\(line)")
                #expect(exchanges.first?.response?.head.reason == reason, "\(line)")
            }
        }
        for bytes in ["OK", "GET", "POST", "HTTP/1.1", "HTTP/1.0", "OKAY", "GEX", "POSt", "HTTP/1.9", "H"] {
            let word = Array(bytes.utf8).withUnsafeBufferPointer { HTTPParser.word($0) }
            #expect(word == bytes)
        }
    }

    @Test("chunked bodies with extensions and trailers")
    func chunked() {
        let server = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=\"v\"\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: abc\r\n\r\n"
        Self.everySplit(client: "GET / HTTP/1.1\r\nHost: a\r\n\r\n", server: server) { exchanges in
            #expect(exchanges.count == 1)
            #expect(Self.body(exchanges[0].response) == "hello world")
            #expect(exchanges[0].response?.trailers == [HeaderField("X-Checksum", "abc")])
            #expect(exchanges[0].response?.complete == true)
        }
    }

    @Test("a body read until the connection closes ends at the FIN")
    func untilClose() {
        Self.everySplit(client: "GET / HTTP/1.1\r\nHost: a\r\n\r\n", server: "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it") { exchanges in
            #expect(Self.body(exchanges.first?.response) == "all of it")
            #expect(exchanges.first?.response?.complete == true)
        }
    }

    @Test("HEAD, 204 and 304 have no body even with Content-Length; the next response follows")
    func noBodyResponses() {
        let client = "HEAD /x HTTP/1.1\r\nHost: a\r\n\r\nGET /y HTTP/1.1\r\nHost: a\r\n\r\nGET /z HTTP/1.1\r\nHost: a\r\n\r\nGET /w HTTP/1.1\r\nHost: a\r\n\r\n"
        let server = "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\nHTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        Self.everySplit(client: client, server: server) { exchanges in
            #expect(exchanges.map { $0.response?.head.status } == [200, 204, 304, 200])
            #expect(exchanges.map { Self.body($0.response) } == ["", "", "", "ok"])
        }
    }

    @Test("100 Continue is interim: the upload pairs with the final response")
    func continueInterim() {
        let client = "POST /upload HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\ndata"
        let server = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"
        Self.everySplit(client: client, server: server) { exchanges in
            #expect(exchanges.count == 1)
            #expect(exchanges[0].response?.head.status == 201)
            #expect(exchanges[0].interim == [100])
            #expect(Self.body(exchanges[0].request) == "data")
        }
    }

    @Test("Upgrade and CONNECT end the HTTP stream; the bytes after are not parsed")
    func upgrade() {
        let client = "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\u{81}\u{05}hello"
        let server = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\u{81}\u{02}hi"
        let exchanges = Self.exchanges(client: client, server: server)
        #expect(exchanges.count == 1)
        #expect(exchanges[0].response?.head.status == 101)
        var c = HTTPConnection()
        Self.bytes(client).withUnsafeBytes { c.clientData($0, time: 1) }
        #expect(c.requests.isTunnel)
    }

    @Test("a gap inside a Content-Length body keeps the exchange, marks it, and the next one parses")
    func gapInBody() {
        var c = HTTPConnection()
        Self.bytes("GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n").withUnsafeBytes { c.clientData($0, time: 1) }
        Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc").withUnsafeBytes { c.serverData($0, time: 2) }
        c.serverGap(4, time: 2)
        Self.bytes("hij" + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").withUnsafeBytes { c.serverData($0, time: 2) }
        c.finish(time: 3)
        #expect(c.completed.count == 2)
        #expect(c.completed[0].response?.complete == false)
        #expect(c.completed[0].response?.problems.first?.contains("4 body bytes missing") == true)
        #expect(Self.body(c.completed[0].response) == "abchij")
        #expect(c.completed[1].response?.complete == true)
        #expect(Self.body(c.completed[1].response) == "ok")
    }

    @Test("a gap in a head keeps the message as incomplete and resynchronises at the next start line")
    func gapInHead() {
        var c = HTTPConnection()
        Self.bytes("GET /a HTTP/1.1\r\nHo").withUnsafeBytes { c.clientData($0, time: 1) }
        c.clientGap(30, time: 1)
        Self.bytes("ing\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n").withUnsafeBytes { c.clientData($0, time: 1) }
        Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nAHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nB").withUnsafeBytes { c.serverData($0, time: 2) }
        c.finish(time: 3)
        #expect(c.completed.map { $0.request?.head.target } == ["/a", "/b"])
        #expect(c.completed.map { $0.request?.complete } == [false, true])
        #expect(c.completed.map { Self.body($0.response) } == ["A", "B"])
    }

    @Test("a capture that starts mid-stream skips to the first message start")
    func midStream() {
        var c = HTTPConnection(midStream: true)
        Self.bytes("tail of an earlier body\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n").withUnsafeBytes { c.clientData($0, time: 1) }
        Self.bytes("more old bytes HTTP/1.1 fake\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").withUnsafeBytes { c.serverData($0, time: 2) }
        c.finish(time: 3)
        #expect(c.completed.count == 1)
        #expect(c.completed[0].request?.head.target == "/next")
        #expect(Self.body(c.completed[0].response) == "ok")
    }

    @Test("a request the capture has no answer for is delivered alone at the end")
    func unanswered() {
        let exchanges = Self.exchanges(client: "POST /pay HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc", server: "")
        #expect(exchanges.count == 1)
        #expect(exchanges[0].response == nil)
        #expect(Self.body(exchanges[0].request) == "abc")
    }

    @Test("captures tolerate bare LF and obs-fold; strict parsing rejects them")
    func tolerance() {
        let text = "GET / HTTP/1.1\nHost: a\nX-Long: one\n two\n\n"
        var tolerant = HTTPParser(kind: .request)
        tolerant.feed(Self.bytes(text), time: 0)
        #expect(tolerant.completed.first?.head.first("X-Long") == "one two")
        var strict = HTTPParser(kind: .request, strictness: .strict)
        strict.feed(Self.bytes(text), time: 0)
        #expect(strict.error?.code == .lineEnding)
    }

    @Test("Transfer-Encoding wins over Content-Length in captures, and the exchange says so")
    func teBeatsCL() {
        let exchanges = Self.exchanges(
            client: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            server: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(Self.body(exchanges.first?.request) == "abc")
        #expect(exchanges.first?.request?.problems.contains { $0.contains("Transfer-Encoding wins") } == true)
    }

    @Test("the header limits are named in the error")
    func limits() {
        var big = HTTPParser(kind: .request, limits: HTTPLimits(maxHeaderBytes: 100, maxHeaderCount: 4))
        big.feed(Self.bytes("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 200) + "\r\n\r\n"), time: 0)
        #expect(big.error?.code == .headerTooLarge)
        #expect(big.error?.reason.contains("--max-header-bytes") == true)
        var many = HTTPParser(kind: .request, limits: HTTPLimits(maxHeaderBytes: 10_000, maxHeaderCount: 4))
        many.feed(Self.bytes("GET / HTTP/1.1\r\n" + (1...5).map { "H\($0): v\r\n" }.joined() + "\r\n"), time: 0)
        #expect(many.error?.code == .tooManyHeaders)
        var body = HTTPParser(kind: .response, limits: HTTPLimits(maxBodyBytes: 4))
        body.feed(Self.bytes("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"), time: 0)
        #expect(body.completed.first?.body == Data(Self.bytes("0123")))
        #expect(body.completed.first?.bodyLength == 10)
        #expect(body.completed.first?.bodyTruncated == true)
    }
}

@Suite("Content decoding")
struct ContentDecoderTests {
    static let text = Array(String(repeating: "window.h5 = {order: 42};\n", count: 200).utf8)

    /// zlib's own compressor, with the window bits that pick gzip, zlib or raw deflate.
    static func compress(_ input: [UInt8], windowBits: Int32) -> [UInt8] {
        var stream = z_stream()
        #expect(deflateInit2_(&stream, 6, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 64)
        var source = input
        let produced = source.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(out.count)
                _ = deflate(&stream, Z_FINISH)
                return out.count - Int(stream.avail_out)
            }
        }
        return Array(output.prefix(produced))
    }

    @Test("a Content-Encoding that names no coding leaves the body alone, without an oddity, whatever its case; one that does decodes as decode does")
    func identityIsNotDecoded() throws {
        let decoder = ContentDecoder(tolerant: true)
        for value in ["identity", "IDENTITY", " Identity ", "identity, ", ","] {
            #expect(try decoder.decodeIfEncoded(Self.text, contentEncoding: value) == nil, "\(value)")
        }
        let gzipped = Self.compress(Self.text, windowBits: 31)
        let decoded = try #require(try decoder.decodeIfEncoded(gzipped, contentEncoding: "GZIP"))
        #expect(decoded.bytes == Self.text)
        #expect(decoded.codings == ["gzip"])
        #expect(decoded.oddities == (try decoder.decode(gzipped, contentEncoding: "GZIP")).oddities)
        #expect(decoded.oddities.contains(.codingCase))
    }

    @Test("gzip, zlib-wrapped deflate, raw deflate and br all decode to the same bytes")
    func codings() throws {
        let decoder = ContentDecoder()
        #expect(try decoder.decode(Self.compress(Self.text, windowBits: 31), contentEncoding: "gzip").bytes == Self.text)
        #expect(try decoder.decode(Self.compress(Self.text, windowBits: 15), contentEncoding: "deflate").bytes == Self.text)
        #expect(try decoder.decode(Self.compress(Self.text, windowBits: -15), contentEncoding: "deflate").bytes == Self.text)
        let brotli: [UInt8] = [0x8B, 0x0E, 0x80, 0x7B, 0x22, 0x6F, 0x72, 0x64, 0x65, 0x72, 0x22, 0x3A, 0x34, 0x32, 0x2C, 0x22, 0x69, 0x74, 0x65, 0x6D, 0x73, 0x22, 0x3A, 0x5B, 0x22, 0x61, 0x22, 0x2C, 0x22, 0x62, 0x22, 0x5D, 0x7D, 0x03]
        #expect(try decoder.decode(brotli, contentEncoding: "br").bytes == Array(#"{"order":42,"items":["a","b"]}"#.utf8))
        // Two codings apply in the order listed; decoding undoes them in reverse.
        let twice = Self.compress(Self.compress(Self.text, windowBits: 15), windowBits: 31)
        #expect(try decoder.decode(twice, contentEncoding: "deflate, gzip").bytes == Self.text)
    }

    @Test("corrupt or unknown codings throw with a reason")
    func failures() {
        #expect(throws: ContentDecoder.Failure.self) { try ContentDecoder().decode([1, 2, 3, 4, 5], contentEncoding: "gzip") }
        #expect(throws: ContentDecoder.Failure.self) { try ContentDecoder().decode([1, 2, 3], contentEncoding: "compress") }
        let cut = Array(Self.compress(Self.text, windowBits: 31).dropLast(20))
        #expect(throws: ContentDecoder.Failure.self) { try ContentDecoder(tolerant: false).decode(cut, contentEncoding: "gzip") }
    }

    @Test("tolerant decoding keeps what decoded before a cut, and stops after the first gzip member, as browsers do")
    func tolerantCodings() throws {
        let whole = Self.compress(Self.text, windowBits: 31)
        let cut = try ContentDecoder().decode(Array(whole.dropLast(20)), contentEncoding: "gzip")
        #expect(!cut.bytes.isEmpty && Self.text.starts(with: cut.bytes) && cut.bytes.count < Self.text.count)
        #expect(cut.oddities.map(\.id) == ["coding-cut"])
        let members = whole + Self.compress(Array("second member".utf8), windowBits: 31)
        let first = try ContentDecoder().decode(members, contentEncoding: "gzip")
        #expect(first.bytes == Self.text)
        #expect(first.oddities.map(\.id) == ["coding-trailing-bytes"])
        #expect(try ContentDecoder(tolerant: false).decode(members, contentEncoding: "gzip").bytes == Self.text + Array("second member".utf8))
        // identity beside another coding: both engines hand the body over as sent.
        let listed = try ContentDecoder().decode(whole, contentEncoding: "identity, gzip")
        #expect(listed.bytes == whole && listed.oddities.map(\.id) == ["coding-identity-listed"])
        // Not gzip at all: nothing decodes, so it stays a failure (Chromium refuses the body).
        #expect(throws: ContentDecoder.Failure.self) { try ContentDecoder().decode(Self.text, contentEncoding: "gzip") }
    }

    @Test("decompression bombs stop at the decoded-size and ratio limits")
    func bombs() throws {
        let zeros = [UInt8](repeating: 0, count: 20 << 20)
        let gzipBomb = Self.compress(zeros, windowBits: 31)
        #expect(gzipBomb.count < 30_000)
        let bySize = try ContentDecoder(maxDecodedBytes: 1 << 20, maxRatio: 1_000_000).decode(gzipBomb, contentEncoding: "gzip")
        #expect(bySize.bytes.count == 1 << 20)
        #expect(bySize.limited?.contains("--max-decoded-bytes") == true)
        let byRatio = try ContentDecoder(maxDecodedBytes: 1 << 30, maxRatio: 100).decode(gzipBomb, contentEncoding: "gzip")
        #expect(byRatio.bytes.count == gzipBomb.count * 100)
        #expect(byRatio.limited?.contains("--max-decode-ratio") == true)
        // 1,000,000 "x" in 13 bytes of br.
        let brotliBomb: [UInt8] = [0x5B, 0x3F, 0x42, 0x0F, 0x40, 0x02, 0x2F, 0x1E, 0x0B, 0x24, 0x3F, 0xE7, 0x01]
        #expect(try ContentDecoder().decode(brotliBomb, contentEncoding: "br").bytes.count == 13 * 1000)
        #expect(try ContentDecoder(maxDecodedBytes: 1 << 30, maxRatio: 1_000_000).decode(brotliBomb, contentEncoding: "br").bytes == [UInt8](repeating: 0x78, count: 1_000_000))
    }
}

@Suite("RFC 9110 token characters")
struct TokenCharTests {
    @Test("every byte: ALPHA, DIGIT and !#$%&'*+-.^_`|~ are tchar, nothing else")
    func everyByte() {
        let specials = Set("!#$%&'*+-.^_`|~".utf8)
        for c in UInt8.min...UInt8.max {
            let expected = (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || specials.contains(c)
            #expect(HTTPParser.isTokenChar(c) == expected, "byte \(c)")
        }
    }
}

@Suite("Comma-separated field values")
struct ListItemsTests {
    @Test("split on comma bytes, each item trimmed of SP and HTAB, empty items kept", arguments: [
        ("gzip, br", ["gzip", "br"]),
        ("", [""]),
        (" a ,, b\t", ["a", "", "b"]),
        ("chunked", ["chunked"]),
        ("10 , 10", ["10", "10"]),
        ("a,\u{301}b", ["a", "\u{301}b"]),  // a comma before a combining mark still separates
        ("x\u{A0}, y", ["x\u{A0}", "y"]),  // NBSP is no OWS
    ])
    func items(value: String, items: [String]) {
        #expect(HTTPParser.listItems(value) == items)
    }
}

@Suite("Header fields read fast: eight bytes at a time, a field met before shared")
struct WordScanTests {
    static func isControl(_ c: UInt8) -> Bool { (c < 0x20 && c != 0x09) || c == 0x7F }

    /// Buffers of every length to 40 from bytes around each bound (0x00, HTAB, 0x1F, 0x20,
    /// 0x7E, 0x7F, 0x80, 0xFF) and plain text, each scanned from every start.
    @Test("the first control character and the ASCII check agree with a byte-by-byte scan")
    func agreesWithBytes() {
        var random = SystemRandomNumberGenerator()
        let edges: [UInt8] = [0x00, 0x08, 0x09, 0x0A, 0x1F, 0x20, 0x21, 0x7E, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<3_000 {
            let count = Int.random(in: 0...40, using: &random)
            // Mostly text, as a field value is, with an edge byte now and then.
            let bytes: [UInt8] = (0..<count).map { _ in
                Int.random(in: 0..<6, using: &random) == 0 ? edges.randomElement(using: &random)! : UInt8.random(in: 0x20...0x7E, using: &random)
            }
            bytes.withUnsafeBufferPointer { buffer in
                #expect(HTTPParser.isASCII(buffer) == bytes.allSatisfy { $0 < 0x80 }, "\(bytes)")
                for start in 0...count {
                    let expected = bytes.indices.first { $0 >= start && Self.isControl(bytes[$0]) }
                    #expect(HTTPParser.firstControl(in: buffer, from: start) == expected, "\(bytes) from \(start)")
                }
            }
        }
    }

    @Test("each head's fields read back as sent, whatever the size of the head before it on the connection (the list's room is guessed from it)")
    func fieldsWhateverTheHeadBefore() {
        // A small head, a large one, a small one again, a head of one field, one of none.
        let sizes = [2, 60, 3, 1, 0, 40]
        var text = ""
        var expected: [[String]] = []
        for (m, n) in sizes.enumerated() {
            let fields = (0..<n).map { k in "X-Field-\(k): " + String(repeating: "v\(m)", count: 1 + (k * 7) % 40) }
            text += "GET /\(m) HTTP/1.1\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
            expected.append(fields)
        }
        // Fed whole, and a byte at a time (every line then arrives cut).
        var whole = HTTPParser(kind: .request)
        whole.feed(Array(text.utf8), time: 0)
        var bytewise = HTTPParser(kind: .request)
        for byte in text.utf8 { bytewise.feed([byte], time: 0) }
        for parser in [whole, bytewise] {
            #expect(parser.completed.map { $0.head.headers.map { "\($0.name): \($0.value)" } } == expected)
        }
    }

    @Test("a folded value, a value that is not UTF-8 and a folded trailer are held as the text they read as")
    func foldedAndLatin1Values() {
        var bytes = Array("HTTP/1.1 200 OK\r\nX-Fold: one\r\n two\r\nX-Empty:\r\n\tnext\r\nX-Latin: caf".utf8)
        bytes += [0xE9] + Array("\r\nX-UTF8: café\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Trailer: a\r\n b\r\n\r\n".utf8)
        var parser = HTTPParser(kind: .response)
        parser.feed(bytes, time: 0)
        let message = parser.completed.first
        #expect(message?.head.headers.map { "\($0.name): \($0.value)" } == ["X-Fold: one two", "X-Empty: next", "X-Latin: café", "X-UTF8: café", "Transfer-Encoding: chunked"])
        #expect(message?.head.first("x-latin")?.unicodeScalars.last == "é")
        #expect(message.map { String(decoding: $0.body, as: UTF8.self) } == "ok")
        #expect(message?.trailers.map { "\($0.name): \($0.value)" } == ["X-Trailer: a b"])
    }

    @Test("past a tab, a NUL in a field value still refuses the request in tolerant parsing; a tab alone does not")
    func nulAfterTab() {
        func parse(_ head: String) -> HTTPParser {
            var parser = HTTPParser(kind: .request)
            parser.feed(Array(head.utf8), time: 0)
            return parser
        }
        let tab = parse("GET / HTTP/1.1\r\nX-Note: a\tlong value of thirty-two bytes\r\n\r\n")
        let nul = parse("GET / HTTP/1.1\r\nX-Note: a\tlong value of thirty-two \0bytes\r\n\r\n")
        #expect(tab.error == nil)
        #expect(tab.completed.first?.head.first("X-Note") == "a\tlong value of thirty-two bytes")
        #expect(nul.error?.code == .invalidHeaderValue)
        // The error's place is the NUL's offset in the stream.
        #expect(nul.error?.offset == Array("GET / HTTP/1.1\r\nX-Note: a\tlong value of thirty-two ".utf8).count)
        // A control character tolerant parsing lets through (here 0x01), then a NUL.
        let after = parse("GET / HTTP/1.1\r\nX-Note: one \u{01} then two \0\r\n\r\n")
        #expect(after.error?.code == .invalidHeaderValue)
        #expect(after.error?.offset == Array("GET / HTTP/1.1\r\nX-Note: one \u{01} then two ".utf8).count)
        #expect(parse("GET / HTTP/1.1\r\nX-Note: one \u{01} then two\r\n\r\n").error == nil)
    }
}
