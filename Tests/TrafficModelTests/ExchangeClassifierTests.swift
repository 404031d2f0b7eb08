import Foundation
import Testing
@testable import TrafficModel

@Suite("Initiator, body kind, frames and redirect chains (docs/model.md, Request and body kinds)")
struct ExchangeClassifierTests {
    func exchange(_ method: String = "GET", url: String = "https://a.example/x", resourceType: String? = nil, headers: [(String, String)] = [], body: String = "", status: Int = 200, location: String? = nil, at offset: Double = 0) -> Exchange {
        Exchange(sequence: 0, startedAt: offset, request: RecordedRequest(method: method, url: url, headers: HeaderList(headers.lazy.map { HeaderField($0.0, $0.1) }), body: Data(body.utf8)),
            response: RecordedResponse(status: status, headers: location.map { [HeaderField("Location", $0)] } ?? []), resourceType: resourceType)
    }

    @Test("a request the headers leave ajax takes the API the page's inline script calls its URL with: fetch(\"/api/pay\") or xhr.open(\"POST\", \"/api/order\"); a URL called both ways, or not named, stays ajax")
    func apiFromThePagesScript() {
        let html = """
        <script>
        var x = new XMLHttpRequest(); x.open("POST", "/api/order");
        fetch('/api/pay', {method: "POST"}).then(function () { return fetch(`https://a.example/api/status?v=1`); });
        fetch("/api/both"); x.open('GET', "/api/both");
        fetch(url); fetch(`/api/${id}`);
        </script>
        """
        var page = exchange(url: "https://a.example/shop/", headers: [("Accept", "text/html")])
        page.response = RecordedResponse(status: 200, headers: [HeaderField("Content-Type", "text/html")], body: Data(html.utf8))
        let ajax: [(String, String)] = [("Accept", "*/*"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")]
        var list = [page] + ["/api/order", "/api/pay", "/api/status?v=2", "/api/both", "/api/other"].enumerated().map { k, path in
            exchange("POST", url: "https://a.example" + path, headers: ajax, at: Double(k + 1))
        }
        ExchangeClassifier.classify(&list)
        #expect(list.map(\.initiator) == [.navigation, .xhr, .fetch, .fetch, .ajax, .ajax])
    }

    @Test("a form-encoded POST under a document's Accept is a form's submission, unless it carries what a form never does: a page's own X- header or a charset on its type (an old Firefox's XHR)")
    func scriptedPostIsNoForm() {
        let accept = ("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
        func initiator(_ headers: [(String, String)]) -> Initiator {
            var list = [exchange("POST", url: "https://a.example/track", headers: [accept] + headers, body: "a=1")]
            ExchangeClassifier.classify(&list)
            return list[0].initiator
        }
        #expect(initiator([("Content-Type", "application/x-www-form-urlencoded")]) == .formSubmission)
        #expect(initiator([("Content-Type", "application/x-www-form-urlencoded;charset=UTF-8")]) == .ajax)
        #expect(initiator([("Content-Type", "application/x-www-form-urlencoded"), ("X-IsAJAXForm", "1")]) == .ajax)
        #expect(initiator([("Content-Type", "application/x-www-form-urlencoded"), ("X-Forwarded-Proto", "https")]) == .formSubmission, "a proxy's header")
        #expect(initiator([("Content-Type", "multipart/form-data; boundary=x; charset=UTF-8")]) == .formSubmission)
    }

    @Test("E6: a script's request to another origin in CORS mode without any cookie is no evidence of the jar; with a cookie, to its own origin, or a document, it is")
    func credentialsOmitted() {
        let page = "https://www.site.example"
        func gap(_ headers: [(String, String)], url: String = "https://api.site.example/v1", resourceType: String? = "xhr") -> EvidenceGap? {
            var list = [exchange(url: page + "/", resourceType: "document", headers: [("Accept", "text/html")]),
                        exchange(url: url, resourceType: resourceType, headers: [("Accept", "*/*"), ("Referer", page + "/")] + headers, at: 1)]
            ExchangeClassifier.classify(&list)
            return list[1].evidenceGap
        }
        #expect(gap([("Origin", page)]) == .credentialsOmitted)
        #expect(gap([("Origin", "null")]) == .credentialsOmitted, "an opaque origin is another origin")
        #expect(gap([("Origin", page), ("Cookie", "sid=1")]) == nil, "credentials included: what it lacks counts")
        #expect(gap([("Origin", page)], url: page + "/api") == nil, "its own origin: cookies go whatever the mode")
        #expect(gap([]) == nil, "no Origin: not a CORS-mode request")
        #expect(gap([("Origin", page)], resourceType: "document") == nil, "a navigation always carries its cookies")
        #expect(gap([("Origin", page + ":8443")], url: page + "/api") == .credentialsOmitted, "another port is another origin")
        #expect(EvidenceGap.credentialsOmitted.rule == "E6")
    }

    @Test("a request recorded as http:// that the terminator or the page says was https:// is read as https, and so are its host's later requests; the recording says so")
    func terminatedTLS() throws {
        var list = [
            exchange(url: "http://shop.example/", resourceType: "document", headers: [("Accept", "text/html"), ("X-Forwarded-Proto", "https")]),
            exchange(url: "http://shop.example:80/api?x=:80", resourceType: "xhr", headers: [("Accept", "*/*")], at: 1),
            exchange(url: "http://cdn.example/app.js", resourceType: "script", headers: [("Accept", "*/*")], at: 2),
            exchange(url: "http://img.example/logo.png", resourceType: "image", headers: [("Referer", "https://img.example/")], at: 3),
        ]
        let diagnostics = ExchangeClassifier.classify(&list)
        #expect(list.map(\.request.url) == ["https://shop.example/", "https://shop.example/api?x=:80", "http://cdn.example/app.js", "https://img.example/logo.png"])
        #expect(list[0].request.target?.scheme == "https")
        let note = try #require(diagnostics.first { $0.code == DiagnosticCode.tlsTerminated.rawValue })
        #expect(note.message.hasPrefix("3 request(s) recorded as http:// were https:// to the browser (X-Forwarded-Proto: https)"), "\(note.message)")
        var plain = [exchange(url: "http://shop.example/", resourceType: "document", headers: [("Accept", "text/html")])]
        #expect(ExchangeClassifier.classify(&plain).isEmpty && plain[0].request.url == "http://shop.example/")
    }

    @Test("a recording made with a warm cache says so: how many responses were 304 or came from the browser's cache")
    func warmCache() throws {
        var list = [exchange(url: "https://a.example/", resourceType: "document", headers: [("Accept", "text/html")]),
                    exchange(url: "https://a.example/app.js", resourceType: "script", status: 304, at: 1),
                    exchange(url: "https://a.example/logo.png", resourceType: "image", at: 2)]
        list[2].evidenceGap = .fromCache
        let note = try #require(ExchangeClassifier.classify(&list).first { $0.code == DiagnosticCode.warmCache.rawValue })
        #expect(note.message.contains("of 3 request(s), 1 answered 304 Not Modified and 1 served from the browser's cache"), "\(note.message)")
        var fresh = [exchange(url: "https://a.example/", resourceType: "document")]
        #expect(ExchangeClassifier.classify(&fresh).isEmpty)
    }

    @Test("rules 8 and 9: an image's or a stylesheet's own Accept, and a cross-origin GET without Origin, are no XHR or fetch; the browser's favicon is not the page's")
    func elementLoads() {
        let page = "https://www.site.example/"
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://px.ads.example/p?x=1", headers: [("Accept", "image/webp,*/*;q=0.8"), ("Referer", page)])) == .image)
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://www.site.example/s?x=1", headers: [("Accept", "text/css,*/*;q=0.1"), ("Referer", page)])) == .stylesheet)
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://ads.example/addyn/3.0/1", headers: [("Accept", "*/*"), ("Referer", page)])) == .other)
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://api.example/v1", headers: [("Accept", "*/*"), ("Referer", page), ("Origin", "https://www.site.example")])) == .ajax)
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://www.site.example/api", headers: [("Accept", "*/*"), ("Referer", page)])) == .ajax, "same origin: XHR and fetch send no Origin on a GET")
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://www.site.example/img/site.ico", headers: [("Accept", "*/*"), ("Referer", page)])) == .native)
        var icon = exchange(url: "https://www.site.example/icon", resourceType: "image", headers: [("Referer", page)])
        icon.response.headers.append(HeaderField("Content-Type", "image/x-icon"))
        #expect(ExchangeClassifier.initiator(of: icon) == .native)
    }

    @Test("rule 5: an .html path is a document only under a document's Accept or none; under another Accept the later rules decide")
    func htmlPathWithAnotherAccept() {
        let page = "http://www.site.example/home.html"
        func initiator(_ accept: String?, contentType: String = "text/html") -> Initiator {
            var e = exchange(url: "http://www.site.example/frag/0,7340,L-8,00.html", headers: (accept.map { [("Accept", $0)] } ?? []) + [("Referer", page)])
            e.response.headers.append(HeaderField("Content-Type", contentType))
            return ExchangeClassifier.initiator(of: e)
        }
        #expect(initiator("text/html,application/xhtml+xml") == .navigation)
        #expect(initiator(nil) == .navigation, "no Accept recorded: the path decides")
        #expect(initiator("text/xml, text/html, application/xhtml+xml, image/png, text/plain, */*;q=0.8") == .ajax, "an old Android browser's script request")
        #expect(initiator("*/*", contentType: "application/javascript") == .script, "a JSONP script with an .html path")
    }

    @Test("rule 9 without a Referer: where the recorder keeps Origin, a GET to another site without it is an element's load, no XHR or fetch")
    func noOriginWhereOriginIsKept() {
        func flow(keepsOrigin: Bool) -> [Exchange] {
            var list = [exchange(url: "https://www.news.example/", headers: [("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")]),
                        exchange(url: "https://api.news.example/v1", headers: [("Accept", "*/*"), ("Referer", "https://www.news.example/")] + (keepsOrigin ? [("Origin", "https://www.news.example")] : []), at: 1),
                        exchange(url: "https://ads.example/ad?cback=window.parent.cb", headers: [("Accept", "*/*"), ("Cookie", "uid=1")], at: 2)]
            ExchangeClassifier.classify(&list)
            return list
        }
        #expect(flow(keepsOrigin: true)[2].initiator == .other)
        #expect(flow(keepsOrigin: false)[2].initiator == .ajax, "a recorder that drops Origin says nothing by its absence")
    }

    @Test("documents a page loads at once, with no destination named (Safari's export), are its iframes: a main frame navigates once at a time")
    func documentsLoadedAtOnce() {
        let page = "https://site.example/"
        func doc(_ path: String, at offset: Double, referer: String? = page) -> Exchange {
            var e = exchange(url: "https://site.example/\(path)", headers: [("Accept", "text/html,application/xhtml+xml")] + (referer.map { [("Referer", $0)] } ?? []), at: offset)
            e.duration = 0.04
            return e
        }
        var list = [doc("", at: 0, referer: nil), doc("btn.html?a", at: 0.14), doc("btn.html?b", at: 0.14), doc("btn.html?c", at: 0.141),
                    exchange(url: "https://site.example/data.json", headers: [("Accept", "*/*"), ("Referer", page)], at: 0.18)]
        ExchangeClassifier.classify(&list)
        #expect(list.map(\.frame.kind) == [.main, .iframe, .iframe, .iframe, .main])
        // One document at a time is the main frame moving on.
        var one = [doc("", at: 0, referer: nil), doc("next.html", at: 1)]
        ExchangeClassifier.classify(&one)
        #expect(one.map(\.frame.kind) == [.main, .main])
    }

    @Test("rule 1: the exporter's _resourceType wins")
    func resourceType() {
        #expect(ExchangeClassifier.initiator(of: exchange(resourceType: "fetch", headers: [("Accept", "text/html")])) == .fetch)
        #expect(ExchangeClassifier.initiator(of: exchange(resourceType: "xhr")) == .xhr)
        #expect(ExchangeClassifier.initiator(of: exchange(resourceType: "ping")) == .beacon)
        #expect(ExchangeClassifier.initiator(of: exchange("POST", resourceType: "document", headers: [("Content-Type", "application/x-www-form-urlencoded")])) == .formSubmission)
    }

    @Test("rule 2: Sec-Fetch-Dest and Sec-Fetch-Mode")
    func secFetch() {
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")])) == .navigation)
        #expect(ExchangeClassifier.initiator(of: exchange("POST", headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate"), ("Content-Type", "multipart/form-data; boundary=x")])) == .formSubmission)
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")])) == .ajax)
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors"), ("X-Requested-With", "XMLHttpRequest")])) == .xhr)
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("Sec-Fetch-Dest", "image")])) == .image)
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("Sec-Fetch-Dest", "xslt"), ("Sec-Fetch-Mode", "same-origin")])) == .stylesheet)
    }

    @Test("the initiator rules read the first field of each name, in any case, wherever it sits among the others")
    func headerLookup() {
        // Names of one length share a slot test: each must still land in its own.
        let marks = ExchangeClassifier.InitiatorHeaders([
            HeaderField("ORIGIN", "https://o.example"), HeaderField("accept", "text/html"), HeaderField("Accept", "*/*"),
            HeaderField("upgrade", "websocket"), HeaderField("Referer", "https://r.example/"), HeaderField("Purpose", "prefetch"),
            HeaderField("sec-fetch-site", "none"), HeaderField("Sec-Fetch-Mode", "cors"), HeaderField("SEC-FETCH-DEST", "empty"),
            HeaderField("X-Requested-With", "XMLHttpRequest"), HeaderField("user-agent", "Mozilla/5.0"), HeaderField("Sec-Purpose", "prefetch;prerender"),
            HeaderField("Sec-Fetch-Dest", "document"), HeaderField("Originx", "no"), HeaderField("Acceptx", "no"),
        ])
        #expect(marks.hasOrigin && marks.acceptIsDocument == true && marks.upgrade == "websocket")
        #expect(marks.hasReferer && marks.purposeIsPrefetch == true && marks.secPurposeIsPrefetch == true)
        #expect(marks.fetchSite == "none" && marks.fetchMode == "cors" && marks.fetchDest == "empty")
        #expect(marks.requestedWithXHR && marks.userAgentIsEngine == true)
        // The first field of a name decides what is read of it, a later one does not.
        let later = ExchangeClassifier.InitiatorHeaders([
            HeaderField("Accept", "*/*"), HeaderField("accept", "text/html"), HeaderField("User-Agent", "okhttp/4.12"),
            HeaderField("user-agent", "Mozilla/5.0"), HeaderField("X-Requested-With", "com.example.app"), HeaderField("x-requested-with", "XMLHttpRequest"),
            HeaderField("Purpose", "preview"), HeaderField("Sec-Purpose", "prefetch"),
        ])
        #expect(later.acceptIsDocument == false && later.userAgentIsEngine == false && !later.requestedWithXHR)
        #expect(later.purposeIsPrefetch == false && later.secPurposeIsPrefetch == true)
        let none = ExchangeClassifier.InitiatorHeaders([HeaderField("Content-Type", "text/plain"), HeaderField("Cookie", "a=1"), HeaderField("Originx", "no")])
        #expect(!none.hasOrigin && !none.hasReferer && none.acceptIsDocument == nil && none.fetchDest == nil && none.userAgentIsEngine == nil && !none.requestedWithXHR)
        #expect(none.purposeIsPrefetch == nil && none.secPurposeIsPrefetch == nil)
        // The first of two Sec-Fetch-Dest decides, as it did when each rule asked for it.
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("sec-fetch-dest", "image"), ("Sec-Fetch-Dest", "document")])) == .image)
    }

    @Test("rules 3-5: X-Requested-With, Purpose, Accept text/html, path extension, else ajax")
    func fallbacks() {
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("X-Requested-With", "XMLHttpRequest")])) == .xhr)
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("Purpose", "prefetch")])) == .prefetch)
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("Accept", "text/html,*/*")])) == .navigation)
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://a.example/app.js")) == .script)
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://a.example/logo.PNG")) == .image)
        #expect(ExchangeClassifier.initiator(of: exchange("POST", url: "https://a.example/api/v1.0/order")) == .ajax)
        // An XML page's XSLT stylesheet (pcap2har's fhs.pcap: Firefox 3 sends no Sec-Fetch
        // headers and answers it text/xml) is the document's subresource, not a script's request.
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://a.example/fhs/fhs.xsl", headers: [("Accept", "text/xml,application/xml,application/xhtml+xml,*/*;q=0.1")])) == .stylesheet)
    }

    @Test("rule 7: an answer that calls the function its query named is JSONP, a script's load, whatever its Content-Type (pcap2har's pcapr.net.pcap: Twitter's said application/json)")
    func jsonp() {
        func answered(_ url: String, _ body: String, type: String = "application/json") -> Initiator {
            let e = Exchange(sequence: 0, startedAt: 0, request: RecordedRequest(method: "GET", url: url, headers: [HeaderField("Accept", "*/*")]),
                response: RecordedResponse(status: 200, headers: [HeaderField("Content-Type", type)], body: Data(body.utf8)))
            return ExchangeClassifier.initiator(of: e)
        }
        #expect(answered("http://www.twitter.com/statuses/user_timeline/pcapr.json?callback=twitterCallback1&count=20", "twitterCallback1([{\"text\":\"hi\"}])") == .script)
        #expect(answered("https://api.example/v1?cb=jQuery1102_1&_=1", "/**/ jQuery1102_1 ({\"ok\":1});") == .script)
        #expect(answered("https://api.example/v1?jsonp=ns.handlers.feed", "\n ns.handlers.feed({})") == .script)
        // JSON, or a body that names no query value, stays an ajax request.
        #expect(answered("https://api.example/v1?callback=cb", "{\"cb\":1}") == .ajax)
        #expect(answered("https://api.example/v1?page=2", "page2({})") == .ajax)
        #expect(answered("https://api.example/v1?n=2", "2(1)") == .ajax)
        #expect(answered("https://api.example/v1", "cb({})") == .ajax)
    }

    @Test("rule 4 reads the document Accept of engines before 2012: old WebKit's, old Gecko's, Internet Explorer's", arguments: [
        // Chrome 8 and Safari 5 (pcap2har's github and pcapr.net captures).
        ("application/xml,application/xhtml+xml,text/html;q=0.9,text/plain;q=0.8,image/png,*/*;q=0.5", Initiator.navigation),
        // Internet Explorer 7 (pcap2har's sajal capture).
        ("image/gif, image/x-xbitmap, image/jpeg, image/pjpeg, application/x-ms-application, application/x-ms-xbap, application/vnd.ms-xpsdocument, application/xaml+xml, */*", .navigation),
        // Mozilla 1.6 (pcap2har's http capture: an ad frame's document) and Firefox 1 and 2.
        ("text/xml,application/xml,application/xhtml+xml,text/html;q=0.9,text/plain;q=0.8,image/png,image/jpeg", .navigation),
        ("text/xml,application/xml,application/xhtml+xml,text/html;q=0.9,text/plain;q=0.8,image/png,*/*;q=0.5", .navigation),
        // Firefox 3.5's XSLT stylesheet request names no text/html.
        ("text/xml,application/xml,application/xhtml+xml,*/*;q=0.1", .ajax),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", .navigation),
        // What scripts send: XHR's and fetch's default, jQuery's xml and json data types.
        ("*/*", .ajax), ("application/xml, text/xml, */*; q=0.01", .ajax), ("application/json, text/javascript, */*; q=0.01", .ajax),
        // Android 2's browser loading an image (pcap2har's out-of-order capture).
        ("text/xml, text/html, application/xhtml+xml, image/png, text/plain, */*;q=0.8", .ajax),
    ])
    func documentAccept(_ accept: String, _ initiator: Initiator) {
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://a.example/home", headers: [("Accept", accept)])) == initiator)
    }

    @Test("a User-Agent that is no browser engine's marks a request of native code or another program (NC1); a web view's, with the app's name appended, is an engine's", arguments: [
        ("BankApp/5.2 CFNetwork/1568.100.1 Darwin/24.0.0", Initiator.native),  // NSURLSession's default
        ("okhttp/4.12.0", .native), ("Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8 Build/AP2A)", .native),
        ("Charles/4.6.3", .native), ("puffin", .native), ("curl/8.4.0", .native),
        // WKWebView, with and without `applicationNameForUserAgent`.
        ("Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 BankApp/5.2", .navigation),
        ("Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1)", .navigation),
        ("Opera/9.80 (Windows NT 6.1; U; en) Presto/2.10.289 Version/12.00", .navigation),
        ("", .navigation),
    ])
    func nativeUserAgent(_ agent: String, _ initiator: Initiator) {
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("User-Agent", agent), ("Accept", "text/html")])) == initiator)
    }

    @Test("a request with no destination and no site is the browser's own (its sync, an extension's fetch), not a page's (NC1)")
    func browsersOwnRequest() {
        let sync = [("User-Agent", "Chrome MAC 116.0.5845.179"), ("Sec-Fetch-Site", "none"), ("Sec-Fetch-Mode", "no-cors"), ("Sec-Fetch-Dest", "empty")]
        #expect(ExchangeClassifier.initiator(of: exchange("POST", headers: sync)) == .native)
        // A page's fetch always has a site; a typed URL's document load has none and is a page load.
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Mode", "cors"), ("Sec-Fetch-Dest", "empty")])) == .ajax)
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("Sec-Fetch-Site", "none"), ("Sec-Fetch-Mode", "navigate"), ("Sec-Fetch-Dest", "document")])) == .navigation)
    }

    @Test("a WebSocket's handshake is its own kind (WS1): by the exporter's type, by Sec-Fetch-Dest, or by its Upgrade header")
    func webSocket() {
        #expect(ExchangeClassifier.initiator(of: exchange(url: "wss://chat.example/ws", resourceType: "websocket")) == .websocket)
        #expect(ExchangeClassifier.initiator(of: exchange(url: "wss://chat.example/ws", headers: [("Sec-Fetch-Dest", "websocket"), ("Sec-Fetch-Mode", "websocket")])) == .websocket)
        // mitmproxy's export of a Chrome WebSocket: an https URL, Upgrade, and no Accept.
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://demo.piesocket.com/v3/channel_123", headers: [("Connection", "Upgrade"), ("Upgrade", "websocket"), ("User-Agent", "Mozilla/5.0 (Macintosh)")])) == .websocket)
        // A native client's WebSocket is native code's.
        #expect(ExchangeClassifier.initiator(of: exchange(url: "wss://chat.example/ws", headers: [("Upgrade", "websocket"), ("User-Agent", "okhttp/4.12.0")])) == .native)
    }

    @Test("an engine's request with no Accept, Referer or Origin is the browser's own (NC1): Chrome's autofill query in pcap2har's github.pcap")
    func browserOwnRequest() {
        let chrome9 = ("User-Agent", "Mozilla/5.0 (X11; U; Linux x86_64; en-US) AppleWebKit/534.10 (KHTML, like Gecko) Chrome/8.0.552.237 Safari/534.10")
        let autofill = exchange("POST", url: "http://toolbarqueries.clients.google.com/tbproxy/af/query", headers: [chrome9, ("Content-Type", "text/plain"), ("Accept-Encoding", "gzip,deflate,sdch")], body: "<autofillquery/>")
        #expect(ExchangeClassifier.initiator(of: autofill) == .native)
        // A page's request has an Accept, and a Referer or an Origin: any one keeps it the page's.
        #expect(ExchangeClassifier.initiator(of: exchange("POST", url: "http://a.example/api", headers: [chrome9, ("Accept", "*/*")], body: "x")) == .ajax)
        #expect(ExchangeClassifier.initiator(of: exchange("POST", url: "http://a.example/api", headers: [chrome9, ("Referer", "http://a.example/")], body: "x")) == .ajax)
        #expect(ExchangeClassifier.initiator(of: exchange("POST", url: "http://a.example/api", headers: [chrome9, ("Origin", "http://a.example")], body: "x")) == .ajax)
        // A WebSocket's handshake sends no Accept and stays WebKit's (WS1); without any
        // User-Agent nothing is said of the sender.
        #expect(ExchangeClassifier.initiator(of: exchange(url: "https://chat.example/ws", headers: [chrome9, ("Upgrade", "websocket")])) == .websocket)
        #expect(ExchangeClassifier.initiator(of: exchange("POST", url: "http://a.example/api", headers: [("Content-Type", "text/plain")], body: "x")) == .ajax)
    }

    @Test("an EventSource is its own kind (ES1): by the exporter's type, or by the headers WebKit and Chromium give it; a fetch asking for an event stream stays a script's request")
    func eventSource() {
        let url = "https://live.example/api/events"
        #expect(ExchangeClassifier.initiator(of: exchange(url: url, resourceType: "eventsource")) == .eventSource)
        let own = [("Accept", "text/event-stream"), ("Cache-Control", "no-cache")]
        #expect(ExchangeClassifier.initiator(of: exchange(url: url, headers: own + [("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")])) == .eventSource)
        // An old capture, without Sec-Fetch headers; a reconnection with Last-Event-ID.
        #expect(ExchangeClassifier.initiator(of: exchange(url: url, headers: own)) == .eventSource)
        #expect(ExchangeClassifier.initiator(of: exchange(url: url, headers: [("Accept", "text/event-stream"), ("Last-Event-ID", "42")])) == .eventSource)
        // fetch-event-source and its kind send the Accept alone; an XHR says so; a POST is none.
        #expect(ExchangeClassifier.initiator(of: exchange(url: url, headers: [("Accept", "text/event-stream"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")])) == .ajax)
        #expect(ExchangeClassifier.initiator(of: exchange(url: url, headers: own + [("X-Requested-With", "XMLHttpRequest")])) == .xhr)
        #expect(ExchangeClassifier.initiator(of: exchange("POST", url: url, headers: own, body: "{}")) != .eventSource)
        // A native SSE client (mitmproxy's event_stream.har) is native code's.
        #expect(ExchangeClassifier.initiator(of: exchange(url: url, headers: own + [("User-Agent", "AndroidClient/3.6.0")])) == .native)
    }

    @Test("an exporter's _resourceType and the Sec-Fetch headers, which only engines send, outrank the User-Agent")
    func engineMarksOutrankUserAgent() {
        #expect(ExchangeClassifier.initiator(of: exchange(resourceType: "xhr", headers: [("User-Agent", "MyApp/1.0")])) == .xhr)
        #expect(ExchangeClassifier.initiator(of: exchange(headers: [("User-Agent", "MyApp/1.0"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")])) == .navigation)
    }

    @Test("the app's native requests before the first page do not stand in for the page's site")
    func nativeRequestsAndTopSite() {
        var list = [
            exchange("POST", url: "https://api.bank.example/v1/login", headers: [("User-Agent", "BankApp/5.2 CFNetwork/1568.100.1 Darwin/24.0.0")]),
            exchange(url: "https://cdn.other.example/app.js", at: 0.1),
            exchange(url: "https://m.shop.example/home", headers: [("Accept", "text/html")], at: 0.2),
        ]
        for i in list.indices { list[i].sequence = i }
        // Before the document arrives, the first request from the web view stands in.
        var stream = ExchangeClassifier.Stream()
        _ = stream.add(&list[0])
        _ = stream.add(&list[1])
        #expect(stream.topSite == "other.example")
        ExchangeClassifier.classify(&list)
        #expect(list.map(\.initiator) == [.native, .script, .navigation])
        #expect(Recording(name: "r", sourceFormat: "har", exchanges: Array(list.dropLast())).topLevelSite == "other.example")
    }

    @Test("the top site follows the main frame: a sign-in page's redirect to the app and a document the engine names top-level move it; an unnamed document does not")
    func topSiteFollowsTheMainFrame() {
        let form = [("Accept", "text/html"), ("Content-Type", "application/x-www-form-urlencoded")]
        var list = [
            exchange("POST", url: "https://sso.corp.example/login", headers: form, body: "u=1", status: 302, location: "https://app.shop.example/home"),
            exchange(url: "https://app.shop.example/home", headers: [("Accept", "text/html")], at: 1),
            exchange(url: "https://app.shop.example/api/cart", headers: [("X-Requested-With", "XMLHttpRequest"), ("Referer", "https://app.shop.example/home")], at: 2),
            exchange(url: "https://app.shop.example/widget", headers: [("Sec-Fetch-Dest", "iframe"), ("Referer", "https://app.shop.example/home")], at: 3),
            exchange(url: "https://sso.corp.example/pixel.png", headers: [("Referer", "https://app.shop.example/home")], at: 4),
            // An ad's frame read as a document of the main frame does not move it...
            exchange(url: "https://ads.example/frame", headers: [("Accept", "text/html"), ("Referer", "https://app.shop.example/home")], at: 5),
            exchange(url: "https://app.shop.example/logo.png", headers: [("Referer", "https://app.shop.example/home")], at: 6),
            // ...a navigation the engine names top-level does.
            exchange(url: "https://news.example/", headers: [("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")], at: 7),
            exchange(url: "https://app.shop.example/embed.js", headers: [("Referer", "https://news.example/")], at: 8),
        ]
        for i in list.indices { list[i].sequence = i }
        var stream = ExchangeClassifier.Stream()
        for i in list.indices { for revision in stream.add(&list[i]) { revision.apply(to: &list) } }
        #expect(list.map(\.frame.thirdParty) == [false, false, false, false, true, true, false, false, true])
        #expect(list[1].redirect?.chainStart == 0)
        #expect(stream.topSite == "news.example")
    }

    @Test("without a page load, the page the first request names is the top site: a device capture of an app's API calls is third-party to its app page")
    func topSiteFromTheIssuingPage() {
        var list = [
            exchange("POST", url: "https://api.example.com/login", headers: [("Origin", "capacitor://localhost"), ("Content-Type", "application/json")], body: "{}"),
            exchange(url: "https://api.example.com/me", headers: [("Origin", "capacitor://localhost")], at: 1),
        ]
        for i in list.indices { list[i].sequence = i }
        ExchangeClassifier.classify(&list)
        #expect(list.map(\.frame.label) == ["main-3p", "main-3p"])
        #expect(Recording(name: "r", sourceFormat: "har", exchanges: list).topLevelSite == "localhost")
        // A Referer names the page too; with neither, the request's own site stands in.
        var referred = [exchange(url: "https://cdn.b.example/app.js", headers: [("Referer", "https://m.a.example/home")])]
        ExchangeClassifier.classify(&referred)
        #expect(referred[0].frame.thirdParty)
        var bare = [exchange(url: "https://cdn.b.example/app.js")]
        ExchangeClassifier.classify(&bare)
        #expect(!bare[0].frame.thirdParty)
    }

    @Test("body kinds", arguments: [
        ("multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--b--", BodyKind.formData),
        ("multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"f\"; FileName=\"x.png\"\r\n\r\n1\r\n--b--", .formDataWithFile),
        ("application/x-www-form-urlencoded", "a=1&b=2", .urlEncoded),
        ("application/json", "{}", .text),
        ("application/octet-stream", "abc", .binary),
        ("", "plain words", .text),
    ])
    func bodyKinds(_ type: String, _ body: String, _ kind: BodyKind) {
        #expect(ExchangeClassifier.bodyKind(of: RecordedRequest(method: "POST", url: "https://a/", headers: [HeaderField("Content-Type", type)], body: Data(body.utf8))) == kind)
    }

    @Test("bytes that are not UTF-8 are binary; no body is none")
    func binaryBytes() {
        #expect(ExchangeClassifier.bodyKind(of: RecordedRequest(method: "POST", url: "https://a/", body: Data([0xFF, 0xFE, 0x00]))) == .binary)
        #expect(ExchangeClassifier.bodyKind(of: RecordedRequest(method: "GET", url: "https://a/")) == BodyKind.none)
    }

    @Test("redirect chains link each 3xx to the later request for its Location")
    func chains() {
        var list = [
            exchange("POST", url: "https://a.example/login", status: 302, location: "/step"),
            exchange(url: "https://other.example/unrelated", at: 0.01),
            exchange(url: "https://a.example/step", status: 301, location: "https://b.example/home#top", at: 0.02),
            exchange(url: "https://b.example/home", at: 0.03),
        ]
        for i in list.indices { list[i].sequence = i }
        ExchangeClassifier.classify(&list)
        #expect(list[0].redirect == RedirectLink(chainStart: 0, hop: 0, next: 2))
        #expect(list[1].redirect == nil)
        #expect(list[2].redirect == RedirectLink(chainStart: 0, hop: 1, next: 3))
        #expect(list[3].redirect == RedirectLink(chainStart: 0, hop: 2, next: nil))
    }

    @Test("a 307 links only to a request that keeps the method")
    func method307() {
        var list = [
            exchange("POST", url: "https://a.example/pay", body: "x", status: 307, location: "/pay2"),
            exchange("GET", url: "https://a.example/pay2", at: 0.01),
            exchange("POST", url: "https://a.example/pay2", body: "x", at: 0.02),
        ]
        for i in list.indices { list[i].sequence = i }
        ExchangeClassifier.classify(&list)
        #expect(list[0].redirect?.next == 2)
        #expect(list[1].redirect == nil)
    }

    @Test("third-party frames: a request to another site than the top document's")
    func thirdParty() {
        var list = [
            exchange(url: "https://www.shop.example.com/", headers: [("Accept", "text/html")]),
            exchange(url: "https://api.shop.example.com/x", at: 0.1),
            exchange(url: "https://ads.tracker.net/frame", headers: [("Sec-Fetch-Dest", "iframe")], at: 0.2),
            exchange(url: "https://ads.tracker.net/api", headers: [("Referer", "https://ads.tracker.net/frame")], at: 0.3),
        ]
        for i in list.indices { list[i].sequence = i }
        ExchangeClassifier.classify(&list)
        #expect(list.map(\.frame.label) == ["main", "main", "iframe-3p", "iframe-3p"])
    }
}

@Suite("Request targets and sites")
struct RequestTargetTests {
    @Test("absolute URLs split into scheme, host, port, path and query")
    func parts() throws {
        let t = try #require(RequestTarget("HTTPS://User@Shop.Example.COM:8443/a/b?x=1#frag"))
        #expect(t.scheme == "https" && t.host == "shop.example.com" && t.port == 8443 && t.path == "/a/b" && t.query == "x=1")
        #expect(t.origin == "https://shop.example.com:8443")
        let v6 = try #require(RequestTarget("http://[::1]:8080"))
        #expect(v6.host == "::1" && v6.port == 8080 && v6.path == "/")
        #expect(RequestTarget("/relative") == nil)
        #expect(RequestTarget("http://host:99999/") == nil)
    }

    @Test("Location values resolve against the request URL")
    func resolve() {
        #expect(RequestTarget.resolve("/home", against: "https://a.example/login?x") == "https://a.example/home")
        #expect(RequestTarget.resolve("next", against: "https://a.example/a/b") == "https://a.example/a/next")
        #expect(RequestTarget.resolve("https://b.example/", against: "https://a.example/") == "https://b.example/")
    }

    @Test("sites: one label above the public suffix", arguments: [
        ("www.example.com", "example.com"), ("a.b.example.co.uk", "example.co.uk"), ("m.taobao.com.cn", "taobao.com.cn"),
        ("localhost", "localhost"), ("10.0.0.1", "10.0.0.1"), ("example.com", "example.com"),
        // Two-label suffixes the common set lacked, so two news sites read as one.
        ("www.ynet.co.il", "ynet.co.il"), ("go.calcalist.co.il", "calcalist.co.il"), ("news.bbc.co.uk", "bbc.co.uk"),
        // The private section: two apps on one hosting suffix are two sites.
        ("alice.github.io", "alice.github.io"), ("x.bucket.s3.amazonaws.com", "bucket.s3.amazonaws.com"),
        // A wildcard rule and its exception: every label under `ck` is a suffix but `www.ck`.
        ("shop.example.ck", "shop.example.ck"), ("a.www.ck", "www.ck"),
        // An IDN suffix as a recorded URL carries it (公司.cn).
        ("www.shop.xn--55qx5d.cn", "shop.xn--55qx5d.cn"),
        ("co.il", "co.il"), ("::1", "::1"),
    ])
    func sites(_ host: String, _ site: String) {
        #expect(Site.of(host: host) == site)
    }

    @Test("public suffixes: the whole list, for the cookie jar's guard", arguments: [
        ("com", true), ("co.il", true), ("github.io", true), ("anything.ck", true), ("www.ck", false),
        ("example.com", false), ("ynet.co.il", false), ("localhost", true), ("10.0.0.1", false),
    ])
    func publicSuffixes(_ host: String, _ isSuffix: Bool) {
        #expect(Site.isPublicSuffix(host) == isSuffix)
    }

    @Test("the compiled list is the whole Public Suffix List")
    func wholeList() {
        #expect(PublicSuffixList.shared.count > 9_000)
    }
}
