import Foundation
import Testing
import TrafficModel
@testable import CookieJar

@Suite("RFC 6265bis cookie store")
struct CookieStoreTests {
    let t = 1_800_000_000.0
    func url(_ s: String) -> RequestTarget { RequestTarget(s)! }

    @Test("5.6 steps 2-4: name and value split at the first '=', trimmed; a pair without '=' is nameless")
    func nameValue() throws {
        let a = try #require(SetCookie.parse("  sid = a=b ; Path=/"))
        #expect(a.name == "sid" && a.value == "a=b")
        let nameless = try #require(SetCookie.parse("justavalue"))
        #expect(nameless.name == "" && nameless.value == "justavalue")
        #expect(SetCookie.parse("=") == nil)  // step 5: both empty
        #expect(SetCookie.parse("a=b\u{01}c") == nil)  // step 1: control character
        #expect(SetCookie.parse("a=b\tc") != nil)  // HTAB is allowed
        #expect(SetCookie.parse("a=" + String(repeating: "x", count: 4096)) == nil)  // step 6: over 4096
    }

    @Test("5.6 on octets: a ';' or '=' followed by a combining mark still separates; attributes trimmed of SP and HTAB only")
    func octets() throws {
        let c = try #require(SetCookie.parse("a=b;\u{301}Secure; \tPath=/x\t ;Max-Age=60;=;;HttpOnly"))
        #expect(c.name == "a" && c.value == "b")
        #expect(!c.secure)  // the attribute's name is "\u{301}Secure", not Secure
        #expect(c.path == "/x" && c.maxAge == 60 && c.httpOnly)
        let d = try #require(SetCookie.parse("k=\u{301}v\u{A0}"))
        #expect(d.name == "k" && d.value == "\u{301}v\u{A0}")  // NBSP is no WSP
        let e = try #require(SetCookie.parse("n=\u{301}x"))
        #expect(e.name == "n" && e.value == "\u{301}x")
    }

    @Test("a live value is read by name, domain and path, and none once expired")
    func liveValue() throws {
        var jar = CookieStore()
        jar.receive("sid=1; Path=/a; Max-Age=60", from: url("https://shop.example/a/b"), at: t)
        jar.receive("sid=2; Path=/", from: url("https://shop.example/"), at: t)
        #expect(jar.liveValue(name: "sid", domain: "shop.example", path: "/a", at: t + 1) == "1")
        #expect(jar.liveValue(name: "sid", domain: "shop.example", path: "/", at: t + 1) == "2")
        #expect(jar.liveValue(name: "sid", domain: "shop.example", path: "/a", at: t + 61) == nil)
        #expect(jar.liveValue(name: "sid", domain: "other.example", path: "/", at: t) == nil)
        #expect(jar.liveValue(name: "SID", domain: "shop.example", path: "/", at: t) == nil)
    }

    @Test("a nameless cookie serialises as its value alone")
    func namelessHeader() {
        var jar = CookieStore()
        jar.receive("token", from: url("https://a.example/"), at: t)
        #expect(jar.cookieHeader(for: url("https://a.example/"), at: t) == "token")
    }

    @Test("5.1.1 cookie-date: the formats servers send, and the failures", arguments: [
        ("Wed, 21 Oct 2015 07:28:00 GMT", 1_445_412_480.0),
        ("Wednesday, 21-Oct-15 07:28:00 GMT", 1_445_412_480.0),
        ("Wed Oct 21 07:28:00 2015", 1_445_412_480.0),
        ("21 Oct 1970 00:00:00", 293 * 86_400.0),
    ])
    func dates(_ text: String, _ expected: Double) {
        #expect(CookieDate.parse(text) == expected)
    }

    @Test("5.1.1 step 5: impossible dates fail", arguments: ["Wed, 32 Oct 2015 07:28:00 GMT", "Wed, 21 Oct 1600 07:28:00 GMT", "Wed, 21 Oct 2015 24:00:00 GMT", "Feb 30 2015 10:00:00", "Wed, 21 Oct 2015"])
    func badDates(_ text: String) {
        #expect(CookieDate.parse(text) == nil)
    }

    @Test("Max-Age wins over Expires, whatever their order; Max-Age=0 deletes")
    func maxAgePrecedence() throws {
        var jar = CookieStore()
        jar.receive("a=1; Max-Age=60; Expires=Wed, 21 Oct 2099 07:28:00 GMT", from: url("https://a.example/"), at: t)
        #expect(jar.all.first?.expiry == t + 60)
        jar.receive("b=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Max-Age=60", from: url("https://a.example/"), at: t)
        #expect(jar.cookie(for: .init(name: "b", domain: "a.example", path: "/"))?.expiry == t + 60)
        let result = jar.receive("a=1; Max-Age=0", from: url("https://a.example/"), at: t + 1)
        #expect(result == .deleted(.init(name: "a", domain: "a.example", path: "/")))
        #expect(jar.cookie(for: .init(name: "a", domain: "a.example", path: "/")) == nil)
    }

    @Test("a past Expires deletes; an unparsable Expires is ignored (session cookie)")
    func expires() {
        var jar = CookieStore()
        jar.receive("a=1", from: url("https://a.example/"), at: t)
        jar.receive("a=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT", from: url("https://a.example/"), at: t)
        #expect(jar.count == 0)
        jar.receive("b=1; Expires=tomorrow", from: url("https://a.example/"), at: t)
        #expect(jar.all.first?.persistent == false)
    }

    @Test("5.1.3 domain-match, host-only cookies and the Domain attribute")
    func domains() {
        var jar = CookieStore()
        jar.receive("host=1", from: url("https://www.example.com/"), at: t)
        jar.receive("dom=1; Domain=.Example.COM", from: url("https://www.example.com/"), at: t)
        jar.receive("other=1; Domain=evil.com", from: url("https://www.example.com/"), at: t)
        #expect(jar.cookieHeader(for: url("https://www.example.com/"), at: t) == "host=1; dom=1")
        #expect(jar.cookieHeader(for: url("https://api.example.com/"), at: t) == "dom=1")
        #expect(jar.cookieHeader(for: url("https://notexample.com/"), at: t) == nil)
        #expect(jar.count == 2)
        #expect(CookieStore.domainMatches("a.b.example.com", "example.com"))
        #expect(!CookieStore.domainMatches("1.2.3.4", "2.3.4"))
    }

    @Test("the public-suffix guard refuses Domain=com and Domain=co.uk, but a host may be its own suffix")
    func publicSuffix() {
        var jar = CookieStore()
        #expect(jar.receive("a=1; Domain=com", from: url("https://shop.example.com/"), at: t) == .ignored(reason: "Domain=com is a public suffix"))
        jar.receive("b=1; Domain=co.uk", from: url("https://shop.example.co.uk/"), at: t)
        #expect(jar.count == 0)
        jar.receive("c=1; Domain=localhost", from: url("http://localhost/"), at: t)
        #expect(jar.all.first?.hostOnly == true)
    }

    @Test("5.1.4 default path and path-match", arguments: [("/", "/"), ("", "/"), ("/a", "/"), ("/a/b", "/a"), ("/a/b/", "/a/b"), ("noslash", "/")])
    func defaultPath(_ requestPath: String, _ expected: String) {
        #expect(CookieStore.defaultPath(requestPath) == expected)
    }

    @Test("path-match: identical, or a prefix ending in '/' or followed by '/'")
    func pathMatch() {
        #expect(CookieStore.pathMatches("/a/b", "/a"))
        #expect(CookieStore.pathMatches("/a/b", "/a/"))
        #expect(CookieStore.pathMatches("/a", "/a"))
        #expect(!CookieStore.pathMatches("/ab", "/a"))
        #expect(!CookieStore.pathMatches("/", "/a"))
    }

    @Test("5.8.3: longer paths first, then earlier creation")
    func headerOrder() {
        var jar = CookieStore()
        jar.receive("first=1; Path=/", from: url("https://a.example/"), at: t)
        jar.receive("deep=1; Path=/a/b", from: url("https://a.example/"), at: t + 2)
        jar.receive("second=1; Path=/", from: url("https://a.example/"), at: t + 1)
        jar.receive("mid=1; Path=/a", from: url("https://a.example/"), at: t + 3)
        #expect(jar.cookieHeader(for: url("https://a.example/a/b/c"), at: t + 4) == "deep=1; mid=1; first=1; second=1")
    }

    @Test("replacement keeps the creation time, and so the order")
    func replacement() {
        var jar = CookieStore()
        jar.receive("a=1", from: url("https://a.example/"), at: t)
        jar.receive("b=1", from: url("https://a.example/"), at: t + 1)
        jar.receive("a=2", from: url("https://a.example/"), at: t + 2)
        #expect(jar.cookieHeader(for: url("https://a.example/"), at: t + 3) == "a=2; b=1")
    }

    @Test("Secure: refused from http, not sent over http; an insecure origin cannot overlay a Secure cookie")
    func secure() {
        var jar = CookieStore()
        jar.receive("s=1; Secure", from: url("http://a.example/"), at: t)
        #expect(jar.count == 0)
        jar.receive("s=1; Secure", from: url("https://a.example/"), at: t)
        #expect(jar.cookieHeader(for: url("http://a.example/"), at: t) == nil)
        #expect(jar.cookieHeader(for: url("https://a.example/"), at: t) == "s=1")
        jar.receive("s=evil", from: url("http://a.example/"), at: t + 1)
        #expect(jar.cookieHeader(for: url("https://a.example/"), at: t + 1) == "s=1")
    }

    @Test("HttpOnly: kept from HTTP, hidden from document.cookie, dropped when script writes it (C3)")
    func httpOnly() {
        var jar = CookieStore()
        jar.receive("sid=1; HttpOnly", from: url("https://a.example/"), at: t)
        jar.receive("ui=dark", from: url("https://a.example/"), at: t)
        #expect(jar.documentCookie(for: url("https://a.example/"), at: t) == "ui=dark")
        let scripted = jar.receive("token=x; HttpOnly", from: url("https://a.example/"), at: t, api: .script)
        #expect(scripted == .ignored(reason: "HttpOnly cookie written by script (C3)"))
        jar.receive("sid=stolen", from: url("https://a.example/"), at: t, api: .script)
        #expect(jar.cookieHeader(for: url("https://a.example/"), at: t) == "sid=1; ui=dark")
    }

    @Test("C6: a persistent cookie written by script lives at most 7 days")
    func scriptLifetimeCap() {
        var jar = CookieStore()
        jar.receive("pref=1; Max-Age=31536000", from: url("https://a.example/"), at: t, api: .script)
        #expect(jar.all.first?.expiry == t + 7 * 86_400)
        jar.receive("pref2=1; Max-Age=31536000", from: url("https://a.example/"), at: t)
        #expect(jar.cookie(for: .init(name: "pref2", domain: "a.example", path: "/"))?.expiry == t + 31_536_000)
    }

    @Test("cookie prefixes: __Secure- needs Secure, __Host- needs Secure, host-only and Path=/")
    func prefixes() {
        var jar = CookieStore()
        jar.receive("__Secure-a=1", from: url("https://a.example/"), at: t)
        jar.receive("__Host-b=1; Secure; Path=/; Domain=a.example", from: url("https://a.example/"), at: t)
        #expect(jar.count == 0)
        jar.receive("__Host-c=1; Secure; Path=/", from: url("https://a.example/"), at: t)
        #expect(jar.count == 1)
    }

    @Test("the per-domain limit evicts the least recently used")
    func limits() {
        var jar = CookieStore()
        jar.maxCookiesPerDomain = 3
        for i in 0..<5 { jar.receive("c\(i)=1", from: url("https://a.example/"), at: t + Double(i)) }
        #expect(jar.count == 3)
        #expect(jar.all.map(\.name).sorted() == ["c2", "c3", "c4"])
    }

    @Test("expiry is evaluated at the time given, not the wall clock")
    func recordingClock() {
        var jar = CookieStore()
        jar.receive("a=1; Max-Age=10", from: url("https://a.example/"), at: t)
        #expect(jar.cookieHeader(for: url("https://a.example/"), at: t + 9) == "a=1")
        #expect(jar.cookieHeader(for: url("https://a.example/"), at: t + 10) == nil)
    }

    @Test("a jar that outgrows one list reads, replaces, evicts and compares as before")
    func growsPastOneList() {
        // 150 cookies across 30 hosts of one site, 5 per host: past the 64 one list holds.
        var jar = CookieStore()
        jar.maxCookiesPerDomain = 4
        var small = CookieStore()
        for h in 0..<30 {
            for c in 0..<5 {
                let header = c == 0 ? "site\(h)=\(h); Domain=example.com" : "c\(c)=\(h)"
                jar.receive(header, from: url("https://h\(h).example.com/"), at: t + Double(h * 5 + c))
                if h < 2 { small.receive(header, from: url("https://h\(h).example.com/"), at: t + Double(h * 5 + c)) }
            }
        }
        // Each host keeps its four most recent host cookies; the example.com list keeps four.
        #expect(jar.count == 30 * 4 + 4)
        #expect(jar.cookieHeader(for: url("https://h7.example.com/"), at: t + 200) == "c1=7; c2=7; c3=7; c4=7; site26=26; site27=27; site28=28; site29=29")
        jar.receive("c2=new", from: url("https://h7.example.com/"), at: t + 300)
        #expect(jar.liveValue(name: "c2", domain: "h7.example.com", path: "/", at: t + 300) == "new")
        #expect(jar.count == 30 * 4 + 4)
        // The same cookies compare equal however the jar keeps them.
        var rebuilt = CookieStore()
        rebuilt.maxCookiesPerDomain = 4
        for cookie in small.all { rebuilt.set(cookie, at: t) }
        #expect(rebuilt.all == small.all)
        #expect(small.count == 10 && small.cookie(for: Cookie.Key(name: "c1", domain: "h1.example.com", path: "/"))?.value == "1")
    }
}

/// A cookie keeps its fields behind one shared reference: a value still, whatever is
/// changed on a copy.
@Suite("A cookie as a value")
struct CookieValueTests {
    static let cookie: Cookie = {
        var c = Cookie(name: "sid", value: "a-session-token-longer-than-fifteen-bytes", domain: "shop.example", hostOnly: false, path: "/account", expiry: 1_800_000_000, secure: true, httpOnly: true, sameSite: .lax, creation: 1_700_000_000, lastAccess: 1_700_000_100)
        c.creationOrder = 7
        c.tag = 3
        return c
    }()

    @Test("a change to a copy leaves the original as it was, field by field")
    func copies() {
        let original = Self.cookie
        var copy = original
        #expect(copy == original)
        copy.value = "other"
        copy.path = "/"
        copy.expiry = nil
        copy.secure = false
        copy.sameSite = .strict
        copy.creationOrder = 8
        copy.tag = 4
        #expect(copy != original)
        #expect(original.value == "a-session-token-longer-than-fifteen-bytes" && original.path == "/account" && original.expiry == 1_800_000_000)
        #expect(original.secure && original.sameSite == .lax && original.creationOrder == 7 && original.tag == 3)
        #expect(copy.value == "other" && copy.path == "/" && copy.expiry == nil && !copy.secure && copy.sameSite == .strict && copy.creationOrder == 8 && copy.tag == 4)
        // The tag is not part of the cookie's identity.
        var tagged = original
        tagged.tag = 9
        #expect(tagged == original && tagged.hashValue == original.hashValue)
    }

    @Test("JSON holds every field but the tag, and reads back equal; a session cookie has no expiry key")
    func json() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(Self.cookie)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["name", "value", "domain", "hostOnly", "path", "expiry", "secure", "httpOnly", "sameSite", "creation", "lastAccess", "creationOrder"])
        let back = try JSONDecoder().decode(Cookie.self, from: data)
        #expect(back == Self.cookie && back.tag == 0)
        var session = Self.cookie
        session.expiry = nil
        let sessionObject = try #require(try JSONSerialization.jsonObject(with: try encoder.encode(session)) as? [String: Any])
        #expect(sessionObject["expiry"] == nil)
        #expect(try JSONDecoder().decode(Cookie.self, from: try encoder.encode(session)).expiry == nil)
    }
}

extension CookieValueTests {
    @Test("a cookie prints its fields, as a failing test or a log shows it")
    func printed() {
        let text = "\(Self.cookie)"
        #expect(text.hasPrefix("Cookie(name: \"sid\", value: \"a-session-token-longer-than-fifteen-bytes\", domain: \"shop.example\""))
        #expect(text.contains("creationOrder: 7"))
    }
}

/// A request that every cookie of a small jar goes with carries the jar's own list; it
/// must still be the header's order and hold only what goes.
@Suite("CookieStore: the cookies a request carries, the jar's list shared or not")
struct RequestCookiesSharedListTests {
    static let url = RequestTarget("https://shop.example/a/b")!

    static func jar(_ cookies: [(name: String, path: String)]) -> CookieStore {
        var jar = CookieStore()
        for (k, c) in cookies.enumerated() {
            jar.set(Cookie(name: c.name, value: "v\(k)", domain: "shop.example", path: c.path, creation: 100), at: 100)
        }
        return jar
    }

    @Test("every cookie goes, stored in header order: the list as stored")
    func allInOrder() {
        let jar = Self.jar([("a", "/a"), ("b", "/"), ("c", "/")])
        #expect(jar.cookies(for: Self.url, at: 200).map(\.name) == ["a", "b", "c"])
    }

    @Test("every cookie goes, stored out of header order: longer paths first, then creation")
    func allOutOfOrder() {
        let jar = Self.jar([("b", "/"), ("a", "/a"), ("c", "/")])
        #expect(jar.cookies(for: Self.url, at: 200).map(\.name) == ["a", "b", "c"])
    }

    @Test("a cookie that does not go, first, in the middle or last, is left out", arguments: [0, 1, 2])
    func oneStaysBehind(at index: Int) {
        var cookies: [(name: String, path: String)] = [("a", "/a"), ("b", "/"), ("c", "/")]
        cookies[index].path = "/elsewhere"
        let expected = ["a", "b", "c"].enumerated().filter { $0.offset != index }.map(\.element)
        #expect(Self.jar(cookies).cookies(for: Self.url, at: 200).map(\.name) == expected)
    }

    @Test("a jar holds a cookie itself only when it was handed that very cookie")
    func holdsItself() {
        let cookie = Cookie(name: "sid", value: "1", domain: "shop.example", creation: 100)
        var jar = CookieStore()
        jar.set(cookie, at: 100)
        let held = jar.cookie(for: cookie.key)!
        let equal = Cookie(name: "sid", value: "1", domain: "shop.example", creation: 100)
        var other = CookieStore()
        other.set(held, at: 100)
        #expect(other.holdsItself(held))
        #expect(!other.holdsItself(equal))
        #expect(!CookieStore().holdsItself(held))
    }
}
