import CookieJar
import Foundation
import Testing
import TrafficModel
@testable import WebViewEmulation

/// The framework presets (rules A1-A3, N5, CAP1-TAU3), each behaviour on a
/// flow built in code.
@Suite("Framework presets")
struct FrameworkPresetTests {
    typealias M = MitigationTests
    static let api = "https://api.example.com"

    static func fetch(_ sequence: Int, _ method: String, _ url: String, type: String?, body: Data, extra: [(String, String)] = []) -> Exchange {
        var e = M.exchange(sequence, at: Double(sequence), method, url, headers: (type.map { [("Content-Type", $0)] } ?? []) + [("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")] + extra, body: body)
        e.resourceType = "fetch"
        return e
    }

    static func multipart(boundary: String) -> Data {
        Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nTrip\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
            + Data([0, 0xFF, 0x10]) + Data("\r\n--\(boundary)--\r\n".utf8)
    }

    @Test("CORS (A1): a page on the app origin reads a response only when the recording allows that origin")
    func cors() {
        let origin = "capacitor://localhost"
        func check(_ headers: [(String, String)], request: [(String, String)] = [], method: String = "GET", before: [Exchange] = []) -> CORSCheck.Reason? {
            let e = M.exchange(before.count, at: 1, method, Self.api + "/v1/x", headers: request, responseHeaders: headers)
            return CORSCheck.check(e, from: origin, in: before + [e])
        }
        #expect(check([]) == .noAllowOrigin)
        // No response recorded (status 0, E1): nothing to judge.
        let unanswered = M.exchange(0, at: 1, "GET", Self.api + "/v1/x", status: 0)
        #expect(CORSCheck.check(unanswered, from: origin, in: [unanswered]) == nil)
        #expect(check([("Access-Control-Allow-Origin", "https://m.example.com")]) == .otherOrigin("https://m.example.com"))
        // The origin the request named, from a server that varies on Origin: it picks the
        // allowed origin per request, so the app's is not in the recording; not an error.
        let web = [("Origin", "https://m.example.com")]
        let echoed = check([("Access-Control-Allow-Origin", "https://m.example.com"), ("Vary", "Accept-Encoding, Origin")], request: web)
        #expect(echoed == .chosenPerRequest("https://m.example.com") && echoed?.isUnverifiable == true)
        #expect(check([("Access-Control-Allow-Origin", "https://m.example.com")], request: web) == .otherOrigin("https://m.example.com"), "a fixed allowance names one origin")
        #expect(check([("Access-Control-Allow-Origin", "*")]) == nil)
        #expect(check([("Access-Control-Allow-Origin", "*")], request: [("Cookie", "a=1")]) == .wildcardWithCredentials)
        #expect(check([("Access-Control-Allow-Origin", origin)], request: [("Cookie", "a=1")]) == .noAllowCredentials)
        #expect(check([("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true")], request: [("Cookie", "a=1")]) == nil)
        // Not simple: a JSON body, a custom header, PUT; the recorded preflight answers it.
        let json = [("Content-Type", "application/json")]
        #expect(check([("Access-Control-Allow-Origin", origin)], request: json, method: "POST") == .preflightUnanswered(because: "the Content-Type application/json"))
        #expect(check([("Access-Control-Allow-Origin", origin)], request: [("X-Token", "t")]) == .preflightUnanswered(because: "the header X-Token"))
        let preflight = M.exchange(0, at: 0.5, "OPTIONS", Self.api + "/v1/x", headers: [("Access-Control-Request-Method", "PUT")], status: 204, responseHeaders: [("Access-Control-Allow-Origin", origin)])
        #expect(check([("Access-Control-Allow-Origin", origin)], method: "PUT", before: [preflight]) == nil)
        // Recorded in the app itself (Origin: the app's): the engine sent it after its
        // preflight passed, though the recording shows none; another origin's proves nothing.
        #expect(check([("Access-Control-Allow-Origin", origin)], request: json + [("Origin", origin)], method: "POST") == nil)
        #expect(check([("Access-Control-Allow-Origin", origin)], request: json + [("Origin", "https://m.example.com")], method: "POST") == .preflightUnanswered(because: "the Content-Type application/json"))
        // The engine's own headers never ask for a preflight.
        #expect(check([("Access-Control-Allow-Origin", origin)], request: [("User-Agent", "x"), ("Referer", "capacitor://localhost/"), ("Sec-Fetch-Mode", "cors"), ("Accept", "*/*")]) == nil)
        // Nor do the validators its HTTP cache adds to revalidate (ferguson.har's XHR).
        #expect(check([("Access-Control-Allow-Origin", "*")], request: [("If-Modified-Since", "Mon, 01 Jan 2018 00:00:00 GMT"), ("If-None-Match", "\"e1\"")]) == nil)
        // An EventSource's reconnection carries Last-Event-ID, which would ask a script's
        // request for a preflight; WebKit never preflights an EventSource (ES1).
        var stream = M.exchange(0, at: 1, "GET", Self.api + "/v1/events", headers: [("Accept", "text/event-stream"), ("Last-Event-ID", "7")], responseHeaders: [("Access-Control-Allow-Origin", origin)])
        #expect(CORSCheck.check(stream, from: origin, in: [stream]) == .preflightUnanswered(because: "the header Last-Event-ID"))
        stream.initiator = .eventSource
        #expect(CORSCheck.check(stream, from: origin, in: [stream]) == nil)
    }

    @Test("a recorded CORS preflight carries no cookies by the Fetch standard (E5): its lack shows no deletion, and no transport's cookies are compared on it")
    func preflightIsNoEvidence() {
        let page = M.exchange(0, at: 0, "GET", "https://m.shop.example/", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")],
            responseHeaders: [("Set-Cookie", "sid=1; Domain=shop.example; Path=/; Secure")])
        let cors = [("Access-Control-Allow-Origin", "https://m.shop.example"), ("Access-Control-Allow-Credentials", "true")]
        let preflight = M.exchange(1, at: 1, "OPTIONS", "https://api.shop.example/cart", headers: [("Access-Control-Request-Method", "POST"), ("Origin", "https://m.shop.example"), ("Sec-Fetch-Mode", "cors")], status: 204, responseHeaders: cors)
        let post = M.exchange(2, at: 1.1, "POST", "https://api.shop.example/cart", headers: [("Content-Type", "application/json"), ("Origin", "https://m.shop.example"), ("Cookie", "sid=1"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")],
            body: Data("{}".utf8), responseHeaders: cors)
        var list = [page, preflight, post]
        ExchangeClassifier.classify(&list)
        #expect(list[1].evidenceGap == .corsPreflight && list[2].evidenceGap == nil)
        let recording = Recording(name: "t", sourceFormat: "test", exchanges: list)
        let provenance = CookieProvenance(recording: recording)
        #expect(provenance.inferred[1].isEmpty && provenance.inferred[2].isEmpty)
        #expect(provenance.sent[2].map(\.kind) == [.serverSet])
        for preset in ["urlprotocol-naive", "capacitor-http", "plain"] {
            let result = M.run([page, preflight, post], preset)
            #expect(result.outcomes[1].cookieDifferences.isEmpty && result.outcomes[1].changes.contains { $0.rule == "E5" }, "\(preset)")
        }
        // Without E5 the preflight's lack read as a script's deletion and the POST's cookie as a rewrite.
        #expect(M.run([page, preflight, post], "capacitor-http").outcomes[2].cookieDifferences.allSatisfy { !$0.rules.contains("J3") })
    }

    @Test("capacitor: the first document is the bundled page (A3); API cookies are third-party from iOS 14 (A2), not before")
    func capacitorOrigin() {
        let login = M.exchange(1, at: 1, "POST", Self.api + "/login", headers: [("Content-Type", "text/plain"), ("Sec-Fetch-Mode", "cors"), ("X-Requested-With", "XMLHttpRequest")], body: Data("u=a".utf8),
            responseHeaders: [("Access-Control-Allow-Origin", "capacitor://localhost"), ("Access-Control-Allow-Credentials", "true"), ("Set-Cookie", "s=1; Path=/; Secure; SameSite=None")])
        let orders = M.exchange(2, at: 2, "GET", Self.api + "/orders", headers: [("Cookie", "s=1"), ("Sec-Fetch-Mode", "cors"), ("X-Requested-With", "XMLHttpRequest")],
            responseHeaders: [("Access-Control-Allow-Origin", "capacitor://localhost"), ("Access-Control-Allow-Credentials", "true")])
        let ios18 = M.run([M.page, login, orders], "capacitor")
        #expect(ios18.outcomes[0].changes.map(\.rule) == ["A3", "CAP1"])
        // ITP keeps every cookie off the request whatever the jars hold: A2 alone says why.
        #expect(ios18.outcomes[2].cookieDifferences.map(\.rules) == [["A2"]])
        #expect(ios18.outcomes[1].changes.contains { $0.rule == "A2" })  // its Set-Cookie not stored
        // X-Requested-With makes the requests preflighted; the recording holds no preflight.
        #expect(ios18.outcomes[2][.corsBlocked] == ["A1", "CAP1"])
        let ios13 = M.run([M.page, login, orders], "capacitor", ios: IOSVersion(13))
        #expect(ios13.outcomes[2].cookieDifferences.isEmpty)
        // CapacitorHttp carries both natively: no CORS, NativeJar's cookie (CAPH1, CAPH2).
        let http = M.run([M.page, login, orders], "capacitor-http")
        #expect(!http.outcomes[2].has(.corsBlocked) && http.outcomes[2].cookieDifferences.isEmpty)
    }

    @Test("CapacitorHttp converts each body type as its bridge does (CAPH3-CAPH5): an XHR's FormData lost from 6.0.0 to 7.4.2 only")
    func capacitorHttpBodies() throws {
        let url = "https://m.example.com/api/up"
        let boundary = "----WebKitFormBoundaryAbC"
        let form = Self.multipart(boundary: boundary)
        var xhrForm = M.xhr(1, url, type: "multipart/form-data; boundary=\(boundary)", body: "")
        xhrForm.request.body = form
        let http = Preset.named("capacitor-http")!
        for (version, rules) in [(SemanticVersion(5, 7, 8), ["CAPH5"]), (SemanticVersion(6, 0, 0), ["CAPH3"]), (SemanticVersion(7, 4, 2), ["CAPH3"]), (SemanticVersion(7, 4, 3), ["CAPH5"])] as [(SemanticVersion, [RuleID])] {
            #expect(M.run([M.page, xhrForm], try http.at(version).preset).outcomes[1][.bodyChanged] == rules, "\(version)")
        }
        #expect(M.run([M.page, xhrForm], "capacitor-http").outcomes[1][.bodyChanged] == ["CAPH5"])
        let fetchForm = M.run([M.page, Self.fetch(1, "POST", url, type: "multipart/form-data; boundary=\(boundary)", body: form)], "capacitor-http").outcomes[1]
        #expect(fetchForm[.bodyChanged] == ["CAPH5"] && fetchForm.bodyReencoded)
        let rebuilt = CapacitorHttpStrategy.rebuildMultipart(form, contentType: "multipart/form-data; boundary=\(boundary)")!
        #expect(String(decoding: rebuilt, as: UTF8.self).contains("filename=\"a.bin\"\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n"))
        #expect(rebuilt.range(of: Data([0, 0xFF, 0x10])) != nil)
        let binary = Data([0x89, 0x50, 0xFF, 0x00])
        // A Blob of JSON (the wire shows text; a scenario pins the kind).
        var list = [M.page, Self.fetch(1, "POST", url, type: "application/json", body: Data(#"{"a":1}"#.utf8))]
        ExchangeClassifier.classify(&list)
        list[1].bodyKind = .binary
        let recording = Recording(name: "t", sourceFormat: "test", exchanges: list)
        let asJSON = WebViewEmulator(preset: Preset.named("capacitor-http")!).run(recording, provenance: CookieProvenance(recording: recording)).outcomes[1]
        #expect(asJSON.deliveredBody == BodyFingerprint(Data("{}".utf8)) && asJSON[.bodyChanged] == ["CAPH4"])
        #expect(M.run([M.page, Self.fetch(1, "POST", url, type: "application/octet-stream", body: binary)], "capacitor-http").outcomes[1][.neverSent] == ["CAPH4"])
        #expect(M.run([M.page, Self.fetch(1, "POST", url, type: nil, body: binary)], "capacitor-http").outcomes[1][.bodyChanged] == ["CAPH4"])
        // Text crosses as it is.
        let text = M.run([M.page, M.xhr(1, url, body: #"{"a":1}"#)], "capacitor-http").outcomes[1]
        #expect(!text.has(.bodyChanged) && text.deliveredBody == BodyFingerprint(Data(#"{"a":1}"#.utf8)))
    }

    @Test("react-native-webview: a deletion by the page never reaches NativeJar (RNW2); plain's jars converge (J2)")
    func reactNativeLogout() {
        let first = M.exchange(0, at: 0, "GET", "https://mail.example.com/inbox", headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate"), ("Cookie", "sid=7")])
        let logout = M.xhr(1, "https://mail.example.com/api/logout", body: "{}", extra: [("Cookie", "sid=7")])
        var out = logout
        out.response.headers = [HeaderField("Set-Cookie", "sid=; Path=/; Max-Age=0")]
        let shared = M.run([first, out], "react-native-webview-shared-cookies")
        #expect(shared.divergences.map(\.name) == ["sid"] && shared.divergences[0].rules.contains("RNW2"))
        #expect(shared.outcomes[0].changes.contains { $0.rule == "RNW1" })
        #expect(M.run([first, out], "plain").divergences.isEmpty)
    }

    @Test("tauri: under the dev server a POST to tauri://localhost arrives empty (TAU2), in a release build whole; the HTTP plugin's jar is its own (TAU3)")
    func tauri() {
        let page = M.exchange(0, at: 0, "GET", "tauri://localhost/", headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")])
        let save = Self.fetch(1, "POST", "tauri://localhost/api/save", type: "application/json", body: Data("{}".utf8))
        var list = [page, save]
        ExchangeClassifier.classify(&list)
        let recording = Recording(name: "t", sourceFormat: "test", exchanges: list)
        var dev = Scenario()
        dev.devServer = true
        let result = WebViewEmulator(preset: Preset.named("tauri")!, scenario: dev).run(recording, provenance: CookieProvenance(recording: recording))
        #expect(result.outcomes[1][.bodyChanged] == ["TAU2"] && result.outcomes[1].deliveredBody.isEmpty)
        #expect(!M.run([page, save], "tauri").outcomes[1].has(.bodyChanged))
        #expect(TauriHTTPPluginStrategy().jarLink == .separate(rule: "TAU3"))
        let other = M.run([page, save], "capacitor")
        #expect(!other.outcomes[1].has(.bodyChanged))
    }

    @Test("N6: a cross-site POST navigation carries no cookie without SameSite on iOS 18.0 only; N5: never a Lax one; SameSite=None always")
    func laxByDefault() {
        let shop = "https://shop.example.com"
        let first = M.exchange(0, at: 0, "GET", shop + "/account", headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")], status: 200,
            responseHeaders: [("Set-Cookie", "state=1; Path=/; Secure"), ("Set-Cookie", "keep=2; Path=/; Secure; SameSite=None"), ("Set-Cookie", "lax=3; Path=/; Secure; SameSite=Lax")])
        let idp = M.exchange(1, at: 1, "GET", "https://id.example.net/authorize", headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")])
        let back = M.exchange(2, at: 2, "POST", shop + "/callback", headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate"), ("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", "state=1; keep=2; lax=3")], body: Data("code=1".utf8))
        let ios18 = M.run([first, idp, back], "plain", ios: IOSVersion(18, 0))
        let withheld = Dictionary(uniqueKeysWithValues: ios18.outcomes[2].cookieDifferences.map { ($0.name, $0.rules) })
        #expect(withheld == ["state": ["N6"], "lax": ["N5"]])
        for later in [IOSVersion(18, 1), IOSVersion(26), IOSVersion.newest] {
            #expect(M.run([first, idp, back], "plain", ios: later).outcomes[2].cookieDifferences.map(\.name) == ["lax"], "iOS \(later)")
        }
        #expect(M.run([first, idp, back], "plain", ios: IOSVersion(17)).outcomes[2].cookieDifferences.map(\.name) == ["lax"])
    }

    @Test("flutter_inappwebview: WebKit still sends (FIA1); before 5.2.0 fetch loses the Content-Type WebKit derived (FIA2), from 5.2.0 only a URLSearchParams' (FIA3); a first launch ignores Set-Cookie under Ionic WebView (ION3)")
    func flutterAndIonic() throws {
        let url = "https://m.example.com/api/up"
        let boundary = "----WebKitFormBoundaryAbC"
        let upload = [M.page, Self.fetch(1, "POST", url, type: "multipart/form-data; boundary=\(boundary)", body: Self.multipart(boundary: boundary))]
        let old = try Preset.named("flutter-inappwebview-intercept")!.at(SemanticVersion(5, 1, 0)).preset
        let form = M.run(upload, old).outcomes[1]
        #expect(form.removedHeaders == [HeaderAddition(name: "Content-Type", rule: "FIA2")] && !form.has(.bodyChanged))
        #expect(form.changes.contains { $0.rule == "FIA1" })
        #expect(M.run(upload, "flutter-inappwebview-intercept").outcomes[1].removedHeaders.isEmpty)
        let params = [M.page, Self.fetch(1, "POST", url, type: "application/x-www-form-urlencoded;charset=UTF-8", body: Data("a=1".utf8))]
        #expect(M.run(params, "flutter-inappwebview-intercept").outcomes[1].removedHeaders == [HeaderAddition(name: "Content-Type", rule: "FIA3")])
        #expect(M.run(params, old).outcomes[1].removedHeaders == [HeaderAddition(name: "Content-Type", rule: "FIA2")])
        // A type the page wrote itself survives the Uint8Array.
        let json = M.run([M.page, Self.fetch(1, "POST", url, type: "application/json", body: Data("{}".utf8))], "flutter-inappwebview-intercept").outcomes[1]
        #expect(json.removedHeaders.isEmpty)
        let xhrForm = M.run([M.page, M.xhr(1, url, type: "multipart/form-data; boundary=\(boundary)", body: "")], "flutter-inappwebview-intercept").outcomes[1]
        #expect(xhrForm.removedHeaders.isEmpty)

        let login = M.exchange(1, at: 1, "POST", "https://m.example.com/login", headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate"), ("Content-Type", "application/x-www-form-urlencoded")], body: Data("u=a".utf8), status: 302,
            responseHeaders: [("Location", "/home"), ("Set-Cookie", "s=1; Path=/; Secure")])
        let home = M.exchange(2, at: 2, "GET", "https://m.example.com/home", headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate"), ("Cookie", "s=1")])
        var list = [M.page, login, home]
        ExchangeClassifier.classify(&list)
        let recording = Recording(name: "t", sourceFormat: "test", exchanges: list)
        var firstLaunch = Scenario()
        firstLaunch.firstLaunch = true
        let ionic = WebViewEmulator(preset: Preset.named("ionic-webview")!, scenario: firstLaunch).run(recording, provenance: CookieProvenance(recording: recording))
        #expect(ionic.outcomes[2].cookieDifferences.first?.rules.contains("ION3") == true)
        #expect(WebViewEmulator(preset: Preset.named("ionic-webview")!).run(recording, provenance: CookieProvenance(recording: recording)).outcomes[2].cookieDifferences.isEmpty)
    }

    @Test("capacitor: the page's own scripts, stylesheets and images are files of the bundle (A4); its API calls meet A2, another site's files N4 as in any web view")
    func bundledFiles() {
        func load(_ sequence: Int, _ url: String, dest: String, cookie: String? = "s=1", setCookie: String? = nil) -> Exchange {
            M.exchange(sequence, at: Double(sequence), "GET", url, headers: [("Sec-Fetch-Dest", dest), ("Sec-Fetch-Mode", "no-cors")] + (cookie.map { [("Cookie", $0)] } ?? []),
                responseHeaders: setCookie.map { [("Set-Cookie", $0)] } ?? [])
        }
        let page = M.exchange(0, at: 0, "GET", "https://m.example.com/cart", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate"), ("Cookie", "s=1")])
        let script = load(1, "https://m.example.com/assets/app.js", dest: "script", setCookie: "t=9; Path=/")
        let style = load(2, "https://m.example.com/assets/app.css", dest: "style")
        let image = load(3, "https://m.example.com/img/logo.png", dest: "image")
        let cdn = load(4, "https://cdn.example.net/lib.js", dest: "script")
        let api = M.exchange(5, at: 5, "GET", "https://m.example.com/api/cart", headers: [("Cookie", "s=1; t=9"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("X-Requested-With", "XMLHttpRequest")],
            responseHeaders: [("Access-Control-Allow-Origin", "capacitor://localhost"), ("Access-Control-Allow-Credentials", "true")])
        let result = M.run([page, script, style, image, cdn, api], "capacitor")
        for i in 1...3 {
            #expect(result.outcomes[i].changes.map(\.rule) == ["A4"])
            #expect(result.outcomes[i].cookieDifferences.isEmpty)
        }
        // Another site's script is third-party to the recorded page already: ITP keeps its
        // cookie off in any web view (N4), the app's scheme aside.
        #expect(result.outcomes[4].cookieDifferences.first?.rules == ["N4"])
        // The bundled script's Set-Cookie never happened: the API call misses `t` as well as the third-party `s`.
        #expect(result.outcomes[5].cookieDifferences.map(\.name).sorted() == ["s", "t"])
        #expect(result.outcomes[5].cookieDifferences.allSatisfy { $0.rules.contains("A2") })
        // Without an app page every load goes to the server as recorded, but for the other site's.
        let plain = M.run([page, script, style, image, cdn, api], "plain")
        #expect(plain.outcomes.indices.filter { !plain.outcomes[$0].cookieDifferences.isEmpty } == [4])
        #expect(plain.outcomes[4].cookieDifferences.first?.rules == ["N4"])

        // A recording without the page's load (a cache hit, a capture begun late): the page
        // is the one its requests' Referer names, and its own files are still the bundle's.
        func referred(_ e: Exchange, _ sequence: Int) -> Exchange {
            var e = e
            e.sequence = sequence
            e.request.headers.append(HeaderField("Referer", "https://m.example.com/cart"))
            return e
        }
        let pageless = M.run([referred(style, 0), referred(image, 1), referred(cdn, 2)], "capacitor")
        #expect(pageless.outcomes[0].changes.map(\.rule) == ["A4"] && pageless.outcomes[1].changes.map(\.rule) == ["A4"])
        #expect(pageless.outcomes[2].cookieDifferences.first?.rules == ["N4"])
    }

    @Test("capacitor-http-cookies: a document.cookie write lands in NativeJar and reaches WebJar by the native setter's asynchronous copy (CAPC1, CAPC2)")
    func capacitorCookiesCopyBack() {
        // A server page, its bridged XHR without `js`, then two images WebKit loads with it:
        // the page's script wrote it between the XHR and the first image.
        let help = M.exchange(1, at: 1, "GET", "https://m.example.com/help", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")])
        let api = M.exchange(2, at: 2, "GET", "https://m.example.com/api/help", headers: [("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("X-Requested-With", "XMLHttpRequest")])
        func image(_ sequence: Int) -> Exchange {
            M.exchange(sequence, at: Double(sequence), "GET", "https://m.example.com/img/\(sequence).png", headers: [("Sec-Fetch-Dest", "image"), ("Sec-Fetch-Mode", "no-cors"), ("Cookie", "js=1")])
        }
        let result = M.run([M.page, help, api, image(3), image(4)], "capacitor-http-cookies")
        // Right after the write the copy may not have landed: only if the script wrote late.
        let first = result.outcomes[3].cookieDifferences
        #expect(first.count == 1 && first[0].name == "js" && !first[0].certain)
        #expect(first.first.map { $0.rules.contains("CAPC1") && $0.rules.contains("CAPC2") } == true)
        #expect(first.first.map { $0.likelihood > 0 && $0.likelihood < 0.1 } == true)
        // A second later WebJar holds it.
        #expect(result.outcomes[4].cookieDifferences.isEmpty)
    }

    @Test("capacitor-http-cookies: a deletion stays in its own jar (CAPC3): the script's reaches NativeJar only, a WebKit response's WebJar only")
    func capacitorCookiesDeletionsStay() {
        // A server page sets `pref`; an image carries it; the script then deletes it (the
        // next image and the bridged XHR go without it).
        let help = M.exchange(1, at: 1, "GET", "https://m.example.com/help", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")],
            responseHeaders: [("Set-Cookie", "pref=1; Path=/")])
        func image(_ sequence: Int, cookie: String?) -> Exchange {
            M.exchange(sequence, at: Double(sequence), "GET", "https://m.example.com/img/\(sequence).png", headers: [("Sec-Fetch-Dest", "image"), ("Sec-Fetch-Mode", "no-cors")] + (cookie.map { [("Cookie", $0)] } ?? []))
        }
        let api = M.exchange(4, at: 4, "GET", "https://m.example.com/api/help", headers: [("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("X-Requested-With", "XMLHttpRequest")])
        let deleted = M.run([M.page, help, image(2, cookie: "pref=1"), image(3, cookie: nil), api], "capacitor-http-cookies")
        let kept = deleted.outcomes[3].cookieDifferences
        #expect(kept.map(\.name) == ["pref"] && kept[0].recordedValue == nil && kept[0].rules.contains("CAPC3"))
        #expect(kept.first?.explanation.contains("no deletion reaches WebJar") == true)
        #expect(deleted.outcomes[4].cookieDifferences.isEmpty)
        // Without the cookie plugin the page's own setter deletes it from WebJar.
        #expect(M.run([M.page, help, image(2, cookie: "pref=1"), image(3, cookie: nil), api], "capacitor-http").outcomes[3].cookieDifferences.isEmpty)

        // The server expires it on a page load WebKit makes: NativeJar, which CapacitorHttp reads, keeps it.
        let logout = M.exchange(3, at: 3, "GET", "https://m.example.com/bye", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate"), ("Cookie", "pref=1")],
            responseHeaders: [("Set-Cookie", "pref=; Path=/; Max-Age=0")])
        let expired = M.run([M.page, help, image(2, cookie: "pref=1"), logout, api], "capacitor-http-cookies").outcomes[4].cookieDifferences
        #expect(expired.map(\.name) == ["pref"] && expired[0].rules.contains("CAPC3"))
        // Without the cookie plugin the deletion reaches NativeJar by the system's synchronisation,
        // ten seconds on (J2; Capacitor's own observer never fires, CAP3): a second later it has not.
        let observed = M.run([M.page, help, image(2, cookie: "pref=1"), logout, api], "capacitor-http").outcomes[4].cookieDifferences
        #expect(observed.map(\.name) == ["pref"] && observed[0].rules.contains("J2") && !observed[0].rules.contains("CAPC3"), "\(observed.map(\.rules))")
    }

    @Test("no Capacitor release keeps its cookie observer alive (CAP3): the jars link as the system links them, the cookie plugin's holding deletions (CAPC3); a preset file for an app that keeps one says cookieObserver true")
    func capacitorObserverOnTheShell() throws {
        for name in ["capacitor", "capacitor-http"] { #expect(Preset.named(name)!.hooks.jarLink == .system, "\(name)") }
        #expect(Preset.named("capacitor-http")!.citedRules.contains("CAP3"))
        #expect(Preset.named("capacitor-http-cookies")!.hooks.jarLink == .systemHolding(deletions: .eitherWay("CAPC3")))
        let file = try PresetFile.load(Data(#"[{"name": "ours", "app": {"framework": "capacitor"}, "strategy": {"kind": "capacitor-http"}}, {"name": "kept", "app": {"framework": "capacitor", "cookieObserver": true}, "strategy": {"kind": "capacitor-http"}}]"#.utf8), file: "app.json")
        #expect(file[0].hooks.jarLink == .system && file[0].app == AppShell.capacitor)
        #expect(file[1].hooks.jarLink == AppShell.capacitorCookieObserver)
        #expect(throws: PresetFile.Error.self) { try PresetFile.load(Data(#"[{"name": "t", "app": {"framework": "tauri", "cookieObserver": true}, "strategy": {"kind": "native"}}]"#.utf8), file: "t.json") }
    }

    @Test("capacitor-http: a CapacitorHttp call 0.2 s after the page's document.cookie write goes without it (J3, CAP3), on the simulator too; an app that keeps the observer alive sends it")
    func capacitorCookieObserver() throws {
        // A server page's script writes `theme`; CapacitorHttp's XHR 0.2 s later reads NativeJar.
        let help = M.exchange(1, at: 1, "GET", "https://m.example.com/help", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")])
        let api = M.exchange(2, at: 1.2, "GET", "https://m.example.com/api/help", headers: [("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("X-Requested-With", "XMLHttpRequest"), ("Cookie", "theme=dark")])
        for simulator in [false, true] {
            let outcome = M.run([M.page, help, api], "capacitor-http", simulator: simulator).outcomes[2]
            #expect(outcome.cookieDifferences.map(\.name) == ["theme"] && outcome.cookieDifferences[0].rules.contains("J3"), "simulator: \(simulator)")
            #expect(outcome.changes.contains { $0.rule == "CAP3" })
        }
        let kept = try PresetFile.load(Data(#"[{"name": "kept", "app": {"framework": "capacitor", "cookieObserver": true}, "strategy": {"kind": "capacitor-http"}}]"#.utf8), file: "kept.json")[0]
        let withObserver = M.run([M.page, help, api], kept, simulator: true).outcomes[2]
        #expect(withObserver.cookieDifferences.isEmpty && withObserver.sentCookies.map(\.name) == ["theme"])
    }

    @Test("capacitor: the bridge is a main-frame user script (CAP2): an iframe's XHR and document.cookie are WebKit's own")
    func bridgeInMainFrameOnly() throws {
        let frame = M.exchange(1, at: 1, "GET", "https://m.example.com/frame", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "iframe"), ("Sec-Fetch-Mode", "navigate"), ("Referer", "https://m.example.com/cart")])
        let boundary = "----WebKitFormBoundaryAbC"
        // An XHR posting FormData, from the iframe (its script also wrote `f`) and from the main frame.
        var fromFrame = M.xhr(2, "https://m.example.com/api/up", type: "multipart/form-data; boundary=\(boundary)", body: "", extra: [("Referer", "https://m.example.com/frame"), ("Cookie", "f=1")])
        fromFrame.request.body = Self.multipart(boundary: boundary)
        var fromPage = M.xhr(2, "https://m.example.com/api/up", type: "multipart/form-data; boundary=\(boundary)", body: "")
        fromPage.request.body = Self.multipart(boundary: boundary)
        let inFrame = M.run([M.page, frame, fromFrame], "capacitor-http").outcomes[2]
        #expect(inFrame.changes.contains { $0.rule == "CAP2" })
        #expect(!inFrame.has(.bodyChanged))
        // In the main frame the bridge of 6.0.0 to 7.4.2 gives the FormData no Content-Type (CAPH3).
        #expect(M.run([M.page, frame, fromPage], try Preset.named("capacitor-http")!.at(SemanticVersion(7, 4, 2)).preset).outcomes[2][.bodyChanged] == ["CAPH3"])
        // CapacitorCookies' setter is not in the iframe either (no CAPC1): what keeps `f` off the
        // iframe's request is ITP, the frame's server being third-party to the app's page (A2).
        let cookies = M.run([M.page, frame, fromFrame], "capacitor-http-cookies").outcomes[2].cookieDifferences
        #expect(cookies.map(\.name) == ["f"] && cookies.allSatisfy { $0.rules.first == "A2" && !$0.rules.contains("CAPC1") }, "\(cookies)")
    }

    @Test("cordova: a script's cookie on the app page is lost (CDV2); on a page the web view then loads from a server, document.cookie works")
    func cordovaScriptCookiesOnlyOnAppPage() {
        // The app page's script sets `a`; the page then goes to a server page whose script sets `b`.
        let onApp = M.exchange(1, at: 1, "GET", "https://m.example.com/api/cart", headers: [("Cookie", "a=1"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("X-Requested-With", "XMLHttpRequest")])
        let serverPage = M.exchange(2, at: 2, "GET", "https://m.example.com/help", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate"), ("Cookie", "a=1")])
        let onServer = M.exchange(3, at: 3, "GET", "https://m.example.com/api/help", headers: [("Cookie", "a=1; b=2"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("X-Requested-With", "XMLHttpRequest")])
        for preset in ["cordova-schemehandler", "ionic-webview"] {
            // Before iOS 14, where ITP (A2) does not keep the API's cookies off the app page's
            // requests anyway and the lost write is the only cause.
            let result = M.run([M.page, onApp, serverPage, onServer], preset, ios: IOSVersion(13))
            let lostRule: RuleID = preset == "cordova-schemehandler" ? "CDV2" : "ION2"
            #expect(result.outcomes[1].cookieDifferences.map(\.name) == ["a"], "\(preset)")
            #expect(result.outcomes[1].cookieDifferences.first?.rules.contains(lostRule) == true, "\(preset)")
            // `a` was never stored, so it is still missing; `b`, written on the server's page, is sent.
            #expect(result.outcomes[3].cookieDifferences.map(\.name) == ["a"], "\(preset)")
        }
    }

    @Test("S5 spi: below iOS 15 the handler's session follows a 307 with the body it had; from iOS 15 WebKit follows")
    func redirectSPIByVersion() {
        var blob = M.exchange(1, at: 1, "POST", "https://m.example.com/api/up", headers: [("Content-Type", "application/octet-stream"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")], body: Data([0xFF, 0, 1]), status: 307, responseHeaders: [("Location", "/api/up2")])
        blob.resourceType = "fetch"
        var hop = M.exchange(2, at: 1.1, "POST", "https://m.example.com/api/up2", headers: [("Content-Type", "application/octet-stream"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")], body: Data([0xFF, 0, 1]))
        hop.resourceType = "fetch"
        var list = [M.page, blob, hop]
        ExchangeClassifier.classify(&list)
        let recording = Recording(name: "t", sourceFormat: "test", exchanges: list)
        let spi = Preset(name: "spi", summary: "", strategy: SchemeHandlerStrategy(redirects: .engine))
        func run(_ ios: IOSVersion) -> Outcome {
            WebViewEmulator(preset: spi, profile: Profile(ios: ios)).run(recording, provenance: CookieProvenance(recording: recording)).outcomes[2]
        }
        // The Blob was lost at the first hop (S2); iOS 14's session re-sends what it had.
        #expect(run(IOSVersion(14))[.bodyChanged] == ["S2", "S5"] && run(IOSVersion(14)).deliveredBody.isEmpty)
        #expect(run(IOSVersion(15))[.bodyChanged].isEmpty)
    }

    @Test("`capacitor*` selects the family, in matrix order; the preset files of docs/presets load")
    func globsAndExamples() throws {
        #expect(Preset.matching("capacitor*").map(\.name) == ["capacitor", "capacitor-http", "capacitor-http-cookies"])
        #expect(Preset.matching("tauri").map(\.name) == ["tauri"])
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/presets")
        let files = try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(files == ["capacitor.json", "cordova.json", "flutter.json", "react-native.json", "tauri.json"])
        var loaded: [Preset] = []
        for file in files { loaded += try PresetFile.load(Data(contentsOf: docs.appendingPathComponent(file)), file: file) }
        let byName = Dictionary(uniqueKeysWithValues: loaded.map { ($0.name, $0) })
        #expect(byName["our-capacitor-app"]?.app?.origin == "ionic://app.example.com")
        #expect(byName["our-capacitor-remote"]?.app == nil)
        // CDV1: cordova-ios falls back to app:// when the scheme is https.
        #expect(byName["our-cordova-app"]?.app?.origin == "app://shop")
        #expect(byName["our-flutter-app"]?.profile(over: Profile()).ios == IOSVersion(17))
        #expect(byName["our-tauri-app"]?.app?.handlerBodies == .postLost)
    }
}
