import Foundation
import Testing
import TrafficModel
@testable import CookieJar

@Suite("Cookie provenance (docs/model.md, Where a cookie came from)")
struct CookieProvenanceTests {
    static let t0 = 1_800_000_000.0

    static func exchange(_ sequence: Int, at offset: Double, _ url: String, cookie: String? = nil, setCookie: [String] = []) -> Exchange {
        Exchange(sequence: sequence, startedAt: t0 + offset, duration: 0.01,
            request: RecordedRequest(method: "GET", url: url, headers: cookie.map { [HeaderField("Cookie", $0)] } ?? []),
            response: RecordedResponse(status: 200, headers: HeaderList(setCookie.lazy.map { HeaderField("Set-Cookie", $0) })))
    }

    @Test("server-set cookies name the exchange that set them; unexplained ones are script-set or pre-existing")
    func kinds() throws {
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: [
            Self.exchange(0, at: 0, "https://a.example/", cookie: "login=1", setCookie: ["sid=9; Path=/"]),
            Self.exchange(1, at: 1, "https://a.example/js", cookie: "login=1; sid=9"),
            Self.exchange(2, at: 2, "https://a.example/api", cookie: "login=1; sid=9; ab=B"),
        ])
        let p = CookieProvenance(recording: recording)
        #expect(p.sent[0].map(\.kind) == [.preExisting])
        #expect(p.sent[1].map { "\($0.name):\($0.kind.rawValue):\($0.setBy.map(String.init) ?? "-")" } == ["login:pre-existing:0", "sid:server-set:0"])
        let ab = try #require(p.sent[2].first { $0.name == "ab" })
        #expect(ab.kind == .scriptSet && ab.setBy == 2)
        let inference = try #require(p.inferred[2].first)
        #expect(inference.kind == .scriptSet)
        #expect(inference.windowStart == Self.t0 + 1)  // after /js, which did not carry it
    }

    @Test("the same cookie carried to two hosts of one site is the site's domain cookie, there from the start")
    func preexistingWidenedToTheSite() throws {
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: [
            Self.exchange(0, at: 0, "https://www.shop.example/", cookie: "SID=s1; ab=1"),
            Self.exchange(1, at: 1, "https://api.shop.example/cart", cookie: "SID=s1; ab=2"),
            Self.exchange(2, at: 2, "https://www.shop.example/next", cookie: "SID=s1; ab=1"),
        ])
        let p = CookieProvenance(recording: recording)
        // SID: the same value on api. as on www.: pre-existing since #0, no script write.
        let sid = try #require(p.sent[1].first { $0.name == "SID" })
        #expect(sid.kind == .preExisting && sid.setBy == 0)
        let widened = try #require(p.inferred[1].first { $0.cookie.name == "SID" })
        #expect(widened.kind == .preExisting && widened.cookie.domain == "shop.example" && !widened.cookie.hostOnly)
        // The host-only guess of #0 gives way to the domain cookie among the starting cookies.
        #expect(p.startingCookies.filter { $0.name == "SID" }.map(\.domain) == ["shop.example"])
        // ab: another value on api., the first request there: api.'s own cookie, which no
        // request showed absent, so there from the start too (a script of www. cannot
        // write api.'s host-only cookie).
        #expect(p.sent[1].first { $0.name == "ab" }?.kind == .preExisting)
        // Back on www., the domain cookie explains SID: no deletion, no new inference.
        #expect(p.sent[2].first { $0.name == "SID" }?.kind == .preExisting)
        #expect(!p.inferred[2].contains { $0.cookie.name == "SID" })
    }

    @Test("a cookie guessed host-only there from the start, which the server then sets or deletes for a domain over its host, was that domain's cookie: no copy of it stays behind")
    func guessReplacedByADomainSetCookie() throws {
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: [
            Self.exchange(0, at: 0, "https://dev.shop.example/", cookie: "ref=old; ids=x", setCookie: ["ref=new; Domain=.shop.example; Path=/", "ids=; Domain=.shop.example; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]),
            Self.exchange(1, at: 1, "https://dev.shop.example/app.js", cookie: "ref=new"),
            Self.exchange(2, at: 2, "https://tap.shop.example/frame", cookie: "ref=new"),
        ])
        let p = CookieProvenance(recording: recording)
        // #1 carries one ref, the server's, and no ids: nothing inferred, no deletion.
        #expect(p.sent[1].map { "\($0.name):\($0.kind.rawValue)" } == ["ref:server-set"])
        #expect(!p.inferred[1].contains { $0.kind == .scriptDeleted || $0.kind == .scriptSet })
        // The cookies there from the start are the domain's, which the Set-Cookie replaced
        // and deleted: no host-only copy of the old ref or of ids beside them.
        let start = p.startingCookies.map { "\($0.name)=\($0.value)@\($0.domain)\($0.hostOnly ? " host-only" : "")" }.sorted()
        #expect(start == ["ids=x@shop.example", "ref=old@shop.example"])
        #expect(p.sent[2].map { "\($0.name):\($0.kind.rawValue)" } == ["ref:server-set"])
    }

    @Test("E8: a request carrying a cookie's value from before a script's write seconds earlier had its header built before it: no write back, no deletion, and later requests need no new write; past the window it is a write")
    func headerBuiltBeforeWrite() throws {
        func flow(queuedAt offset: Double) -> Recording {
            Recording(name: "p", sourceFormat: "test", exchanges: [
                Self.exchange(0, at: 0, "https://news.example/", cookie: "visit=1"),
                Self.exchange(1, at: 0.3, "https://news.example/feed", cookie: "visit=2; hit=1"),
                Self.exchange(2, at: offset, "https://news.example/hero.jpg", cookie: "visit=1"),
                Self.exchange(3, at: offset + 0.5, "https://news.example/more", cookie: "visit=2; hit=1"),
            ])
        }
        let queued = CookieProvenance(recording: flow(queuedAt: 0.9))
        // visit carried from before the write, hit lacked from before it.
        #expect(queued.inferred[2].map { "\($0.kind.rawValue):\($0.cookie.name)" } == ["header-before-write:visit", "header-before-write:hit"])
        #expect(queued.sent[2].map { "\($0.name):\($0.kind.rawValue):\($0.setBy ?? -1)" } == ["visit:pre-existing:0"])
        #expect(queued.inferred[3].isEmpty, "\(queued.inferred[3])")
        // Ten seconds on, the old value is a script putting it back, and hit is deleted.
        let late = CookieProvenance(recording: flow(queuedAt: 10))
        #expect(Set(late.inferred[2].map(\.kind)) == [.scriptSet, .scriptDeleted])
    }

    @Test("E8 for a Set-Cookie: a request carrying the value a response's Set-Cookie replaced moments before had its header built before it landed: no script write; past the window it is a script putting it back")
    func headerBuiltBeforeSetCookie() throws {
        func flow(queuedAt offset: Double) -> Recording {
            Recording(name: "p", sourceFormat: "test", exchanges: [
                Self.exchange(0, at: 0, "http://beacon.k.example/check", cookie: "SB=a118", setCookie: ["SB=a109; Domain=k.example; Path=/"]),
                Self.exchange(1, at: offset, "http://api.k.example/um", cookie: "SB=a118"),
                Self.exchange(2, at: offset + 0.5, "http://beacon.k.example/p.gif", cookie: "SB=a109"),
            ])
        }
        let queued = CookieProvenance(recording: flow(queuedAt: 0.03))
        // The guess on beacon. is the domain's cookie (widened), and the request to api.
        // carried its value from before #0's Set-Cookie landed.
        #expect(queued.inferred[1].map(\.kind) == [.preExisting, .headerBeforeWrite], "\(queued.inferred[1])")
        #expect(queued.sent[1].map { "\($0.name):\($0.kind.rawValue):\($0.setBy ?? -1)" } == ["SB:pre-existing:0"])
        #expect(queued.sent[2].map { "\($0.name):\($0.kind.rawValue):\($0.setBy ?? -1)" } == ["SB:server-set:0"])
        #expect(queued.inferred[2].isEmpty, "\(queued.inferred[2])")
        let late = CookieProvenance(recording: flow(queuedAt: 10))
        #expect(late.inferred[1].map(\.kind).contains(.scriptSet), "\(late.inferred[1])")
    }

    @Test("a script's cookie carried to another host of its site is the site's domain cookie the script wrote once, unless a request to the site went without it after the write: then the other host's own cookie")
    func scriptCookieWidenedToTheSite() throws {
        let flow = [
            Self.exchange(0, at: 0, "https://www.shop.example/"),
            Self.exchange(1, at: 1, "https://www.shop.example/a", cookie: "_ga=G1"),
            Self.exchange(2, at: 2, "https://api.shop.example/x", cookie: "_ga=G1"),
        ]
        let p = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: flow))
        #expect(p.sent[1].first?.kind == .scriptSet)
        // On api., the same value: the write of #1, scoped to the site; no second write.
        #expect(p.sent[2].first?.kind == .scriptSet && p.sent[2].first?.setBy == 1)
        #expect(p.inferred[2].map(\.kind) == [.domainWidened] && p.inferred[2].first?.cookie.domain == "shop.example")
        // img. went without it after the write: the cookie was www.'s own, and api.'s its
        // own cookie, which no request to api. showed absent: there from the start.
        var lacking = flow
        lacking.insert(Self.exchange(2, at: 1.5, "https://img.shop.example/p.png"), at: 2)
        for k in lacking.indices { lacking[k].sequence = k }
        let q = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: lacking))
        #expect(q.inferred[3].map(\.kind) == [.preExisting] && q.inferred[3].first?.cookie.hostOnly == true)
        // A request to api. without it after the write shows it new there: a write.
        lacking.insert(Self.exchange(3, at: 1.7, "https://api.shop.example/y"), at: 3)
        for k in lacking.indices { lacking[k].sequence = k }
        let r = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: lacking))
        #expect(r.inferred[4].map(\.kind) == [.scriptSet] && r.inferred[4].first?.cookie.hostOnly == true)
    }

    @Test("a long value another host of the site carried first, then carried here after a request here went without it: a write here no later than the first host carried it; a short value is no fingerprint, but for a long enough name")
    func siblingCarriedBoundsTheWrite() throws {
        func flow(_ value: String, name: String = "_utma") -> [Exchange] {
            [
                Self.exchange(0, at: 0, "https://www.shop.example/"),
                Self.exchange(1, at: 1, "https://www.shop.example/a", cookie: "\(name)=\(value)"),
                Self.exchange(2, at: 1.5, "https://go.shop.example/frame"),
                Self.exchange(3, at: 10, "https://go.shop.example/p.png", cookie: "\(name)=\(value)"),
            ]
        }
        // go.'s request at 1.5 went without it, so it is no domain cookie www. had: a write
        // on go. whose window opens at 1.5, yet www. showed the value at 1.
        let long = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: flow("1.3899.1304342324.6")))
        let write = try #require(long.inferred[3].first)
        #expect(write.kind == .scriptSet && write.cookie.domain == "go.shop.example")
        #expect(write.windowStart == Self.t0 + 1.5, "after go.'s request that went without it")
        #expect(write.writtenBy == Self.t0 + 1, "no later than www. carried it")
        let short = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: flow("1")))
        #expect(short.inferred[3].first?.writtenBy == nil)
        // A site's own cookie (nytimes.com's circgroup=digi2): the name and value together are one write's.
        let named = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: flow("digi2", name: "circgroup")))
        #expect(named.inferred[3].first?.writtenBy == Self.t0 + 1)
        // A short value beside a fingerprinted one, both first carried by www.'s #1, came
        // with it.
        let together = flow("1.3899.1304342324.6").map { e -> Exchange in
            guard let cookie = e.request.headers.first("Cookie") else { return e }
            return Self.exchange(e.sequence, at: e.startedAt - Self.t0, e.request.url, cookie: cookie + "; _utmt=1")
        }
        let both = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: together))
        #expect(both.inferred[3].map { "\($0.cookie.name):\($0.writtenBy.map { $0 - Self.t0 } ?? -1)" } == ["_utma:1.0", "_utmt:1.0"], "\(both.inferred[3])")
    }

    @Test("a cookie first carried to a third party the page's document sent the request to was written by no script of either: its source is unknown, there from the start; after a request to its host without it, a write in between")
    func noScriptWritesAnotherSitesCookie() throws {
        func ad(_ sequence: Int, at offset: Double, _ host: String, cookie: String?) -> Exchange {
            var headers: HeaderList = [HeaderField("Referer", "https://www.shop.example/")]
            if let cookie { headers.append(HeaderField("Cookie", cookie)) }
            var e = Exchange(sequence: sequence, startedAt: Self.t0 + offset, duration: 0.01, request: RecordedRequest(method: "GET", url: "https://\(host)/p?\(sequence)", headers: headers),
                             response: RecordedResponse(status: 200, headers: []))
            e.frame = Frame(kind: .main, thirdParty: true)
            return e
        }
        let page = Self.exchange(0, at: 0, "https://www.shop.example/")
        let p = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: [
            page, ad(1, at: 1, "cdn.ads.example", cookie: nil), ad(2, at: 2, "px.ads.example", cookie: "uid=7"),
        ]))
        #expect(p.sent[2].first?.kind == .preExisting && p.inferred[2].map(\.kind) == [.preExisting])
        let q = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: [
            page, ad(1, at: 1, "px.ads.example", cookie: nil), ad(2, at: 2, "px.ads.example", cookie: "uid=7"),
        ]))
        #expect(q.sent[2].first?.kind == .scriptSet, "px. went without it at #1: it came in between")
    }

    @Test("a top-level load with no Referer that went without the jar's cookies is the recording browser started afresh (a page-test tool's next run): forgotten, not deleted by script")
    func freshStart() throws {
        func document(_ sequence: Int, at offset: Double, cookie: String?, referer: String? = nil) -> Exchange {
            var e = Self.exchange(sequence, at: offset, "https://www.shop.example/", cookie: cookie, setCookie: sequence == 0 ? ["sid=1; Path=/"] : [])
            if let referer { e.request.headers.append(HeaderField("Referer", referer)) }
            e.initiator = .navigation
            return e
        }
        let api = Self.exchange(1, at: 1, "https://api.other.example/x", cookie: nil, setCookie: ["t=9; Path=/"])
        let fresh = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: [document(0, at: 0, cookie: nil), api, document(2, at: 10, cookie: nil)]))
        // The whole jar went: this host's sid and the other site's t.
        #expect(Set(fresh.inferred[2].map(\.kind)) == [.forgotten] && Set(fresh.inferred[2].map(\.cookie.name)) == ["sid", "t"])
        // A load the page made (a Referer) lacking sid: a script deleted it, as before.
        let followed = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: [document(0, at: 0, cookie: nil), api, document(2, at: 10, cookie: nil, referer: "https://www.shop.example/")]))
        #expect(followed.inferred[2].map(\.kind) == [.scriptDeleted])
    }

    @Test("an earlier request to the site that went without the cookie keeps it host-only: each host's own cookie, there from the start")
    func widenedOnlyWithoutContraryEvidence() throws {
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: [
            Self.exchange(0, at: 0, "https://www.shop.example/", cookie: "SID=s1"),
            Self.exchange(1, at: 1, "https://img.shop.example/logo.png"),
            Self.exchange(2, at: 2, "https://api.shop.example/cart", cookie: "SID=s1"),
        ])
        let p = CookieProvenance(recording: recording)
        // img. lacked SID: a domain cookie there from the start would have gone with it. No
        // request to api. went without it: api.'s own cookie, there from the start.
        #expect(p.sent[2].first?.kind == .preExisting)
        #expect(p.inferred[2].first?.cookie.hostOnly == true)
        #expect(p.startingCookies.map(\.domain) == ["www.shop.example", "api.shop.example"])
    }

    @Test("a cookie the jar would send that the request lacks was deleted by script")
    func deletion() {
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: [
            Self.exchange(0, at: 0, "https://a.example/", setCookie: ["tmp=1"]),
            Self.exchange(1, at: 1, "https://a.example/next"),
        ])
        let p = CookieProvenance(recording: recording)
        #expect(p.inferred[1].map(\.kind) == [.scriptDeleted])
        #expect(p.inferred[1].first?.cookie.name == "tmp")
    }

    @Test("an HttpOnly cookie a request lacks was not deleted by script: document.cookie cannot remove one")
    func httpOnlyNotDeletedByScript() {
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: [
            Self.exchange(0, at: 0, "https://a.example/", setCookie: ["sid=1; HttpOnly", "tmp=1"]),
            Self.exchange(1, at: 1, "https://a.example/next"),
        ])
        let p = CookieProvenance(recording: recording)
        #expect(p.inferred[1].map(\.cookie.name) == ["tmp"])
    }

    @Test("a third-party request without a cookie the jar holds shows no deletion: the recording engine's third-party policy may have kept it off")
    func thirdPartyLackIsNoDeletion() {
        // The API is third-party to the page (an app page on its own scheme, or another
        // site): its login's cookie is missing from the next call, as WebKit's full
        // third-party cookie blocking sends it.
        var exchanges = [
            Self.exchange(0, at: 0, "https://m.shop.example/"),
            Self.exchange(1, at: 1, "https://api.other.example/login", setCookie: ["sid=1; Path=/; Secure; SameSite=None"]),
            Self.exchange(2, at: 2, "https://api.other.example/me"),
        ]
        for k in 1...2 { exchanges[k].frame = Frame(kind: .main, thirdParty: true) }
        let p = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: exchanges))
        #expect(p.inferred[2].isEmpty)
        // The same lack on a first-party request is a script's deletion.
        exchanges[2].frame = Frame(kind: .main, thirdParty: false)
        #expect(CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: exchanges)).inferred[2].map(\.kind) == [.scriptDeleted])
    }

    @Test("a cookie only ever carried under one directory is that directory's cookie, not deleted by the next request outside it")
    func pathNarrowed() throws {
        // pcap2har's out-of-order: dcPrevPath goes to /home/... twice and to no other path.
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: [
            Self.exchange(0, at: 0, "http://www.news.example/"),
            Self.exchange(1, at: 1, "http://www.news.example/home/0,7340,L-8,00.html", cookie: "dcPrevPath=8.Central"),
            Self.exchange(2, at: 2, "http://www.news.example/Common/jquery.js"),
            Self.exchange(3, at: 3, "http://www.news.example/home/0,7340,L-8,00.html", cookie: "dcPrevPath=8.Central"),
            Self.exchange(4, at: 4, "http://www.news.example/home/other.html"),
        ])
        let p = CookieProvenance(recording: recording)
        #expect(p.sent[1].first?.kind == .scriptSet)
        // #2 lies outside /home: the guessed path "/" narrows to /home; nothing deleted.
        let narrowed = try #require(p.inferred[2].first)
        #expect(narrowed.kind == .pathNarrowed && narrowed.cookie.path == "/home" && narrowed.cookie.name == "dcPrevPath")
        // #3 carries the same cookie: the narrowed cookie explains it, written at #1.
        #expect(p.sent[3].first.map { "\($0.kind.rawValue)@\($0.setBy ?? -1)" } == "script-set@1")
        #expect(p.inferred[3].isEmpty)
        // #4 lies under /home and lacks it: now it was deleted.
        #expect(p.inferred[4].map(\.kind) == [.scriptDeleted])
    }

    @Test("a cookie first carried by a redirect hop of the session's first page load was there from the start, at the path that explains the hop before it")
    func preexistingOnTheFirstLoadsRedirect() throws {
        // pcap2har's out-of-order: `/` redirects to /home/..., whose request carries
        // dcPrevPath; no page has loaded yet, so no script wrote it.
        func document(_ sequence: Int, _ url: String, cookie: String?, status: Int, location: String?) -> Exchange {
            Exchange(sequence: sequence, startedAt: Self.t0 + Double(sequence) * 0.3, duration: 0.1,
                request: RecordedRequest(method: "GET", url: url, headers: [HeaderField("Accept", "text/html")] + (cookie.map { [HeaderField("Cookie", $0)] } ?? [])),
                response: RecordedResponse(status: status, headers: location.map { [HeaderField("Location", $0)] } ?? []))
        }
        var exchanges = [
            document(0, "http://www.news.example/", cookie: "ga=1", status: 302, location: "/home/0,7340,L-8,00.html"),
            document(1, "http://www.news.example/home/0,7340,L-8,00.html", cookie: "dcPrevPath=8.Central; ga=1", status: 200, location: nil),
            Self.exchange(2, at: 1, "http://www.news.example/Common/jquery.js", cookie: "ga=1"),
            Self.exchange(3, at: 2, "http://www.news.example/api/x", cookie: "ga=1; later=1"),
        ]
        ExchangeClassifier.classify(&exchanges)
        #expect(exchanges[1].redirect?.hop == 1)
        let p = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: exchanges))
        let inferred = try #require(p.inferred[1].first)
        #expect(inferred.kind == .preExisting && inferred.cookie.path == "/home")
        #expect(p.sent[1].first { $0.name == "dcPrevPath" }?.kind == .preExisting)
        #expect(p.startingCookies.map { "\($0.name)\($0.path)" } == ["ga/", "dcPrevPath/home"])
        // Not sent to /Common: nothing deleted. Once a page has loaded, a new cookie is a script's.
        #expect(p.inferred[2].isEmpty)
        #expect(p.sent[3].first { $0.name == "later" }?.kind == .scriptSet)
    }

    @Test("a cookie carried outside the first request's directory is never narrowed, nor is a server's path")
    func pathNarrowedOnlyWhereTheRecordingShowsIt() throws {
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: [
            Self.exchange(0, at: 0, "https://a.example/app/index.html", cookie: "pre=1", setCookie: ["srv=1; Path=/"]),
            Self.exchange(1, at: 1, "https://a.example/api/user", cookie: "pre=1; srv=1"),
            Self.exchange(2, at: 2, "https://a.example/other"),
        ])
        let p = CookieProvenance(recording: recording)
        // pre went to /app, then to /api outside it: it has no directory of its own, so #2
        // lacking it is a deletion, as is srv, which the server set for "/".
        #expect(p.inferred[2].map(\.kind) == [.scriptDeleted, .scriptDeleted])
        // A cookie there from the start that narrows is placed with the narrower path.
        let later = Recording(name: "q", sourceFormat: "test", exchanges: [
            Self.exchange(0, at: 0, "https://a.example/m/index.html", cookie: "pre=1"),
            Self.exchange(1, at: 1, "https://a.example/static/app.js"),
        ])
        let q = CookieProvenance(recording: later)
        #expect(q.inferred[1].map(\.kind) == [.pathNarrowed])
        #expect(q.startingCookies.map(\.path) == ["/m"])
    }

    @Test("native code's requests (NC1) say nothing of the page's jar; their Set-Cookie explains the page's cookie later, and a page request before the cookie crossed over shows no deletion")
    func nativeRequests() throws {
        var login = Self.exchange(0, at: 0, "https://api.bank.example/v1/login", cookie: "device=ios17", setCookie: ["sid=c4; Domain=bank.example; Path=/"])
        login.initiator = .native
        var messages = Self.exchange(3, at: 3, "https://api.bank.example/v1/messages", cookie: "sid=c4; device=ios17")
        messages.initiator = .native
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: [
            login,
            // The web view has not received sid yet (J1): no script deleted it.
            Self.exchange(1, at: 0.4, "https://m.bank.example/account"),
            Self.exchange(2, at: 1.8, "https://m.bank.example/api/balance", cookie: "sid=c4"),
            messages,
            // Once the page has carried it, a request that lacks it again shows a deletion.
            Self.exchange(4, at: 5, "https://m.bank.example/logout-done"),
        ])
        let p = CookieProvenance(recording: recording)
        // What native code carried is neither inferred nor listed: it is NativeJar's.
        #expect(p.sent[0].isEmpty && p.inferred[0].isEmpty)
        #expect(p.sent[3].isEmpty && p.inferred[3].isEmpty)
        #expect(p.inferred[1].isEmpty)
        #expect(p.sent[2].map { "\($0.name):\($0.kind.rawValue):\($0.setBy.map(String.init) ?? "-")" } == ["sid:server-set:0"])
        #expect(p.inferred[4].map(\.kind) == [.scriptDeleted])
        // device= reached the page's jar from nowhere the recording shows: it is not there from the start.
        #expect(p.startingCookies.isEmpty)
    }

    @Test("an expired cookie is not inferred as deleted")
    func expiredIsNotDeleted() {
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: [
            Self.exchange(0, at: 0, "https://a.example/", setCookie: ["tmp=1; Max-Age=1"]),
            Self.exchange(1, at: 5, "https://a.example/next"),
        ])
        #expect(CookieProvenance(recording: recording).inferred[1].isEmpty)
    }

    @Test("cookies split over several Cookie fields (HTTP/2) are read together")
    func splitHeader() {
        let pairs = CookieProvenance.requestCookies([HeaderField("cookie", "a=1"), HeaderField("cookie", "b=2; c")])
        #expect(pairs.map { "\($0.name)=\($0.value)" } == ["a=1", "b=2", "=c"])
    }

    /// A flow where scripts write cookies long after the requests that bound their window;
    /// some overwrite `v`, which the server set for the whole domain, so their window is
    /// bounded by requests to any host under it.
    static func scriptFlow(seed: UInt64) -> [Exchange] {
        var state = seed
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        let urls = ["https://a.example/", "https://a.example/api/x", "http://a.example/img", "https://b.a.example/", "https://c.example/"]
        var out: [Exchange] = []
        for i in 0..<60 {
            var cookies: [String] = []
            for name in ["s", "t", "u", "v"] where next(3) == 0 { cookies.append("\(name)=\(next(3))") }
            let setCookie = next(5) == 0 ? ["v=\(next(3)); Path=/; Domain=a.example"] : []
            out.append(exchange(i, at: Double(i), urls[next(urls.count)], cookie: cookies.isEmpty ? nil : cookies.joined(separator: "; "), setCookie: setCookie))
        }
        return out
    }

    @Test("a walker that remembers two requests, asking for older ones, gives what the whole recording gives")
    func walkerWithShortMemory() throws {
        var asked = 0
        for seed in UInt64(1)...300 {
            let exchanges = Self.scriptFlow(seed: seed)
            let whole = CookieProvenance(recording: Recording(name: "p", sourceFormat: "test", exchanges: exchanges))
            var walker = CookieProvenance.Walker(recentCapacity: 2) { before, visit in
                asked += 1
                for e in exchanges[..<before].reversed() {
                    guard let target = e.request.target else { continue }
                    if !visit(CookieProvenance.PastRequest(sequence: e.sequence, startedAt: e.startedAt, target: target, headers: e.request.headers, isEvidence: e.evidenceGap == nil)) { return }
                }
            }
            for (k, e) in exchanges.enumerated() {
                let step = try walker.add(e)
                #expect(step.sent == whole.sent[k] && step.inferred == whole.inferred[k], "seed \(seed), exchange \(k)")
            }
        }
        #expect(asked > 100, "the flows reach past the walker's memory")
    }

    @Test("the requests a cookie could have gone with are found by host as a scan of every remembered request finds them, in a ring that forgets")
    func recentRequestsByHost() throws {
        let hosts = ["a.example", "www.a.example", "m.www.a.example", "b.example", "x.b.example", "localhost", "intranet",
                     "10.0.0.1", "1.0.0.1", "shop.co.uk", "m.shop.co.uk", "co.uk", "example"]
        var state: UInt64 = 7
        func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
        for capacity in [1, 3, 16, Int.max] {
            var recent = RecentRequests(capacity: capacity)
            var all: [CookieProvenance.PastRequest] = []
            for sequence in 0..<400 {
                let host = hosts[next(hosts.count)]
                let headers: HeaderList = next(2) == 0 ? [HeaderField("Cookie", "c=\(next(2))")] : []
                let request = CookieProvenance.PastRequest(sequence: sequence, startedAt: Double(sequence), target: RequestTarget("https://\(host)/p")!, headers: headers)
                let forgotten = recent.append(request)
                all.append(request)
                let kept = Array(all.suffix(min(capacity, all.count)))
                #expect(forgotten?.sequence == (all.count > capacity ? all[all.count - capacity - 1].sequence : nil))
                for domain in hosts + ["www.a.example", "a.example"] {
                    for hostOnly in [true, false] {
                        let cookie = Cookie(name: "c", value: "\(next(2))", domain: domain, hostOnly: hostOnly, path: "/", creation: 0)
                        func matches(_ host: String) -> Bool { hostOnly ? host == domain : CookieStore.domainMatches(host, domain) }
                        var visited: [Int] = []
                        recent.forEachSlotNewestFirst(matching: cookie) { slot in
                            if matches(recent[slot].host) { visited.append(recent[slot].sequence) }
                            return true
                        }
                        let scanned = kept.reversed().filter { matches($0.host) }.map(\.sequence)
                        #expect(visited == scanned, "capacity \(capacity), cookie on \(domain), after \(sequence)")
                        #expect(recent.anyLacks(cookie) == kept.contains { $0.lacks(cookie) })
                        let before = next(sequence + 1)
                        #expect(recent.latest(lacking: cookie, before: before)?.sequence == kept.last { $0.sequence < before && $0.lacks(cookie) }?.sequence)
                    }
                }
            }
        }
    }

    @Test("across thousands of sites, a cookie there from the start on one host of each is widened to its site when a second host carries it")
    func widensAcrossManySites() throws {
        var exchanges: [Exchange] = []
        let sites = 1_500
        for k in 0..<sites {
            exchanges.append(Self.exchange(exchanges.count, at: Double(exchanges.count), "https://www.site\(k).example/", cookie: "pref=\(k)"))
        }
        for k in 0..<sites {
            exchanges.append(Self.exchange(exchanges.count, at: Double(exchanges.count), "https://m.site\(k).example/", cookie: "pref=\(k)"))
        }
        let recording = Recording(name: "p", sourceFormat: "test", exchanges: exchanges)
        let whole = CookieProvenance(recording: recording)
        var walker = CookieProvenance.Walker(recentCapacity: 4096)
        for (k, e) in exchanges.enumerated() {
            let step = try walker.add(e)
            #expect(step.sent == whole.sent[k] && step.inferred == whole.inferred[k], "exchange \(k)")
        }
        for k in 0..<sites {
            let second = whole.inferred[sites + k]
            #expect(second.map(\.kind) == [.preExisting] && second.first?.cookie.domain == "site\(k).example" && second.first?.cookie.hostOnly == false, "site \(k)")
            #expect(whole.sent[sites + k].first?.setBy == k, "site \(k): first seen on www")
        }
    }

    @Test("the writes E8 reads are let go past its window, and a burst of more than the bound within the window keeps them all, pruned once per doubling")
    func recentWritesBounded() throws {
        var walker = CookieProvenance.Walker(recentCapacity: 4096)
        var sequence = 0
        func serve(_ k: Int, at time: Double) throws {
            defer { sequence += 1 }
            _ = try walker.add(Self.exchange(sequence, at: time, "https://www.site\(k).example/", cookie: "v=old", setCookie: ["v=new\(k)"]))
        }
        // One Set-Cookie change a second: the window holds a few, the map stays bounded.
        let bound = CookieProvenance.Walker.recentWritesKept
        for k in 0..<(bound + 100) { try serve(k, at: Double(k)) }
        #expect(walker.recentWrites.count <= bound)
        // More changes than the bound within a second: all in the window, all kept, and the
        // bar rose instead of filtering on every write.
        for k in 0..<(bound + 100) { try serve(bound + 100 + k, at: 5_000 + Double(k) / 10_000) }
        #expect(walker.recentWrites.count > bound && walker.recentWritesLimit > bound, "\(walker.recentWrites.count), bar \(walker.recentWritesLimit)")
    }

    @Test("guesses whose cookies scripts deleted are let go: the walker's index of them stays within twice the jar, and widening still finds the live ones")
    func staleGuessesLetGo() throws {
        var walker = CookieProvenance.Walker(recentCapacity: 4096)
        var sequence = 0
        func add(_ url: String, cookie: String?) throws -> [CookieProvenance.Inference] {
            defer { sequence += 1 }
            return try walker.add(Self.exchange(sequence, at: Double(sequence), url, cookie: cookie)).inferred
        }
        // Each site's cookie is there from the start, then gone from the next request.
        for k in 0..<1_500 {
            _ = try add("https://www.site\(k).example/", cookie: "pref=\(k)")
            #expect(try add("https://www.site\(k).example/next", cookie: nil).map(\.kind) == [.scriptDeleted], "site \(k)")
            #expect(walker.guessCount <= 2 * max(walker.jar.count, 512), "site \(k): \(walker.guessCount) guesses for \(walker.jar.count) cookies")
        }
        // A guess made after the index was made again from the jar still widens.
        _ = try add("https://www.last.example/", cookie: "pref=last")
        let widened = try add("https://m.last.example/", cookie: "pref=last")
        #expect(widened.map(\.kind) == [.preExisting] && widened.first?.cookie.domain == "last.example")
    }
}
