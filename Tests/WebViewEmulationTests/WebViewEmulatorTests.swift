import CookieJar
import Foundation
import Testing
import TrafficModel
@testable import WebViewEmulation

/// Rules checked on small flows built in code.
@Suite("WebView emulator rules")
struct WebViewEmulatorTests {
    static let t0 = 1_800_000_000.0

    static func exchange(_ sequence: Int, at offset: Double, _ method: String, _ url: String, headers: HeaderList = [], body: String = "", status: Int = 200, responseHeaders: HeaderList = []) -> Exchange {
        Exchange(sequence: sequence, startedAt: t0 + offset, duration: 0.02,
            request: RecordedRequest(method: method, url: url, headers: headers, body: Data(body.utf8)),
            response: RecordedResponse(status: status, headers: responseHeaders))
    }

    static func recording(_ exchanges: [Exchange]) -> Recording {
        var list = exchanges
        ExchangeClassifier.classify(&list)
        return Recording(name: "t", sourceFormat: "test", exchanges: list)
    }

    static func run(_ recording: Recording, _ preset: String, profile: Profile = Profile(), scenario: Scenario = Scenario()) -> EmulationResult {
        WebViewEmulator(preset: Preset.named(preset)!, profile: profile, scenario: scenario).run(recording, provenance: CookieProvenance(recording: recording))
    }

    /// A 307 answering a POST: the method and body must be kept on the next hop.
    static var post307: Recording {
        recording([
            exchange(0, at: 0, "POST", "https://a.example/pay", headers: [HeaderField("Content-Type", "application/json"), HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Sec-Fetch-Mode", "navigate")], body: #"{"amount":5}"#, status: 307, responseHeaders: [HeaderField("Location", "https://a.example/pay2")]),
            exchange(1, at: 0.05, "POST", "https://a.example/pay2", headers: [HeaderField("Content-Type", "application/json")], body: #"{"amount":5}"#),
        ])
    }

    @Test("P2: a third-party iframe's document and its own loads go through NSURLProtocol as a third-party page; a first-party iframe's image on another site's CDN is the first-party page's")
    func thirdPartyPages() {
        func doc(_ extra: [HeaderField] = []) -> HeaderList { HeaderList([HeaderField("Accept", "text/html"), HeaderField("Sec-Fetch-Dest", "iframe"), HeaderField("Sec-Fetch-Mode", "navigate")] + extra) }
        func image(_ referer: String) -> HeaderList { [HeaderField("Accept", "image/webp,*/*;q=0.8"), HeaderField("Sec-Fetch-Dest", "image"), HeaderField("Referer", referer)] }
        let flow = Self.recording([
            Self.exchange(0, at: 0, "GET", "https://www.news.example/", headers: [HeaderField("Accept", "text/html"), HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Sec-Fetch-Mode", "navigate")]),
            Self.exchange(1, at: 0.1, "GET", "https://ads.example/frame", headers: doc([HeaderField("Referer", "https://www.news.example/")])),
            Self.exchange(2, at: 0.2, "GET", "https://cdn.ads.example/banner.png", headers: image("https://ads.example/frame")),
            Self.exchange(3, at: 0.3, "GET", "https://www.news.example/teaser", headers: doc([HeaderField("Referer", "https://www.news.example/")])),
            Self.exchange(4, at: 0.4, "GET", "https://img.cdn.example/teaser.jpg", headers: image("https://www.news.example/teaser")),
        ])
        let result = Self.run(flow, "urlprotocol-naive")
        #expect(result.outcomes.map { $0[.thirdPartyIntercepted] == ["P2"] } == [false, true, true, false, false], "\(result.outcomes.map { $0[.thirdPartyIntercepted] })")
    }

    @Test("A2: from the app's page, an iframe's requests to a server are third-party too: ITP judges by the top-level site, not by the frame")
    func iframeRequestsThirdPartyToTheApp() {
        let flow = Self.recording([
            Self.exchange(0, at: 0, "GET", "https://www.news.example/", headers: [HeaderField("Accept", "text/html"), HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Sec-Fetch-Mode", "navigate")]),
            Self.exchange(1, at: 0.1, "GET", "https://panel.example/frame.html", headers: [HeaderField("Accept", "text/html"), HeaderField("Sec-Fetch-Dest", "iframe"), HeaderField("Sec-Fetch-Mode", "navigate"), HeaderField("Referer", "https://www.news.example/")]),
            Self.exchange(2, at: 0.2, "GET", "https://ads.news.example/pixel.gif", headers: [HeaderField("Accept", "image/webp,*/*;q=0.8"), HeaderField("Sec-Fetch-Dest", "image"), HeaderField("Referer", "https://panel.example/frame.html"), HeaderField("Cookie", "member=1")]),
        ])
        let result = Self.run(flow, "capacitor")
        #expect(result.outcomes[2].cookieDifferences.map(\.name) == ["member"])
        #expect(result.outcomes[2].cookieDifferences.first?.rules.first == "A2", "\(result.outcomes[2].cookieDifferences)")
    }

    @Test("A2 judges the app page's requests, not those of a page the recording never loaded (another tab): its top-level site is unknown")
    func unseenPagesNotJudgedByA2() {
        func image(_ url: String, referer: String) -> HeaderList {
            [HeaderField("Accept", "image/webp,*/*;q=0.8"), HeaderField("Sec-Fetch-Dest", "image"), HeaderField("Referer", referer), HeaderField("Cookie", "member=1")]
        }
        // No document: the page is the one the first request names.
        let flow = Self.recording([
            Self.exchange(0, at: 0, "GET", "https://api.tube.example/feed", headers: [HeaderField("Accept", "*/*"), HeaderField("Sec-Fetch-Dest", "empty"), HeaderField("Referer", "https://www.tube.example/")]),
            Self.exchange(1, at: 0.1, "GET", "https://www.tutorials.example/logo.png", headers: image("https://www.tutorials.example/lesson", referer: "https://www.tutorials.example/lesson")),
            Self.exchange(2, at: 0.2, "GET", "https://cdn.ads.example/p.gif", headers: image("https://cdn.ads.example/p.gif", referer: "https://www.tube.example/")),
        ])
        let result = Self.run(flow, "capacitor")
        #expect(result.outcomes[1].cookieDifferences.isEmpty, "another tab's image: \(result.outcomes[1].cookieDifferences)")
        #expect(result.outcomes[2].cookieDifferences.map(\.name) == ["member"], "the page's own image is judged: \(result.outcomes[2].cookieDifferences)")
    }

    @Test("C5: the document-start script's writes are document.cookie writes: an older value it writes over a fresh Set-Cookie goes stale in both jars (J3), and an HttpOnly cookie is not replaced")
    func injectionIsAScriptWrite() {
        let page = HeaderList([HeaderField("Accept", "text/html"), HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Sec-Fetch-Mode", "navigate"), HeaderField("Cookie", "tok=old; sid=s0")])
        func api(_ path: String) -> HeaderList { [HeaderField("Accept", "*/*"), HeaderField("Sec-Fetch-Dest", "empty"), HeaderField("Referer", "https://shop.example/"), HeaderField("Cookie", "tok=new; sid=s1")] }
        let flow = Self.recording([
            Self.exchange(0, at: 0, "GET", "https://shop.example/", headers: page, responseHeaders: [HeaderField("Set-Cookie", "tok=new; Path=/"), HeaderField("Set-Cookie", "sid=s1; Path=/; HttpOnly")]),
            Self.exchange(1, at: 0.2, "GET", "https://shop.example/api", headers: api("/api")),
            Self.exchange(2, at: 5, "GET", "https://shop.example/more", headers: api("/more")),
        ])
        let result = Self.run(flow, "plain-cookie-sync")
        #expect(result.outcomes[1].cookieDifferences.map(\.name) == ["tok"], "sid is HttpOnly: the script cannot replace it; \(result.outcomes[1].cookieDifferences)")
        #expect(result.outcomes[1].cookieDifferences.first?.sentValue == "old")
        #expect(result.divergences.isEmpty, "the injected value reached NativeJar too: \(result.divergences)")
    }

    @Test("J2: a page's deletion of a cookie its jar does not hold yet (NSURLProtocol's Set-Cookie still on its way from NativeJar) changes nothing, so no deletion crosses: NativeJar keeps sending it, and the jars agree at the end")
    func deletionOfUnheldCookie() {
        func image(_ cookie: String?) -> HeaderList {
            HeaderList([HeaderField("Accept", "image/webp,*/*"), HeaderField("Sec-Fetch-Dest", "image"), HeaderField("Referer", "https://a.example/")] + (cookie.map { [HeaderField("Cookie", $0)] } ?? []))
        }
        let flow = Self.recording([
            Self.exchange(0, at: 0, "GET", "https://a.example/", headers: [HeaderField("Accept", "text/html"), HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Sec-Fetch-Mode", "navigate")],
                responseHeaders: [HeaderField("Set-Cookie", "beacon=1; Path=/")]),
            Self.exchange(1, at: 0.1, "GET", "https://a.example/a.png", headers: image("beacon=1")),
            // The page's script read the cookie and deleted it before this request.
            Self.exchange(2, at: 0.2, "GET", "https://a.example/b.png", headers: image(nil)),
            Self.exchange(3, at: 8, "GET", "https://a.example/c.png", headers: image(nil)),
        ])
        let result = Self.run(flow, "urlprotocol-naive")
        let late = result.outcomes[3].cookieDifferences
        #expect(late.map(\.name) == ["beacon"] && !late[0].rules.contains("J2"), "NativeJar still holds it: \(late)")
        #expect(result.divergences.isEmpty, "both jars hold it at the end: \(result.divergences)")
        #expect(Self.run(flow, "plain").outcomes.allSatisfy { $0.cookieDifferences.isEmpty })
    }

    @Test("P4 forwarded: the 307 hop is re-issued across IPC without its body")
    func forwarded307() {
        let result = Self.run(Self.post307, "urlprotocol-forwarded")
        #expect(result.outcomes[1][.redirectReissued] == ["P4", "P1"])
        #expect(result.outcomes[1].deliveredBody == .empty)
        #expect(result.outcomes[0].pageURL == "https://a.example/pay2")
    }

    @Test("P4 silent: the session re-sends the body it had at the 307, which P1 already emptied")
    func silent307() {
        let result = Self.run(Self.post307, "urlprotocol-naive")
        #expect(result.outcomes[1][.bodyChanged] == ["P1", "P4"])
        #expect(!result.outcomes[1].has(.redirectReissued))
        #expect(result.outcomes[0].pageURL == "https://a.example/pay")
    }

    @Test("native: a 307 POST hop keeps its body (N1)")
    func native307() {
        let result = Self.run(Self.post307, "plain")
        #expect(result.outcomes.allSatisfy { !$0.has(.bodyChanged) && !$0.has(.redirectReissued) })
        #expect(result.outcomes[1].deliveredBody == BodyFingerprint(Data(#"{"amount":5}"#.utf8)))
    }

    /// A native login: the first request already carries a cookie nothing set.
    static var firstRequestCookie: Recording {
        recording([
            exchange(0, at: 0, "GET", "https://h5.example.com/", headers: [HeaderField("Accept", "text/html"), HeaderField("Cookie", "token=abc")]),
            exchange(1, at: 3, "GET", "https://h5.example.com/api/me", headers: [HeaderField("X-Requested-With", "XMLHttpRequest"), HeaderField("Cookie", "token=abc")]),
        ])
    }

    @Test("N3: a cookie only in NativeJar at start is not sent by a plain web view; J1 brings it later")
    func firstRequest() throws {
        let provenance = CookieProvenance(recording: Self.firstRequestCookie)
        #expect(provenance.sent[0].map(\.kind) == [.preExisting])
        let result = Self.run(Self.firstRequestCookie, "plain", scenario: Scenario(preexisting: .native))
        let missing = try #require(result.outcomes[0].cookieDifferences.first)
        #expect(missing.name == "token" && missing.sentValue == nil)
        #expect(missing.rules.contains("N3") && missing.rules.contains("J1"))
        // Three seconds later J1 (1 s) has copied it into WebJar.
        #expect(result.outcomes[1].cookieDifferences.isEmpty)
        // With the cookie in both jars nothing is missing.
        #expect(Self.run(Self.firstRequestCookie, "plain").outcomes.allSatisfy { $0.cookieDifferences.isEmpty })
        // NSURLProtocol reads NativeJar, so the native login works there (P3).
        #expect(Self.run(Self.firstRequestCookie, "urlprotocol-naive", scenario: Scenario(preexisting: .native)).outcomes.allSatisfy { $0.cookieDifferences.isEmpty })
    }

    /// The app's native code logs in (NSURLSession's User-Agent), then the web view opens
    /// the account page.
    static var nativeLogin: Recording {
        let native = HeaderField("User-Agent", "BankApp/5.2 CFNetwork/1568.100.1 Darwin/24.0.0")
        return recording([
            exchange(0, at: 0, "POST", "https://api.bank.example/v1/login", headers: [native, HeaderField("Content-Type", "application/json")], body: #"{"user":"alice"}"#,
                responseHeaders: [HeaderField("Set-Cookie", "sid=c4; Domain=bank.example; Path=/; Secure")]),
            exchange(1, at: 0.4, "GET", "https://m.bank.example/account", headers: [HeaderField("Accept", "text/html"), HeaderField("Cookie", "sid=c4")]),
            exchange(2, at: 1.8, "GET", "https://m.bank.example/api/balance", headers: [HeaderField("X-Requested-With", "XMLHttpRequest"), HeaderField("Cookie", "sid=c4")]),
        ])
    }

    @Test("NC1: native code's request goes as recorded under every preset, and its Set-Cookie lands in NativeJar, which a plain web view learns only through J1")
    func nativeRequest() throws {
        let recording = Self.nativeLogin
        #expect(recording.exchanges[0].initiator == .native)
        for preset in Preset.builtIn {
            let result = WebViewEmulator(preset: preset).run(recording, provenance: CookieProvenance(recording: recording))
            let login = result.outcomes[0]
            // No strategy touches it: NSURLProtocol would have emptied this POST's body (P1).
            #expect(login.deliveredBody == recording.exchanges[0].request.bodyFingerprint, "\(preset.name)")
            #expect(!login.has(.bodyChanged) && !login.has(.corsBlocked) && login.cookieDifferences.isEmpty && login.pageURL == nil, "\(preset.name)")
            #expect(login.changes.map(\.rule) == ["NC1"], "\(preset.name)")
            let stored = try #require(result.jarEvents.first { $0.name == "sid" }, "\(preset.name)")
            #expect(stored.jar == .native && stored.rule == "NC1", "\(preset.name)")
        }
        let plain = Self.run(recording, "plain")
        let missing = try #require(plain.outcomes[1].cookieDifferences.first)
        #expect(missing.name == "sid" && missing.sentValue == nil && missing.rules.contains("NC1") && missing.rules.contains("J1"))
        #expect(plain.outcomes[2].cookieDifferences.isEmpty)  // J1 has copied it by 1.8 s
        // NSURLProtocol sends the page's requests natively: they read NativeJar at once (P3).
        #expect(Self.run(recording, "urlprotocol-naive").outcomes.allSatisfy { $0.cookieDifferences.isEmpty })
    }

    @Test("a scenario can pin a request as native code's (NC1): every preset then leaves it alone, and cookie provenance reads nothing into it")
    func pinnedNative() throws {
        // An app whose web view's User-Agent names only the app, and whose native code sends the same.
        let recording = Self.recording([
            Self.exchange(0, at: 0, "GET", "https://m.bank.example/account", headers: [HeaderField("Accept", "text/html")]),
            Self.exchange(1, at: 1, "POST", "https://api.bank.example/v1/sync", headers: [HeaderField("Content-Type", "application/json"), HeaderField("Cookie", "device=ios")], body: "{}"),
        ])
        #expect(recording.exchanges[1].initiator == .ajax)
        var scenario = Scenario()
        scenario.overrides = [Scenario.Override(urlPattern: "https://api.bank.example/*", initiator: .native)]
        let input = ReplayInput(recording: recording, provenance: CookieProvenance(recording: recording), scenario: scenario)
        #expect(input.recording.exchanges[1].initiator == .native)
        #expect(input.provenance.sent[1].isEmpty && input.provenance.inferred[1].isEmpty)
        let result = input.replay(Preset.named("urlprotocol-naive")!)
        #expect(result.outcomes[1].changes.map(\.rule) == ["NC1"] && !result.outcomes[1].has(.bodyChanged))
    }

    @Test("WS1: a WebSocket handshake is WebKit's own under every preset: no interceptor changes it, no CORS check, and it reads WebJar, which an intercepted login's cookie reaches only through J1")
    func webSocket() throws {
        let recording = Self.recording([
            Self.exchange(0, at: 0, "GET", "https://chat.example.com/room", headers: [HeaderField("Accept", "text/html")]),
            Self.exchange(1, at: 0.8, "POST", "https://chat.example.com/api/login", headers: [HeaderField("X-Requested-With", "XMLHttpRequest"), HeaderField("Content-Type", "application/json")], body: "{}",
                responseHeaders: [HeaderField("Set-Cookie", "chat_sid=5e; Path=/; Secure")]),
            Self.exchange(2, at: 1.1, "GET", "wss://chat.example.com/ws", headers: [HeaderField("Upgrade", "websocket"), HeaderField("Connection", "Upgrade"), HeaderField("Cookie", "chat_sid=5e")], status: 101),
        ])
        #expect(recording.exchanges[2].initiator == .websocket)
        for preset in Preset.builtIn {
            let ws = WebViewEmulator(preset: preset).run(recording, provenance: CookieProvenance(recording: recording)).outcomes[2]
            #expect(ws.changes.first?.rule == "WS1", "\(preset.name)")
            #expect(!ws.has(.corsBlocked) && !ws.has(.urlChanged) && ws.addedHeaders.isEmpty && !ws.has(.bodyChanged) && !ws.has(.thirdPartyIntercepted), "\(preset.name)")
        }
        #expect(Self.run(recording, "plain").outcomes[2].cookieDifferences.isEmpty)
        // NSURLProtocol stored the login's cookie in NativeJar (P3); the handshake 0.3 s later reads WebJar.
        let missing = try #require(Self.run(recording, "urlprotocol-naive").outcomes[2].cookieDifferences.first)
        #expect(missing.name == "chat_sid" && missing.sentValue == nil && missing.rules.contains("WS1") && missing.rules.contains("J1"))
    }

    @Test("J3 window: a script write long before the request is missed only possibly (a warning)")
    func scriptWindow() throws {
        let flow = Self.recording([
            Self.exchange(0, at: 0, "GET", "https://b.example/", headers: [HeaderField("Accept", "text/html")]),
            Self.exchange(1, at: 5, "GET", "https://b.example/api", headers: [HeaderField("X-Requested-With", "XMLHttpRequest"), HeaderField("Cookie", "seen=1")]),
        ])
        let result = Self.run(flow, "urlprotocol-naive")
        let missing = try #require(result.outcomes[1].cookieDifferences.first)
        #expect(missing.rules == ["P3", "J3"])
        #expect(!missing.certain)  // 5 s window, 1 s delay
        // On the simulator J3 never propagates: certain, whatever the window.
        let sim = Self.run(flow, "urlprotocol-naive", profile: Profile(simulator: true))
        let simMissing = try #require(sim.outcomes[1].cookieDifferences.first)
        #expect(simMissing.certain)
        #expect(simMissing.rules.contains("J3"))
        // The words a report gives, piece by piece as the emulator writes them.
        #expect(missing.explanation == "it was written by script in WebJar, and the synchronisation to NativeJar (J3) was due 999 ms after this request; the script wrote it within the 5.0 s before the request and the J3 delay is 1.0 s, so it is missed only if the write came late")
        #expect(simMissing.explanation == "it was written by script in WebJar only, and on the simulator a document.cookie write never reaches NativeJar")
    }

    @Test("P3: intercepted requests read the jar their Set-Cookie went to, and the jars converge through J1")
    func setCookieThroughInterceptor() throws {
        // The response sets a cookie; a script reads it (it is sent by a later plain request
        // issued by WebKit itself, e.g. an image, 200 ms later).
        let flow = Self.recording([
            Self.exchange(0, at: 0, "GET", "https://c.example/", headers: [HeaderField("Accept", "text/html")], responseHeaders: [HeaderField("Set-Cookie", "sid=1; Path=/")]),
            Self.exchange(1, at: 0.2, "GET", "https://c.example/api", headers: [HeaderField("Cookie", "sid=1")]),
        ])
        // Under urlprotocol both requests read NativeJar, which holds it: no difference.
        #expect(Self.run(flow, "urlprotocol-naive").outcomes.allSatisfy { $0.cookieDifferences.isEmpty })
        let result = Self.run(flow, "urlprotocol-naive")
        #expect(result.divergences.isEmpty)  // J1 completes by the end
    }

    @Test("every change is tagged with a rule of the bundled catalog")
    func changesNameRules() {
        let catalog = RuleCatalog.bundled
        for preset in Preset.builtIn {
            for flow in [Self.post307, Self.firstRequestCookie] {
                let result = WebViewEmulator(preset: preset).run(flow, provenance: CookieProvenance(recording: flow))
                for outcome in result.outcomes {
                    for change in outcome.changes { #expect(catalog[change.rule] != nil, "\(preset.name): \(change.what)") }
                    for difference in outcome.cookieDifferences { #expect(difference.rules.allSatisfy { catalog[$0] != nil }) }
                }
            }
        }
    }

    @Test("the emulator is deterministic")
    func deterministic() {
        let a = Self.run(Self.post307, "urlprotocol-naive").outcomes
        let b = Self.run(Self.post307, "urlprotocol-naive").outcomes
        #expect(a == b)
    }

    /// N4 beyond iframes: a shop page whose script, image and API call go to other sites,
    /// recorded in a browser without ITP, so each carried its own site's cookie.
    static var thirdPartySubresources: Recording {
        let page = [HeaderField("Referer", "https://shop.example.com/item")]
        return recording([
            exchange(0, at: 0, "GET", "https://shop.example.com/item", headers: [HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Sec-Fetch-Mode", "navigate")]),
            exchange(1, at: 1, "GET", "https://cdn.widgets.net/w.js", headers: [HeaderField("Sec-Fetch-Dest", "script"), HeaderField("Cookie", "w=1")] + page,
                responseHeaders: [HeaderField("Set-Cookie", "seen=1; Path=/; Secure; SameSite=None")]),
            exchange(2, at: 2, "GET", "https://cdn.widgets.net/pixel.gif", headers: [HeaderField("Sec-Fetch-Dest", "image"), HeaderField("Cookie", "w=1; seen=1")] + page),
            // An ad frame's request to the shop's own site, read as the main frame's (no
            // Sec-Fetch-Dest): first-party to the page, whatever its Referer.
            exchange(3, at: 3, "GET", "https://img.shop.example.com/a.jpg", headers: [HeaderField("Cookie", "s=1"), HeaderField("Referer", "https://ads.example.org/frame")]),
            // Later the main frame itself goes to the widget's site: first-party there.
            exchange(4, at: 4, "GET", "https://cdn.widgets.net/about", headers: [HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Sec-Fetch-Mode", "navigate"), HeaderField("Cookie", "w=1; seen=1")] + page),
        ])
    }

    @Test("N4: ITP keeps cookies off the page's script and image to another site and does not store their Set-Cookie; the page's own site and a navigation keep theirs; an intercepting transport and iOS 13 are not affected")
    func itpThirdPartySubresources() {
        let plain = Self.run(Self.thirdPartySubresources, "plain").outcomes
        #expect(plain[1].cookieDifferences.map(\.name) == ["w"] && plain[1].cookieDifferences.allSatisfy { $0.rules == ["N4"] })
        #expect(plain[1].changes.contains { $0.rule == "N4" && $0.what.contains("not stored") })
        #expect(plain[2].cookieDifferences.map(\.name).sorted() == ["seen", "w"])
        #expect(plain[3].cookieDifferences.isEmpty)
        // The navigation carries `w` (there from the start) but not `seen`, which WebKit never stored.
        #expect(plain[4].cookieDifferences.map(\.name) == ["seen"] && plain[4].cookieDifferences[0].rules.contains("N4"))
        let ios13 = WebViewEmulator(preset: Preset.named("plain")!, profile: Profile(ios: IOSVersion(13))).run(Self.thirdPartySubresources, provenance: CookieProvenance(recording: Self.thirdPartySubresources))
        #expect(ios13.outcomes.allSatisfy { $0.cookieDifferences.isEmpty })
        // NSURLProtocol re-sends natively: ITP never sees the requests (P3's own jar findings aside).
        let urlprotocol = Self.run(Self.thirdPartySubresources, "urlprotocol-forwarded").outcomes
        #expect(urlprotocol.allSatisfy { o in o.cookieDifferences.allSatisfy { !$0.rules.contains("N4") } })
    }
}
