import CookieJar
import Foundation
import Testing
import TrafficModel
@testable import WebViewEmulation

/// Mitigations (docs/model.md, "Mitigations"), the jsproxy strategy and S5's other forms.
@Suite("Mitigations and the seed presets")
struct MitigationTests {
    static let t0 = 1_800_000_000.0
    static let page = Self.exchange(0, at: 0, "GET", "https://m.example.com/cart", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")])

    static func exchange(_ sequence: Int, at offset: Double, _ method: String, _ url: String, headers: [(String, String)] = [], body: Data = Data(), status: Int = 200, responseHeaders: [(String, String)] = [], responseBody: Data = Data()) -> Exchange {
        Exchange(sequence: sequence, startedAt: t0 + offset, duration: 0.02,
            request: RecordedRequest(method: method, url: url, headers: HeaderList(headers.lazy.map { HeaderField($0.0, $0.1) }), body: body),
            response: RecordedResponse(status: status, headers: HeaderList(responseHeaders.lazy.map { HeaderField($0.0, $0.1) }), body: responseBody))
    }

    static func xhr(_ sequence: Int, _ url: String = "https://m.example.com/api/order", type: String = "application/json", body: String, initiator: String = "XMLHttpRequest", extra: [(String, String)] = []) -> Exchange {
        exchange(sequence, at: Double(sequence), "POST", url, headers: [("Content-Type", type), ("X-Requested-With", initiator), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")] + extra, body: Data(body.utf8))
    }

    static func run(_ exchanges: [Exchange], _ preset: String, ios: IOSVersion = .newest, simulator: Bool = false) -> EmulationResult {
        run(exchanges, Preset.named(preset)!, ios: ios, simulator: simulator)
    }

    static func run(_ exchanges: [Exchange], _ preset: Preset, ios: IOSVersion = .newest, simulator: Bool = false) -> EmulationResult {
        var list = exchanges
        ExchangeClassifier.classify(&list)
        let recording = Recording(name: "t", sourceFormat: "test", exchanges: list)
        return WebViewEmulator(preset: preset, profile: Profile(ios: ios, simulator: simulator)).run(recording, provenance: CookieProvenance(recording: recording))
    }

    @Test("body-bridge: the body comes back (B1) but the id reaches the server (B2); yanxuan's header too (B9)")
    func bodyBridge() {
        let flow = [Self.page, Self.xhr(1, body: #"{"sku":"tea"}"#)]
        let kk = Self.run(flow, "kkjsbridge-protocolhook").outcomes[1]
        #expect(!kk.has(.bodyChanged) && kk.deliveredBody == BodyFingerprint(Data(#"{"sku":"tea"}"#.utf8)))
        #expect(kk[.urlChanged] == ["B2"] && kk.deliveredURL == "https://m.example.com/api/order?KKJSBridge-RequestId=2")
        let yx = Self.run(flow, "yanxuan-xcache").outcomes[1]
        #expect(yx.addedHeaders == [HeaderAddition(name: "x-wkwebview-request-type", rule: "B9")])
        #expect(!yx.has(.preflightAdded))  // same origin: no preflight
        let cross = Self.run([Self.page, Self.xhr(1, "https://api.other.example/order", body: "{}")], "yanxuan-xcache").outcomes[1]
        #expect(cross[.preflightAdded] == ["B9"])
    }

    @Test("body-bridge does not cover a user-clicked form (B3), a beacon (B8) or an iframe (B4)")
    func bridgeGaps() {
        let form = Self.exchange(1, at: 1, "POST", "https://m.example.com/pay", headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")], body: Data("a=1".utf8))
        #expect(Self.run([Self.page, form], "kkjsbridge-protocolhook").outcomes[1][.bodyChanged] == ["P1", "B3"])
        let beacon = Self.exchange(1, at: 1, "POST", "https://m.example.com/log", headers: [("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "no-cors"), ("Content-Type", "text/plain")], body: Data("x".utf8))
        var b = beacon
        b.resourceType = "ping"
        #expect(Self.run([Self.page, b], "kkjsbridge-protocolhook").outcomes[1][.bodyChanged] == ["P1", "B8"])
        let frame = Self.exchange(1, at: 1, "GET", "https://m.example.com/frame", headers: [("Sec-Fetch-Dest", "iframe"), ("Sec-Fetch-Mode", "navigate")])
        let inFrame = Self.xhr(2, body: "{}", extra: [("Referer", "https://m.example.com/frame")])
        let outcome = Self.run([Self.page, frame, inFrame], "yanxuan-xcache").outcomes[2]
        #expect(outcome[.bodyChanged] == ["P1", "B4"] && outcome.deliveredBody == .empty)
    }

    @Test("B5: KKJSBridge rebuilds FormData; B6: NetEase re-joins URLSearchParams without encoding")
    func reencoding() {
        let multipart = "--X\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--X\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n2\r\n--X--\r\n"
        let kk = Self.run([Self.page, Self.xhr(1, type: "multipart/form-data; boundary=X", body: multipart)], "kkjsbridge-protocolhook").outcomes[1]
        #expect(kk[.bodyChanged] == ["B5"] && !kk.deliveredBody.isEmpty)
        let params = "q=a%26b%3Dc&name=%E7%8E%8B+%2B1"
        let ne = Self.run([Self.page, Self.xhr(1, type: "application/x-www-form-urlencoded", body: params)], "netease-schemehandler", ios: IOSVersion(11, 0)).outcomes[1]
        #expect(ne[.bodyChanged] == ["B6"])
        #expect(ne.deliveredBody == BodyFingerprint(Data("q=a&b=c&name=王 +1".utf8)))
        // From 11.3 NetEase bridges only Blob bodies: the string goes through the handler intact.
        #expect(!Self.run([Self.page, Self.xhr(1, type: "application/x-www-form-urlencoded", body: params)], "netease-schemehandler").outcomes[1].has(.bodyChanged))
    }

    @Test("body-in-header: text restored (H1), binary lost (H2), non-Latin-1 fails (H3), preflight (H4), size warning (H5)")
    func bodyInHeader() {
        #expect(!Self.run([Self.page, Self.xhr(1, body: #"{"a":1}"#)], "postscheme-header").outcomes[1].has(.bodyChanged))
        var binary = Self.xhr(1, type: "application/octet-stream", body: "")
        binary.request.body = Data([0, 1, 2, 0xFF])
        #expect(Self.run([Self.page, binary], "postscheme-header").outcomes[1][.bodyChanged] == ["H2"])
        let chinese = Self.run([Self.page, Self.xhr(1, body: #"{"name":"王"}"#)], "postscheme-header").outcomes[1]
        #expect(chinese[.bodyChanged] == ["H3"] && chinese.bodyReason != nil)
        #expect(Self.run([Self.page, Self.xhr(1, "https://api.other.example/x", body: "{}")], "postscheme-header").outcomes[1][.preflightAdded] == ["H4"])
        let big = Self.run([Self.page, Self.xhr(1, type: "text/plain", body: String(repeating: "a", count: 3 << 20))], "postscheme-header").outcomes[1]
        #expect(big[.tooLargeForHeader] == ["H5"] && !big.has(.bodyChanged))
    }

    @Test("jsproxy: binary XHR bodies kept by KKJSBridge's AjaxHook, lost without serialisation (X1), binary responses mangled (X2), fetch not hooked (X3)")
    func jsproxy() {
        var upload = Self.xhr(1, type: "application/octet-stream", body: "")
        upload.request.body = Data([0xFF, 0xFE])
        // X1: KKJSBridgeAjaxHook.ts base64-encodes the ArrayBuffer or Blob of an asynchronous XHR.
        #expect(!Self.run([Self.page, upload], "kkjsbridge-ajaxhook").outcomes[1].has(.bodyChanged))
        var list = [Self.page, upload]
        ExchangeClassifier.classify(&list)
        let recording = Recording(name: "t", sourceFormat: "test", exchanges: list)
        let lossy = Preset(name: "imywebloader", summary: "", strategy: JSProxyStrategy(serialisesBinary: false))
        #expect(WebViewEmulator(preset: lossy).run(recording, provenance: CookieProvenance(recording: recording)).outcomes[1][.bodyChanged] == ["X1"])
        let image = Self.exchange(1, at: 1, "GET", "https://m.example.com/api/qr", headers: [("X-Requested-With", "XMLHttpRequest")], responseHeaders: [("Content-Type", "image/png")], responseBody: Data([0x89, 0x50]))
        #expect(Self.run([Self.page, image], "kkjsbridge-ajaxhook").outcomes[1][.responseChanged] == ["X2"])
        var fetch = Self.xhr(1, type: "application/octet-stream", body: "")
        fetch.request.body = Data([0xFF])
        fetch.resourceType = "fetch"
        #expect(!Self.run([Self.page, fetch], "kkjsbridge-ajaxhook").outcomes[1].has(.bodyChanged))
    }

    @Test("S5 reload-document: a document's 307 POST is reloaded as a GET without body, and the page follows")
    func reloadDocument() {
        let post = Self.exchange(1, at: 1, "POST", "https://m.example.com/pay", headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")], body: Data("a=1".utf8), status: 307, responseHeaders: [("Location", "/pay2")])
        let hop = Self.exchange(2, at: 1.05, "POST", "https://m.example.com/pay2", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Data("a=1".utf8))
        let result = Self.run([Self.page, post, hop], "netease-schemehandler")
        #expect(result.outcomes[2][.redirectReissued] == ["S5"] && result.outcomes[2].deliveredMethod == "GET")
        #expect(result.outcomes[1].pageURL == "https://m.example.com/pay2")
    }

    @Test("C1: the loadRequest Cookie header fixes the first document only; C7 and C8 carry cookies across")
    func cookieRecipes() throws {
        // A native login token: the first document carries it, a later XHR too.
        let doc = Self.exchange(0, at: 0, "GET", "https://h5.example.com/", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate"), ("Cookie", "token=t")])
        let api = Self.exchange(1, at: 0.3, "GET", "https://h5.example.com/api", headers: [("X-Requested-With", "XMLHttpRequest"), ("Cookie", "token=t")])
        var list = [doc, api]
        ExchangeClassifier.classify(&list)
        let recording = Recording(name: "t", sourceFormat: "test", exchanges: list)
        let provenance = CookieProvenance(recording: recording)
        let scenario = Scenario(preexisting: .native)
        let plain = WebViewEmulator(preset: Preset.named("plain")!, scenario: scenario).run(recording, provenance: provenance)
        #expect(plain.outcomes.map { $0.cookieDifferences.count } == [1, 1])
        // plain-cookie-sync: C1 fixes the document; the document-start script (C5) puts the
        // token in WebJar, so the XHR has it too.
        let synced = WebViewEmulator(preset: Preset.named("plain-cookie-sync")!, scenario: scenario).run(recording, provenance: provenance)
        #expect(synced.outcomes.allSatisfy { $0.cookieDifferences.isEmpty })
        // An HttpOnly token cannot be injected by script (C3): the XHR misses it.
        let httpOnly = Cookie(name: "token", value: "t", domain: "h5.example.com", httpOnly: true, creation: 0)
        let blocked = WebViewEmulator(preset: Preset.named("plain-cookie-sync")!, scenario: Scenario(nativeCookies: [httpOnly])).run(recording, provenance: provenance)
        #expect(blocked.outcomes[0].cookieDifferences.isEmpty)
        #expect(try #require(blocked.outcomes[1].cookieDifferences.first).rules.contains("C3"))
    }

    @Test("C8 sync hook: a script-set cookie reaches NativeJar at once; C9: for another site, accepted")
    func setterHook() {
        let doc = Self.exchange(0, at: 0, "GET", "https://shop.example.com/", headers: [("Accept", "text/html")])
        let js = Self.exchange(1, at: 0.1, "GET", "https://shop.example.com/app.js")
        let api = Self.exchange(2, at: 0.4, "GET", "https://shop.example.com/api", headers: [("X-Requested-With", "XMLHttpRequest"), ("Cookie", "ab=B")])
        #expect(Self.run([doc, js, api], "yanxuan-xcache").outcomes[2].cookieDifferences.isEmpty)  // C8 sync
        #expect(!Self.run([doc, js, api], "urlprotocol-naive").outcomes[2].cookieDifferences.isEmpty)  // J3 too slow
        let first = Self.exchange(2, at: 0.3, "GET", "https://tracker.other.net/x")
        let other = Self.exchange(3, at: 0.4, "GET", "https://tracker.other.net/p", headers: [("Cookie", "uid=1")])
        let cross = Self.run([doc, js, first, other], "yanxuan-xcache")
        #expect(cross.outcomes.flatMap(\.crossSiteCookies) == ["uid"])
    }

    @Test("D1: HTTPDNS sends to the IP in place of the URL's host, whatever its case, and leaves a URL without it as it was")
    func httpdnsRewritesTheHost() {
        #expect(HTTPDNS.replacingHost("api.example.com", with: "10.0.0.7", in: "https://API.Example.com:8443/v1?x=://api.example.com") == "https://10.0.0.7:8443/v1?x=://api.example.com")
        #expect(HTTPDNS.replacingHost("api.example.com", with: "10.0.0.7", in: "https://api.example.com") == "https://10.0.0.7")
        #expect(HTTPDNS.replacingHost("api.example.com", with: "10.0.0.7", in: "https://cdn.example.com/a") == "https://cdn.example.com/a")
        #expect(HTTPDNS.replacingHost("api.example.com", with: "10.0.0.7", in: "no scheme here") == "no scheme here")
        // The first `://`, past colons that start none.
        #expect(HTTPDNS.replacingHost("api.example.com", with: "10.0.0.7", in: "a:b:/c://api.example.com/x") == "a:b:/c://10.0.0.7/x")
        #expect(HTTPDNS.replacingHost("api.example.com", with: "10.0.0.7", in: "https:/") == "https:/")
        #expect(HTTPDNS.replacingHost("api.example.com", with: "10.0.0.7", in: "https://") == "https://")
        // Not after the scheme: the first occurrence anywhere, as a search would find it.
        #expect(HTTPDNS.replacingHost("api.example.com", with: "10.0.0.7", in: "https://cdn.example.com/r?to=https://api.example.com/") == "https://cdn.example.com/r?to=https://10.0.0.7/")
    }
}
