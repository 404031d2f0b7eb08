import CookieJar
import Foundation
import Testing
import TrafficModel
@testable import WebViewEmulation

/// Offline packages and prefetch configs (the article iOS秒开H5实战总结 (2021-05-07); rules O1-O4, PF1-PF3).
@Suite("Offline package and prefetch")
struct CoverageTests {
    typealias M = MitigationTests

    @Test("a resource map reads with or without the config API's envelope, and matches a URL without its fragment (O1)")
    func resourceMap() throws {
        let body = Data("fetchCart()".utf8)
        let wrapped = #"{"code": 200, "data": {"version": "5", "resourcemap": {"https://m.example.com/static/cart.js#v": {"version": "1", "md5": "MD5", "download": "https://cdn/x.js", "ctype": "application/javascript"}}}}"#
            .replacingOccurrences(of: "MD5", with: body.md5Hex)
        let package = try OfflinePackage.load(Data(wrapped.utf8), file: "map.json")
        var script = M.exchange(1, at: 1, "GET", "https://m.example.com/static/cart.js", responseBody: body)
        #expect(package.verdict(for: script) == .hit)
        script.response.body = Data("fetchCart(2)".utf8)
        #expect(package.verdict(for: script) == .stale)  // O2: the package's md5 is not the server's
        let bare = try OfflinePackage.load(Data(#"{"resourcemap": {}}"#.utf8), file: "bare.json")
        #expect(bare.verdict(for: script) == .miss)
        // The query is kept: another query is another resource.
        #expect(package.verdict(for: M.exchange(1, at: 1, "GET", "https://m.example.com/static/cart.js?v=2", responseBody: body)) == .miss)
    }

    @Test("bad resource maps and prefetch configs are refused, naming the file and the JSON path", arguments: [
        ("map", #"{"code": 200, "data": {"list": []}}"#, "map.json: data.resourcemap: a resource map needs"),
        ("map", #"{"resourcemap": {"cart.js": {"md5": "0518c371936fd611fc3b897a76c11111"}}}"#, "map.json: resourcemap[\"cart.js\"]: the key is not an http(s) URL"),
        ("map", #"{"resourcemap": {"https://a.example/x.js": {"md5": "xyz"}}}"#, "map.json: resourcemap[\"https://a.example/x.js\"].md5: an md5 is 32 hex digits"),
        ("map", "[1, 2]", "map.json: (file): expected a JSON object"),
        ("prefetch", #"{"config": [{"url": "https://a.example/p.html", "interfaces": [{"api": "https://a.example/api", "method": "POST", "body": [1]}]}]}"#, "prefetch.json: config[0].interfaces[0].body: the body is a JSON object"),
        ("prefetch", #"{"config": [{"url": "p.html", "interfaces": []}]}"#, "prefetch.json: config[0].url: an http(s) page URL is required"),
        ("prefetch", #"{"code": 200, "data": {"config": [{"url": "https://a.example/p.html", "interfaces": [{"api": "https://a.example/api", "urlParam": "yes"}]}]}}"#, "prefetch.json: data.config[0].interfaces[0].urlParam: true or false"),
    ])
    func badInput(_ kind: String, _ json: String, _ message: String) {
        #expect {
            if kind == "map" { _ = try OfflinePackage.load(Data(json.utf8), file: "map.json") } else { _ = try PrefetchConfig.load(Data(json.utf8), file: "prefetch.json") }
        } throws: { error in
            String(describing: error).hasPrefix(message)
        }
    }

    @Test("PF1: the page's query merged into the API's URL (urlParam) and into the JSON body (bodyParam)")
    func plan() throws {
        let json = #"{"config": [{"url": "https://m.example.com/help/new", "interfaces": [{"api": "https://m.example.com/xx.json", "method": "get", "urlParam": true}, {"api": "https://m.example.com/yy.json", "method": "POST", "bodyParam": true, "body": {"cityId": 123456}}]}]}"#
        let config = try PrefetchConfig.load(Data(json.utf8), file: "p.json")
        let entry = try #require(config.entry(forPage: "https://m.example.com/help/new?id=163&itemId=126#x"))
        let planned = PrefetchConfig.plan(entry, pageURL: "https://m.example.com/help/new?id=163&itemId=126")
        #expect(planned[0].url == "https://m.example.com/xx.json?id=163&itemId=126" && planned[0].method == "GET" && planned[0].body == nil)
        #expect(planned[1].url == "https://m.example.com/yy.json" && planned[1].body == #"{"cityId":123456,"id":"163","itemId":"126"}"#)
    }

    @Test("O1-O4: a preset that intercepts serves the package: no Set-Cookie, no redirect, old bytes; plain cannot")
    func served() throws {
        let doc = M.exchange(0, at: 0, "GET", "https://m.example.com/page.html", headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")],
            responseHeaders: [("Set-Cookie", "v=1; Path=/")], responseBody: Data("<p>".utf8))
        let api = M.exchange(1, at: 2, "GET", "https://m.example.com/api/me", headers: [("X-Requested-With", "XMLHttpRequest"), ("Cookie", "v=1")])
        var scenario = Scenario()
        scenario.offlinePackage = OfflinePackage(resources: [.init(url: "https://m.example.com/page.html", version: "1", md5: Data("<p>old".utf8).md5Hex, download: nil, contentType: "text/html")])
        var list = [doc, api]
        ExchangeClassifier.classify(&list)
        let input = ReplayInput(recording: Recording(name: "t", sourceFormat: "test", exchanges: list), scenario: scenario)
        let served = input.replay(Preset.named("urlprotocol-naive")!)
        #expect(served.outcomes[0].offline == .stale && served.outcomes[0][.responseChanged] == ["O2"])
        #expect(served.outcomes[1].cookieDifferences.first?.rules.contains("O3") == true)  // the cookie the page never got
        let plain = input.replay(Preset.named("plain")!)
        #expect(plain.outcomes[0].offline == .notInterceptable && plain.outcomes[1].cookieDifferences.isEmpty)
    }
}
