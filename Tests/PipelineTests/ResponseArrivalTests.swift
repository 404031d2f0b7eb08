import CookieJar
import Foundation
import HARFormat
import Testing
import TrafficModel
import WebViewEmulation
@testable import Pipeline

/// A browser stores a response's Set-Cookie when the response's head arrives: requests
/// that left while it was on its way went without the cookie, whatever order the requests
/// started in. The provenance walk and the emulator both read the recording's clock so.
@Suite("Set-Cookie when the response arrives")
struct ResponseArrivalTests {
    static let t0 = 1_800_000_000.0

    /// #0 a document setting `sid`; #1 a slow XHR whose head arrives at +0.5 s setting
    /// `cart`; #2 an XHR that left at +0.2 s, before it, without `cart`; #3 one that left at
    /// +0.8 s with it. Same-origin XHRs carry Sec-Fetch and Referer as a page's do.
    static func flow(headAt: Double?) -> Recording {
        func xhr(_ sequence: Int, at offset: Double, cookie: String, duration: Double = 0.02, setCookie: String? = nil, responseStart: Double? = nil) -> Exchange {
            var e = Exchange(sequence: sequence, startedAt: t0 + offset, duration: duration,
                request: RecordedRequest(method: "GET", url: "https://shop.example/api/\(sequence)", headers: [HeaderField("Accept", "application/json"), HeaderField("Referer", "https://shop.example/"), HeaderField("Sec-Fetch-Mode", "cors"), HeaderField("Sec-Fetch-Dest", "empty"), HeaderField("Accept-Encoding", "gzip"), HeaderField("Cookie", cookie)]),
                response: RecordedResponse(status: 200, headers: setCookie.map { [HeaderField("Set-Cookie", $0)] } ?? []))
            e.responseStart = responseStart
            return e
        }
        var document = Exchange(sequence: 0, startedAt: t0 - 1, duration: 0.05,
            request: RecordedRequest(method: "GET", url: "https://shop.example/", headers: [HeaderField("Accept", "text/html"), HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Sec-Fetch-Mode", "navigate"), HeaderField("Accept-Encoding", "gzip")]),
            response: RecordedResponse(status: 200, headers: [HeaderField("Content-Type", "text/html"), HeaderField("Set-Cookie", "sid=1; Path=/")]))
        document.responseStart = 0.04
        var exchanges = [
            document,
            xhr(1, at: 0, cookie: "sid=1", duration: 2, setCookie: "cart=7; Path=/", responseStart: headAt),
            xhr(2, at: 0.2, cookie: "sid=1"),
            xhr(3, at: 0.8, cookie: "sid=1; cart=7"),
        ]
        ExchangeClassifier.classify(&exchanges)
        return Recording(name: "arrival", sourceFormat: "test", exchanges: exchanges)
    }

    @Test("a request that left before a response's head arrived went without its cookie: no deletion, no write, and no preset is blamed for it")
    func beforeTheHead() throws {
        let recording = Self.flow(headAt: 0.5)
        let provenance = CookieProvenance(recording: recording)
        #expect(provenance.inferred.joined().isEmpty, "\(provenance.inferred)")
        #expect(provenance.sent[3].first { $0.name == "cart" }.map { "\($0.kind.rawValue) \($0.setBy ?? -1)" } == "server-set 1")
        let findings = ReplayRunner(presets: Preset.builtIn.filter { ["plain", "urlprotocol-naive"].contains($0.name) }, profile: Profile()).replay([recording]).flatMap(\.findings)
        #expect(!findings.contains { $0.subjects.contains("cart") }, "\(findings.map(\.message))")
    }

    @Test("where the recording does not say when the head came, the response's end bounds it, and a request carrying its cookie shows it came earlier; a HAR's timings and its export say it")
    func unknownHeadAndHAR() throws {
        // Unknown: the head is taken at the end (+2 s); #3, at +0.8 s, carries the cart
        // only #1 sets, so #1 had arrived: its cookie, not a script's.
        let unknown = Self.flow(headAt: nil)
        let provenance = CookieProvenance(recording: unknown)
        #expect(provenance.inferred.joined().isEmpty, "\(provenance.inferred)")
        #expect(provenance.sent[3].first { $0.name == "cart" }.map { "\($0.kind.rawValue) \($0.setBy ?? -1)" } == "server-set 1")
        let findings = ReplayRunner(presets: Preset.builtIn.filter { ["plain", "urlprotocol-naive"].contains($0.name) }, profile: Profile()).replay([unknown]).flatMap(\.findings)
        #expect(!findings.contains { $0.subjects.contains("cart") }, "\(findings.map(\.message))")
        // A HAR entry of 2,000 ms whose body took 1,500 ms: the head came at 500 ms, and an
        // export writes it back so.
        let exchange = Self.flow(headAt: 0.5).exchanges[1]
        #expect(exchange.responseArrivedAt == Self.t0 + 0.5)
        let har = try HARExporter(toolVersion: "test").data(for: Recording(name: "x", sourceFormat: "test", exchanges: [exchange]))
        let read = try HARImporter().recording(from: har, file: "x.har", name: "x")
        #expect(read.exchanges[0].responseStart == 0.5)
    }

    @Test("WebPagetest's entries start when the request left yet count the connect before it: their own marks say when heads arrived, so Set-Cookies land in arrival order")
    func pageTestMarks() throws {
        // Two requests leave together; A's connection took 400 ms before it left (in its
        // `time`), its head came at +36 ms; B's head came at +60 ms. B's value is the later.
        func entry(_ path: String, value: String, time: Int, dns: Int, head: Int) -> String {
            #"{"startedDateTime": "2018-01-14T07:52:28.742Z", "time": \#(time), "_load_start": 4086, "_ttfb_end": \#(4086 + head), "_load_end": \#(4086 + head + 1), "timings": {"blocked": -1, "dns": \#(dns), "connect": 0, "ssl": 0, "send": 0, "wait": \#(time - dns - 1), "receive": 1}, "request": {"method": "GET", "url": "https://ads.example/\#(path)", "headers": [{"name": "Referer", "value": "https://news.example/"}]}, "response": {"status": 200, "headers": [{"name": "Set-Cookie", "value": "ruid=\#(value); Domain=.ads.example; Path=/"}], "content": {"size": 0}}}"#
        }
        let after = #"{"startedDateTime": "2018-01-14T07:52:29.000Z", "time": 10, "request": {"method": "GET", "url": "https://ads.example/next", "headers": [{"name": "Referer", "value": "https://news.example/"}, {"name": "Cookie", "value": "ruid=b"}]}, "response": {"status": 200, "headers": [], "content": {"size": 0}}}"#
        let har = #"{"log": {"version": "1.2", "creator": {"name": "WebPagetest", "version": "17.12"}, "entries": [\#(entry("a", value: "a", time: 437, dns: 400, head: 36)), \#(entry("b", value: "b", time: 61, dns: 0, head: 60)), \#(after)]}}"#
        let recording = try HARImporter().recording(from: Data(har.utf8), file: "wpt.har", name: "wpt")
        #expect(recording.exchanges.map(\.responseStart) == [0.036, 0.060, nil])
        #expect(recording.exchanges[0].duration == 0.037)
        // ruid=b, the head that came last, is what the next request carries: server-set, no script write.
        let provenance = CookieProvenance(recording: recording)
        #expect(provenance.sent[2].map { "\($0.kind.rawValue) \($0.setBy ?? -1)" } == ["server-set 1"])
        #expect(provenance.inferred.joined().isEmpty, "\(provenance.inferred)")
    }
}
