import Foundation
import RecordingProxy
import Testing
import TrafficModel

/// Responses through the recording proxy reach the client as the upstream sends them, and
/// the recording still holds them whole (up to the cap); a cut upstream is passed on as it
/// happened.
@Suite("Recording proxy: responses stream through, cuts are passed on", .serialized)
struct StreamingTests {
    /// Three server-sent events 0.5 s apart on a response delimited by the close.
    static let events: [ScriptedOrigin.Step] = [
        .send("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"),
        .send("data: one\n\n"), .pause(0.5), .send("data: two\n\n"), .pause(0.5), .send("data: three\n\n"), .pause(0.5), .close,
    ]

    /// Seconds from the request until the first event arrived, and until the stream ended,
    /// for a client connected to `port` sending `request`.
    static func firstEvent(port: Int, request: String) throws -> (first: Double, end: Double, client: RawClient) {
        let client = try RawClient(port: port)
        let sent = Date().timeIntervalSince1970
        client.send(request)
        #expect(client.wait { $0.text.contains("data: one") })
        #expect(client.wait(4) { $0.text.contains("data: three") && $0.closed })
        let first = try #require(client.arrival(of: "data: one")) - sent
        let end = try #require(client.arrival(of: "data: three")) - sent
        return (first, end, client)
    }

    @Test("an event stream's first event reaches the client through the proxy as soon as it does straight, and the recording holds all three")
    func eventStream() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try ScriptedOrigin(Self.events)
        defer { origin.stop() }

        let straight = try Self.firstEvent(port: origin.port, request: "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        straight.client.stop()
        let through = try Self.firstEvent(port: proxy.port, request: "GET http://127.0.0.1:\(origin.port)/events HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n")
        through.client.stop()
        print("event stream: first event straight \(Int(straight.first * 1000)) ms, through the proxy \(Int(through.first * 1000)) ms; last event through the proxy \(Int(through.end * 1000)) ms")
        #expect(through.first < 0.4, "the first event took \(through.first) s through the proxy")
        #expect(through.end > 0.9, "the stream lasts a second after its first event")

        let reported = proxy.exchanges(1)
        let exchange = try #require(reported.first).exchange
        #expect(exchange.response.status == 200)
        #expect(String(decoding: exchange.response.body, as: UTF8.self) == "data: one\n\ndata: two\n\ndata: three\n\n")
        #expect(reported.first?.incomplete == nil && reported.first?.failure == nil)
        #expect((exchange.responseStart ?? 1) < 0.4)
    }

    @Test("a body with a length or chunked flows chunk by chunk: the first part arrives before the upstream sends the rest", arguments: ["length", "chunked"])
    func framedStream(framing: String) throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let head = framing == "length" ? "HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n" : "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        let part: (String) -> String = { framing == "length" ? $0 : String($0.utf8.count, radix: 16) + "\r\n" + $0 + "\r\n" }
        let origin = try ScriptedOrigin([.send(head + part("first")), .pause(0.6), .send(part("secnd")), .pause(0.6), .send(part("third") + (framing == "length" ? "" : "0\r\n\r\n"))])
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port)
        defer { client.stop() }
        let sent = Date().timeIntervalSince1970
        client.send("GET http://127.0.0.1:\(origin.port)/file HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(client.wait { $0.text.contains("first") })
        #expect(client.wait(4) { $0.text.contains("third") })
        let first = try #require(client.arrival(of: "first")) - sent
        #expect(first < 0.4, "\(framing): the first part took \(first) s")
        let exchange = try #require(proxy.exchanges(1).first).exchange
        #expect(String(decoding: exchange.response.body, as: UTF8.self) == "firstsecndthird")
    }

    @Test("an upstream that promises 1000 bytes and closes after 10: the client gets the 10 bytes and a close, not a 502, and the recording says it was cut")
    func cutUpstream() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try ScriptedOrigin([.send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/plain\r\n\r\n0123456789"), .pause(0.05), .close])
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port)
        defer { client.stop() }
        client.send("GET http://127.0.0.1:\(origin.port)/big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(client.wait { $0.closed }, "the proxy kept the client's connection open after the upstream's cut")
        let text = client.text
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(text)")
        #expect(text.contains("Content-Length: 1000"))
        #expect(text.components(separatedBy: "\r\n\r\n").last == "0123456789", "\(text)")
        #expect(!text.contains("502"))

        let item = try #require(proxy.exchanges(1).first)
        #expect(item.exchange.response.status == 200)
        #expect(item.exchange.response.body == Data("0123456789".utf8))
        #expect(item.failure == nil)
        let cut = try #require(item.incomplete)
        #expect(cut.contains("10 of 1000 body bytes"), "\(cut)")
    }

    @Test("a client that goes away mid-stream: the upstream is let go and the exchange is reported cut, with what had come")
    func clientLeaves() throws {
        let proxy = try ProxyUnderTest()
        defer { proxy.stop() }
        let origin = try ScriptedOrigin(Array(Self.events.dropLast()) + [.pause(10), .close])
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port)
        client.send("GET http://127.0.0.1:\(origin.port)/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(client.wait { $0.text.contains("data: two") })
        client.stop()
        let item = try #require(proxy.exchanges(1, timeout: 3).first)
        #expect(item.incomplete?.hasPrefix("aborted: the client closed the connection after") == true, "\(item.incomplete ?? "not cut")")
        #expect(eventually { origin.closed.withLockedValue { $0 } == 1 }, "the proxy kept the upstream connection open")
        // The proxy learns that the client left when it next writes to it (a close and a
        // half-close look alike until then): the recording holds what the upstream sent
        // up to there.
        #expect(String(decoding: item.exchange.response.body, as: UTF8.self).hasPrefix("data: one\n\ndata: two\n\n"))
    }

    @Test("a body over the cap reaches the client whole; the recording keeps the cap's worth and the length received")
    func bodyOverCap() throws {
        let proxy = try ProxyUnderTest(maxBodyBytes: 100)
        defer { proxy.stop() }
        let body = String(repeating: "abcdefghij", count: 100)
        let origin = try ScriptedOrigin([.send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + body)])
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port)
        defer { client.stop() }
        client.send("GET http://127.0.0.1:\(origin.port)/big HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(client.wait { $0.text.hasSuffix(body) })
        let item = try #require(proxy.exchanges(1).first)
        #expect(item.exchange.response.body == Data(body.utf8.prefix(100)))
        #expect(item.receivedBodyBytes == 1000)
        #expect(item.incomplete == nil)
    }

    @Test("a kept body past a megabyte is held in a file, not in memory: the recording has the cap's bytes, readable from the file, which has no name in the folder")
    func keptBodyInFile() throws {
        let proxy = try ProxyUnderTest(maxBodyBytes: 3 << 20)
        defer { proxy.stop() }
        let origin = try ScriptedOrigin([.send("HTTP/1.1 200 OK\r\nContent-Length: \(5 << 20)\r\n\r\n"), .megabytes(5)])
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port, keeping: false)
        defer { client.stop() }
        client.send("GET http://127.0.0.1:\(origin.port)/download HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(client.wait(30) { $0.count >= 5 << 20 })
        let item = try #require(proxy.exchanges(1).first)
        let file = try #require(item.keptBodyFile)
        #expect(file.length == 3 << 20 && item.receivedBodyBytes == 5 << 20)
        #expect(item.exchange.response.body.count == 3 << 20 && item.exchange.response.body.allSatisfy { $0 == UInt8(ascii: "x") })
        #expect(try file.read((3 << 20) - 4 ..< 3 << 20) == Data("xxxx".utf8))
        let left = try FileManager.default.contentsOfDirectory(atPath: proxy.folder.path).filter { $0.hasPrefix("h5replay-body-") }
        #expect(left.isEmpty, "\(left)")
    }

    @Test("back-pressure: the proxy reads the upstream no faster than a slow client takes the body, then delivers every byte")
    func slowClient() throws {
        let proxy = try ProxyUnderTest(maxBodyBytes: 1 << 20)
        defer { proxy.stop() }
        let megabytes = 320
        let origin = try ScriptedOrigin([.send("HTTP/1.1 200 OK\r\nContent-Length: \(megabytes << 20)\r\n\r\n"), .megabytes(megabytes)])
        defer { origin.stop() }
        let client = try RawClient(port: proxy.port, reading: false, keeping: false)
        defer { client.stop() }
        client.send("GET http://127.0.0.1:\(origin.port)/download HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        // The client reads nothing: what the upstream gets rid of is bounded by the socket
        // buffers on both hops (here up to 36 MB each), not by the body.
        usleep(2_500_000)
        let taken = origin.written.withLockedValue { $0 } >> 20
        print("slow client: the upstream wrote \(taken) of \(megabytes) MB while the client read nothing")
        #expect(taken < 160, "the proxy took \(taken) MB from the upstream for a client that read nothing")
        client.startReading()
        #expect(client.wait(60) { $0.count >= megabytes << 20 }, "the client got \(client.count >> 20) MB")
        let item = try #require(proxy.exchanges(1).first)
        #expect(item.receivedBodyBytes == megabytes << 20 && item.exchange.response.body.count == 1 << 20)
    }
}
