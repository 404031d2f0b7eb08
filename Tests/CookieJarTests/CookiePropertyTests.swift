import Foundation
import PropertyBased
import Testing
import TrafficModel
@testable import CookieJar

/// Properties that must hold for every jar, checked on generated inputs.
@Suite("Cookie jar properties")
struct CookiePropertyTests {
    static let t = 1_800_000_000.0
    static let domains = ["example.com", "www.example.com", "api.example.com", "other.org", "shop.example.co.uk"]
    static let paths = ["/", "/a", "/a/b", "/api/v1"]

    /// The fields cookies.txt keeps (it has no creation time or SameSite).
    struct Essentials: Hashable {
        var name, value, domain, path: String
        var hostOnly, secure, httpOnly: Bool
        var expiry: Double?
        init(_ c: Cookie) {
            (name, value, domain, path, hostOnly, secure, httpOnly, expiry) = (c.name, c.value, c.domain, c.path, c.hostOnly, c.secure, c.httpOnly, c.expiry)
        }
    }

    @Test("serialising a jar to cookies.txt and parsing it back gives the same jar")
    func cookieFileRoundTrip() async {
        let cookie = zip(
            Gen.letter.string(of: 1...8), Gen.letterOrNumber.string(of: 0...12),
            Gen.int(in: 0..<Self.domains.count), Gen.int(in: 0..<Self.paths.count),
            Gen.bool(), Gen.bool(), Gen.bool(), Gen.int(in: 0...100_000)
        )
        await propertyCheck(count: 200, input: cookie.array(of: 0...20)) { specs in
            var jar = CookieStore()
            for (name, value, d, p, hostOnly, secure, httpOnly, life) in specs {
                jar.set(Cookie(name: name, value: value, domain: Self.domains[d], hostOnly: hostOnly, path: Self.paths[p],
                    expiry: life == 0 ? nil : Self.t + Double(life), secure: secure, httpOnly: httpOnly, creation: Self.t), at: Self.t)
            }
            let text = CookieFile.serialise(jar.all)
            let parsed = try CookieFile.parse(text, creation: Self.t)
            var back = CookieStore()
            for c in parsed { back.set(c, at: Self.t) }
            #expect(Set(back.all.map(Essentials.init)) == Set(jar.all.map(Essentials.init)))
            #expect(back.count == jar.count)
        }
    }

    @Test("no cookie is ever sent to a host it does not domain-match")
    func neverSentElsewhere() async {
        let hosts = ["example.com", "www.example.com", "a.www.example.com", "evil-example.com", "other.org", "co.uk", "shop.example.co.uk", "10.0.0.1"]
        let domainAttributes = ["", "example.com", ".example.com", "com", "co.uk", "other.org", "www.example.com", "xample.com", "0.0.1"]
        let write = zip(Gen.int(in: 0..<hosts.count), Gen.int(in: 0..<domainAttributes.count), Gen.letter.string(of: 1...4))
        await propertyCheck(count: 300, input: write.array(of: 1...12), Gen.int(in: 0..<hosts.count)) { writes, query in
            var jar = CookieStore()
            for (h, d, name) in writes {
                let attribute = domainAttributes[d].isEmpty ? "" : "; Domain=\(domainAttributes[d])"
                jar.receive("\(name)=1\(attribute)", from: RequestTarget("https://\(hosts[h])/")!, at: Self.t)
            }
            let host = hosts[query]
            for cookie in jar.cookies(for: RequestTarget("https://\(host)/")!, at: Self.t) {
                #expect(cookie.hostOnly ? cookie.domain == host : CookieStore.domainMatches(host, cookie.domain), "\(cookie.name) for \(cookie.domain) sent to \(host)")
                #expect(!Site.isPublicSuffix(cookie.domain) || cookie.domain == host)
            }
        }
    }

    @Test("a malformed cookies.txt line names its line number")
    func badLine() {
        #expect(throws: CookieFile.ParseError.self) { try CookieFile.parse("# Netscape\nexample.com\tFALSE\t/\n", creation: 0) }
        do {
            _ = try CookieFile.parse("example.com\tFALSE\t/\tFALSE\t0\tn\tv\n.example.com\tTRUE\t/\tFALSE\tsoon\tn\tv", creation: 0)
            Issue.record("expected an error")
        } catch let e as CookieFile.ParseError {
            #expect(e.line == 2)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("cookies.txt from curl: HttpOnly prefix, domain cookies, session expiry")
    func curlFile() throws {
        let text = """
            # Netscape HTTP Cookie File
            # https://curl.se/docs/http-cookies.html

            #HttpOnly_.example.com\tTRUE\t/\tTRUE\t1900000000\tsid\tabc
            www.example.com\tFALSE\t/app\tFALSE\t0\tpref\tdark
            """
        let cookies = try CookieFile.parse(text, creation: 1)
        #expect(cookies.count == 2)
        #expect(cookies[0].httpOnly && !cookies[0].hostOnly && cookies[0].domain == "example.com" && cookies[0].secure && cookies[0].expiry == 1_900_000_000)
        #expect(cookies[1].hostOnly && cookies[1].path == "/app" && cookies[1].expiry == nil)
    }
}
