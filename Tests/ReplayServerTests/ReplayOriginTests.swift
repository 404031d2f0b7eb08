import Foundation
import NIOHTTP1
import Testing
import TrafficModel
@testable import ReplayServer

@Suite("Replay origin: matching recorded requests")
struct ReplayOriginTests {
    static func exchange(_ sequence: Int, _ method: String, _ url: String, body: String = "", status: Int = 200, response: String = "") -> Exchange {
        Exchange(sequence: sequence, startedAt: Double(sequence),
                 request: RecordedRequest(method: method, url: url, body: Data(body.utf8)),
                 response: RecordedResponse(status: status, body: Data(response.utf8)))
    }

    static let recording = Recording(name: "flow", sourceFormat: "har", exchanges: [
        exchange(0, "GET", "https://shop.example.com/api/list?page=1&ts=111", response: "first"),
        exchange(1, "GET", "https://shop.example.com/api/list?page=1&ts=222", response: "second"),
        exchange(2, "POST", "https://shop.example.com/api/pay", body: "amount=1", response: "one"),
        exchange(3, "POST", "https://shop.example.com/api/pay", body: "amount=2", response: "two"),
        exchange(4, "GET", "https://cdn.example.com/app.js", response: "cdn"),
        exchange(5, "GET", "https://shop.example.com/app.js", response: "shop"),
    ])

    func body(_ origin: ReplayOrigin, _ ref: ReplayOrigin.Ref?) -> String? {
        ref.map { String(decoding: origin.exchange($0).response.body, as: UTF8.self) }
    }

    @Test("ignored parameters do not count, and repeated requests get the recorded responses in order")
    func repeatedInOrder() {
        var origin = ReplayOrigin(recordings: [Self.recording], options: .init(ignoredParameters: ["ts"]))
        let answers = (0..<3).map { _ in body(origin, origin.match(method: "GET", target: "/api/list?ts=999&page=1", host: "127.0.0.1:8080", body: Data())) }
        #expect(answers == ["first", "second", "second"])
        var strict = ReplayOrigin(recordings: [Self.recording])
        #expect(strict.match(method: "GET", target: "/api/list?ts=999&page=1", host: nil, body: Data()) == nil)
    }

    @Test("the body picks among same-URL requests; without a same-body one, the URL still answers")
    func bodyHash() {
        var origin = ReplayOrigin(recordings: [Self.recording])
        #expect(body(origin, origin.match(method: "POST", target: "/api/pay", host: nil, body: Data("amount=2".utf8))) == "two")
        #expect(body(origin, origin.match(method: "POST", target: "/api/pay", host: nil, body: Data())) == "one")
        var ignoring = ReplayOrigin(recordings: [Self.recording], options: .init(ignoreBody: true))
        #expect(body(ignoring, ignoring.match(method: "POST", target: "/api/pay", host: nil, body: Data("amount=2".utf8))) == "one")
    }

    @Test("absolute-form requests and the Host header route among recorded hosts")
    func hosts() {
        var origin = ReplayOrigin(recordings: [Self.recording])
        #expect(body(origin, origin.match(method: "GET", target: "http://cdn.example.com/app.js", host: "cdn.example.com", body: Data())) == "cdn")
        #expect(body(origin, origin.match(method: "GET", target: "/app.js", host: "shop.example.com", body: Data())) == "shop")
        #expect(origin.match(method: "GET", target: "/missing", host: nil, body: Data()) == nil)
    }

    @Test("served responses keep the client on this origin: Location becomes a path, Set-Cookie loses Domain and Secure")
    func responseHeaders() {
        let response = RecordedResponse(status: 302, headers: [
            HeaderField("Location", "https://shop.example.com/home?x=1"), HeaderField("Set-Cookie", "sid=1; Domain=shop.example.com; Path=/; Secure; HttpOnly"),
            HeaderField("Content-Encoding", "gzip"), HeaderField("Transfer-Encoding", "chunked"),
        ], body: Data("ok".utf8))
        let headers = ReplayServer.responseHeaders(response, hosts: ["shop.example.com"], proxied: false)
        #expect(headers.first(name: "Location") == "/home?x=1")
        #expect(headers.first(name: "Set-Cookie") == "sid=1; Path=/; HttpOnly")
        #expect(headers.first(name: "Content-Encoding") == nil)
        #expect(headers.first(name: "Content-Length") == "2")
        let proxied = ReplayServer.responseHeaders(response, hosts: ["shop.example.com"], proxied: true)
        #expect(proxied.first(name: "Location") == "https://shop.example.com/home?x=1")
    }

    @Test("a warm-cache recording: a request without a validator gets the recorded body, from another entry or from a 304 entry that kept it; one with a validator gets the 304")
    func warmCacheAnswers() {
        var cached = Self.exchange(2, "GET", "https://shop.example.com/logo.png")
        cached.evidenceGap = .fromCache
        let recording = Recording(name: "warm", sourceFormat: "har", exchanges: [
            Self.exchange(0, "GET", "https://shop.example.com/", status: 304, response: "<html>kept</html>"),
            Self.exchange(1, "GET", "https://shop.example.com/app.js", status: 304),
            cached,
            Self.exchange(3, "GET", "https://shop.example.com/app.js", response: "full"),
        ])
        let server = ReplayServer(origin: ReplayOrigin(recordings: [recording]), threads: 1)
        func answer(_ path: String, _ headers: [(String, String)] = []) -> (Int, String) {
            let (_, prepared, _) = server.respond(method: "GET", target: path, headers: HTTPHeaders(headers), body: Data())
            return (prepared.map { Int($0.status.code) } ?? 0, prepared.map { String(buffer: $0.body) } ?? "-")
        }
        #expect(answer("/") == (200, "<html>kept</html>"), "Firefox's 304 entry keeps the cached body")
        #expect(answer("/", [("If-None-Match", "\"v1\"")]) == (304, "<html>kept</html>"))
        #expect(answer("/app.js") == (200, "full"), "another entry holds the body")
        #expect(answer("/logo.png") == (200, ""), "no body anywhere: the cache hit as recorded")
        #expect(ReplayOrigin.isBodiless(recording.exchanges[2]) && !ReplayOrigin.isBodiless(recording.exchanges[3]))
    }
}
