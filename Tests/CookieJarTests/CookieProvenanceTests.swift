import Foundation
import Testing
import TrafficModel
@testable import CookieJar

@Suite("Cookie provenance (BEHAVIOUR.md section 8)")
struct CookieProvenanceTests {
    static let t0 = 1_800_000_000.0

    static func exchange(_ sequence: Int, at offset: Double, _ url: String, cookie: String? = nil, setCookie: [String] = []) -> Exchange {
        Exchange(sequence: sequence, startedAt: t0 + offset, duration: 0.01,
            request: RecordedRequest(method: "GET", url: url, headers: cookie.map { [HeaderField("Cookie", $0)] } ?? []),
            response: RecordedResponse(status: 200, headers: setCookie.map { HeaderField("Set-Cookie", $0) }))
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
}
