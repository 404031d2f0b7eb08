import CookieJar
import Foundation
import HARFormat
import Testing
import TrafficModel
import WebViewEmulation
@testable import Findings

@Suite("Finding detector")
struct FindingDetectorTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func findings(_ name: String, _ preset: String, profile: Profile = Profile()) throws -> [Finding] {
        let data = try Data(contentsOf: root.appendingPathComponent("Recordings/\(name).har"))
        let recording = try HARImporter().recording(from: data, file: name, name: name)
        let result = WebViewEmulator(preset: Preset.named(preset)!, profile: profile).run(recording, provenance: CookieProvenance(recording: recording))
        return FindingDetector().findings(for: recording, result: result)
    }

    @Test("BODY_LOST carries the exchange, the rule, its confidence, expected and actual bodies")
    func bodyLost() throws {
        let findings = try Self.findings("xhr-json-post", "urlprotocol-naive")
        #expect(findings.map(\.code) == [.bodyLost])
        let f = try #require(findings.first)
        #expect(f.severity == .error && f.sequence == 2 && f.method == "POST" && f.url == "https://m.example.com/api/order")
        #expect(f.rules == ["P1"] && f.confidence == .source)
        #expect(f.expected["bodyLength"] == "52" && f.actual["bodyLength"] == "0")
        #expect(f.message == "The XHR POST m.example.com/api/order reaches the server with an empty body (52 bytes recorded): NSURLProtocol interception drops request bodies (P1, source).")
    }

    @Test("a finding names what it rests on: a cookie inferred written by script, and the sender and frame a recording without Sec-Fetch-Dest leaves to inference; a value a response of the recording set contradicts the script write and makes the finding a less likely warning")
    func inferences() throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("Recordings/script-cookie-api.har"))
        var recording = try HARImporter().recording(from: data, file: "script-cookie-api", name: "script-cookie-api")
        func missing(_ recording: Recording) throws -> Finding {
            let result = WebViewEmulator(preset: Preset.named("urlprotocol-naive")!, profile: Profile(simulator: true)).run(recording, provenance: CookieProvenance(recording: recording))
            return try #require(FindingDetector().findings(for: recording, result: result).first { $0.code == .cookieMissing && $0.subjects == ["ab_bucket"] })
        }
        let plain = try missing(recording)
        let cookie = try #require(plain.inferences.first { $0.kind == .cookieSource })
        #expect(cookie.subject == "ab_bucket" && cookie.inferred == "written by the page's script (first carried by #2)" && cookie.contradictedBy == nil)
        #expect(!plain.inferences.contains { $0.kind == .initiator }, "the recording names the destination (Sec-Fetch-Dest)")
        #expect(plain.message.contains("It rests on inferences: ") && plain.message.contains("cookie ab_bucket: written by the page's script"), "\(plain.message)")
        #expect(plain.severity == .error && plain.likelihood == nil)

        // Another site's response set the very value: the script may have copied it, but
        // the write the finding rests on is no longer the only reading.
        recording.exchanges[1].response.headers.append(HeaderField("Set-Cookie", "ab_bucket=B; Path=/"))
        recording.exchanges[1].request.url = "https://cdn.other.example/js/main.js"
        recording.exchanges[2].request.headers.removeAll { $0.name.hasPrefix("Sec-Fetch") }
        let contradicted = try missing(recording)
        #expect(contradicted.inferences.first == FindingInference(kind: .initiator, subject: "#2", inferred: "xhr, read from its headers (the recording names no destination)"))
        let source = try #require(contradicted.inferences.first { $0.kind == .cookieSource })
        #expect(source.contradictedBy == "#1's response set that value")
        #expect(contradicted.severity == .warning && contradicted.likelihood == FindingInference.contradictedLikelihood)
        #expect(contradicted.message.contains("though #1's response set that value"))
    }

    @Test("REDIRECT_HIDDEN is an error for a document")
    func redirectHidden() throws {
        let findings = try Self.findings("login-redirect", "schemehandler-naive")
        let f = try #require(findings.first { $0.code == .redirectHidden })
        #expect(f.severity == .error && f.rules == ["S5"] && f.sequence == 1)
        #expect(f.expected["pageURL"] == "https://shop.example.com/home" && f.actual["pageURL"] == "https://shop.example.com/login")
        #expect(findings.count == 1)
    }

    @Test("a session cookie a page and its API host both carry, with no Set-Cookie in the recording, is no finding")
    func domainCookieThereFromTheStart() throws {
        let t0 = 1_800_000_000.0
        func exchange(_ sequence: Int, _ url: String, _ headers: HeaderList) -> Exchange {
            Exchange(sequence: sequence, startedAt: t0 + Double(sequence), duration: 0.05,
                request: RecordedRequest(method: "GET", url: url, headers: headers + [HeaderField("Cookie", "SID=s1")]),
                response: RecordedResponse(status: 200, headers: [HeaderField("Content-Type", "application/json")]))
        }
        var exchanges = [
            exchange(0, "https://www.shop.example/", [HeaderField("Accept", "text/html")]),
            exchange(1, "https://api.shop.example/cart", [HeaderField("X-Requested-With", "XMLHttpRequest")]),
        ]
        ExchangeClassifier.classify(&exchanges)
        let recording = Recording(name: "logged-in", sourceFormat: "test", exchanges: exchanges)
        for preset in ["plain", "urlprotocol-naive", "netease-schemehandler"] {
            let result = WebViewEmulator(preset: Preset.named(preset)!).run(recording, provenance: CookieProvenance(recording: recording))
            let cookieFindings = FindingDetector().findings(for: recording, result: result).filter { $0.subjects.contains("SID") }
            #expect(cookieFindings.isEmpty, "\(preset): \(cookieFindings.map(\.message))")
        }
    }

    @Test("a cookie carried only under /home is no COOKIE_EXTRA on the page's other paths under any preset")
    func pathScopedCookieIsNotDeleted() throws {
        // pcap2har's out-of-order: before the path was inferred, every native-jar preset
        // reported 83 COOKIE_EXTRA warnings, a deletion crossing the jars late (J2). Here the
        // script write before #1 is still on its way to NativeJar (J3) when #2 narrows its
        // path, and lands after: it must land at the narrowed path.
        let t0 = 1_800_000_000.0
        func exchange(_ sequence: Int, _ path: String, cookie: Bool, accept: String) -> Exchange {
            Exchange(sequence: sequence, startedAt: t0 + Double(sequence) * 0.4, duration: 0.05,
                request: RecordedRequest(method: "GET", url: "http://www.news.example\(path)", headers: [HeaderField("Accept", accept)] + (cookie ? [HeaderField("Cookie", "dcPrevPath=8.Central")] : [])),
                response: RecordedResponse(status: 200, headers: []))
        }
        var exchanges = [
            exchange(0, "/", cookie: false, accept: "text/html"),
            exchange(1, "/home/0,7340,L-8,00.html", cookie: true, accept: "text/html"),
            exchange(2, "/Common/jquery.js", cookie: false, accept: "*/*"),
            exchange(3, "/images/logo.gif", cookie: false, accept: "image/*"),
            exchange(4, "/Ext/Comp/ticker.html", cookie: false, accept: "text/html"),
            exchange(5, "/home/0,7340,L-8,00.html", cookie: true, accept: "text/html"),
            exchange(6, "/images/b.gif", cookie: false, accept: "image/*"),
        ]
        ExchangeClassifier.classify(&exchanges)
        let recording = Recording(name: "news", sourceFormat: "test", exchanges: exchanges)
        for preset in Preset.builtIn {
            let result = WebViewEmulator(preset: preset).run(recording, provenance: CookieProvenance(recording: recording))
            let extra = FindingDetector().findings(for: recording, result: result).filter { $0.code == .cookieExtra }
            #expect(extra.isEmpty, "\(preset.name): \(extra.map(\.message))")
        }
    }

    @Test("a cookie of /home there from the start is lost on the first load's redirect to /home when the loadRequest header is fixed (C2), and says why")
    func fixedLoadHeaderLosesAPathCookie() throws {
        let t0 = 1_800_000_000.0
        func document(_ sequence: Int, _ path: String, cookie: String?, location: String?) -> Exchange {
            Exchange(sequence: sequence, startedAt: t0 + Double(sequence) * 0.3, duration: 0.1,
                request: RecordedRequest(method: "GET", url: "http://www.news.example\(path)", headers: [HeaderField("Accept", "text/html")] + (cookie.map { [HeaderField("Cookie", $0)] } ?? [])),
                response: RecordedResponse(status: location == nil ? 200 : 302, headers: location.map { [HeaderField("Location", $0)] } ?? []))
        }
        var exchanges = [document(0, "/", cookie: nil, location: "/home/index.html"), document(1, "/home/index.html", cookie: "dcPrevPath=8", location: nil)]
        ExchangeClassifier.classify(&exchanges)
        let recording = Recording(name: "news", sourceFormat: "test", exchanges: exchanges)
        let provenance = CookieProvenance(recording: recording)
        #expect(FindingDetector().findings(for: recording, result: WebViewEmulator(preset: Preset.named("plain")!).run(recording, provenance: provenance)).isEmpty)
        let findings = FindingDetector().findings(for: recording, result: WebViewEmulator(preset: Preset.named("plain-cookie-sync")!).run(recording, provenance: provenance))
        let f = try #require(findings.first { $0.code == .cookieMissing })
        #expect(f.sequence == 1 && f.rules == ["C2"])
        #expect(f.message.contains("the Cookie header given to loadRequest did not hold it (there from the start) and is carried unchanged to the redirect target"))
    }

    @Test("COOKIE_MISSING names the cookie, keeps its value only in the value field, cites P3 and J3")
    func cookieMissing() throws {
        let findings = try Self.findings("script-cookie-api", "urlprotocol-naive")
        let f = try #require(findings.first)
        #expect(findings.count == 1)
        #expect(f.code == .cookieMissing && f.subject == "ab_bucket" && f.severity == .error)
        #expect(f.rules == ["P3", "J3"] && f.confidence == .inferred)
        #expect(f.expected == ["cookie": "ab_bucket", "value": "B"] && f.actual == ["cookie": "ab_bucket", "present": "no"])
        #expect(!f.message.contains("=B"))
    }

    @Test("JAR_DIVERGED is a warning naming the cookie and the J3 rule")
    func jarDiverged() throws {
        let findings = try Self.findings("script-cookie-api", "plain", profile: Profile(simulator: true))
        let f = try #require(findings.first)
        #expect(findings.count == 1)
        #expect(f.code == .jarDiverged && f.severity == .warning && f.rules == ["J3"])
        #expect(f.actual["in"] == "WebJar only")
    }

    @Test("JAR_DIVERGED ranks by its cookies alone: important when the scenario names one, else a subresource's")
    func jarDivergedRank() throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("Recordings/script-cookie-api.har"))
        let recording = try HARImporter().recording(from: data, file: "script-cookie-api", name: "script-cookie-api")
        let result = WebViewEmulator(preset: Preset.named("plain")!, profile: Profile(simulator: true)).run(recording, provenance: CookieProvenance(recording: recording))
        let plain = try #require(FindingDetector().findings(for: recording, result: result).first { $0.code == .jarDiverged })
        #expect(plain.rank == .subresource)
        let name = try #require(plain.expected["cookie"])
        let named = try #require(FindingDetector(importantCookies: [name]).findings(for: recording, result: result, subjects: FindingDetector.Subjects(recording)).first { $0.code == .jarDiverged })
        #expect(named.rank == .important)
    }

    @Test("plain finds nothing in any bundled recording")
    func plainIsClean() throws {
        for name in ["login-redirect", "xhr-json-post", "fetch-blob-upload", "script-cookie-api"] {
            #expect(try Self.findings(name, "plain").isEmpty, "\(name)")
        }
    }

    @Test("a rule marked folklore never produces an error")
    func folkloreCap() {
        let e = Exchange(sequence: 0, startedAt: 0, request: RecordedRequest(method: "POST", url: "https://a.example/", body: Data("x".utf8)), response: RecordedResponse(status: 200))
        let detector = FindingDetector()
        #expect(detector.make(.bodyLost, e, .api, "p", "r", ["H5"], expected: [:], actual: [:], detail: FindingDetail(text: "s")).severity == .warning)
        #expect(detector.make(.bodyLost, e, .api, "p", "r", ["P1"], expected: [:], actual: [:], detail: FindingDetail(text: "s")).severity == .error)
    }

    @Test("findings read with a recording's labels and ranks made once are the findings made without them")
    func subjectsMadeOnce() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Recordings").path).filter { $0.hasSuffix(".har") }.sorted()
        var ranks = Set<Rank>()
        var compared = 0
        for name in names {
            let data = try Data(contentsOf: Self.root.appendingPathComponent("Recordings/\(name)"))
            let recording = try HARImporter().recording(from: data, file: name, name: name)
            let input = ReplayInput(recording: recording)
            let subjects = FindingDetector.Subjects(recording)
            for preset in Preset.builtIn {
                let result = input.replay(preset)
                let once = FindingDetector().findings(for: recording, result: result, subjects: subjects)
                let each = FindingDetector().findings(for: recording, result: result)
                #expect(once == each, "\(name) under \(preset.name)")
                #expect(once.map(\.rank) == each.map(\.rank), "\(name) under \(preset.name)")
                ranks.formUnion(once.map(\.rank))
                compared += once.count
            }
        }
        // The comparison covers findings of every rank a request can have.
        #expect(ranks.isSuperset(of: [.document, .api, .subresource, .thirdParty]), "\(ranks)")
        #expect(compared > 500)
    }

    @Test("a finding's identity is its recording, exchange, preset, code and subject")
    func identity() throws {
        let a = try #require(try Self.findings("xhr-json-post", "urlprotocol-naive").first)
        var b = a
        b.detailParts = FindingDetail(text: "reworded")
        b.rules = ["P1", "P4"]
        #expect(a.identity == b.identity)
        b.preset = "other"
        #expect(a.identity != b.identity)
    }

    @Test("a finding cites a measured rule with the engine that measured it")
    func citesMeasurement() {
        let text = FindingText.message(detail: "The fetch POST /api reaches the server with an empty body", rules: ["S2", "P1"], alternative: nil)
        #expect(text.contains("(S2, measured in WebKitGTK 2.50.6)"))
        #expect(text.contains("(P1, source)"))
    }

    @Test("default severities follow docs/model.md, Finding codes")
    func severities() {
        #expect(FindingCode.bodyLost.defaultSeverity == .error)
        #expect(FindingCode.cookieExtra.defaultSeverity == .warning)
        #expect(FindingCode.jarDiverged.defaultSeverity == .warning)
        #expect(FindingCode.headerAdded.defaultSeverity == .info)
        #expect(FindingCode.corsBlocked.defaultSeverity == .error)
        #expect(FindingCode.headerLost.defaultSeverity == .error)
        #expect(FindingCode.bodyReencoded.defaultSeverity == .warning)  // the same fields, other bytes
        #expect(FindingCode.requestFailed.defaultSeverity == .error)
        #expect(FindingCode.allCases.count == 22)
    }
}

@Suite("Findings on flows built in code")
struct BuiltFlowFindingTests {
    static let t0 = 1_800_000_000.0

    static func exchange(_ sequence: Int, at offset: Double, _ method: String, _ url: String, headers: [(String, String)] = [], status: Int = 200, responseHeaders: [(String, String)] = []) -> Exchange {
        Exchange(sequence: sequence, startedAt: t0 + offset, duration: 0.02,
            request: RecordedRequest(method: method, url: url, headers: HeaderList(headers.lazy.map { HeaderField($0.0, $0.1) })),
            response: RecordedResponse(status: status, headers: HeaderList(responseHeaders.lazy.map { HeaderField($0.0, $0.1) })))
    }

    static func findings(_ list: [Exchange], _ preset: String) -> [Finding] {
        var exchanges = list
        ExchangeClassifier.classify(&exchanges)
        let recording = Recording(name: "r", sourceFormat: "test", exchanges: exchanges)
        let result = WebViewEmulator(preset: Preset.named(preset)!).run(recording, provenance: CookieProvenance(recording: recording))
        return FindingDetector().findings(for: recording, result: result)
    }

    @Test("COOKIE_STALE: the page's next document sends the old value an XHR response replaced in NativeJar")
    func stale() throws {
        let doc = Self.exchange(0, at: 0, "GET", "https://a.example/", headers: [("Accept", "text/html")], responseHeaders: [("Set-Cookie", "v=1; Path=/")])
        let xhr = Self.exchange(1, at: 2, "POST", "https://a.example/api/upgrade", headers: [("X-Requested-With", "XMLHttpRequest"), ("Cookie", "v=1")], responseHeaders: [("Set-Cookie", "v=2; Path=/")])
        let next = Self.exchange(2, at: 2.3, "GET", "https://a.example/next", headers: [("Accept", "text/html"), ("Cookie", "v=2")])
        let findings = Self.findings([doc, xhr, next], "kkjsbridge-ajaxhook")
        let f = try #require(findings.first { $0.code == .cookieStale })
        #expect(f.sequence == 2 && f.subject == "v" && f.severity == .error)
        #expect(f.rules.contains("N2") && f.rules.contains("J1") && f.rules.contains("X1"))
        #expect(f.expected["value"] == "2" && f.actual["value"] == "1")
    }

    @Test("REDIRECT_HIDDEN is info for a subresource, error for a document")
    func subresourceRedirect() throws {
        let page = Self.exchange(0, at: 0, "GET", "https://a.example/", headers: [("Accept", "text/html")])
        let api = Self.exchange(1, at: 1, "GET", "https://a.example/api/v1", headers: [("X-Requested-With", "XMLHttpRequest")], status: 302, responseHeaders: [("Location", "/api/v2")])
        let hop = Self.exchange(2, at: 1.05, "GET", "https://a.example/api/v2", headers: [("X-Requested-With", "XMLHttpRequest")])
        let f = try #require(Self.findings([page, api, hop], "urlprotocol-naive").first { $0.code == .redirectHidden })
        #expect(f.severity == .info && f.sequence == 1 && f.rules == ["P4"])
    }

    @Test("one finding per exchange and code names every cookie it concerns")
    func grouped() throws {
        let findings = try FindingDetectorTests.findings("script-cookie-api", "kkjsbridge-ajaxhook").filter { $0.code == .cookieMissing }
        #expect(findings.count == 1)
        let f = try #require(findings.first)
        #expect(f.subjects == ["uid", "ab_bucket"] && f.subject == "uid")
        #expect(f.message.contains("is sent without 2 cookies the recording carried (uid, ab_bucket)"))
    }

    /// A page, then an XHR `gap` seconds later carrying a cookie no response set: a script
    /// wrote it within those seconds.
    static func scriptCookieFlow(gap: Double) -> Recording {
        let t0 = 1_800_000_000.0
        func headers(_ pairs: [(String, String)]) -> HeaderList { HeaderList(pairs.lazy.map { HeaderField($0.0, $0.1) }) }
        var exchanges = [
            Exchange(sequence: 0, startedAt: t0, duration: 0.05,
                request: RecordedRequest(method: "GET", url: "https://m.example.com/", headers: headers([("Accept", "text/html"), ("Sec-Fetch-Dest", "document"), ("Sec-Fetch-Mode", "navigate")])),
                response: RecordedResponse(status: 200, headers: headers([("Content-Type", "text/html")]))),
            Exchange(sequence: 1, startedAt: t0 + gap, duration: 0.05,
                request: RecordedRequest(method: "GET", url: "https://m.example.com/api/cart", headers: headers([("Cookie", "ab=1"), ("X-Requested-With", "XMLHttpRequest"), ("Sec-Fetch-Dest", "empty"), ("Sec-Fetch-Mode", "cors")])),
                response: RecordedResponse(status: 200, headers: headers([("Content-Type", "application/json")]))),
        ]
        ExchangeClassifier.classify(&exchanges)
        return Recording(name: "script-cookie", sourceFormat: "test", exchanges: exchanges)
    }

    @Test("calibration: a script write missed with likelihood delay/window is an error only when certain, a warning from 10 %, info below; --min-likelihood leaves the unlikely out")
    func calibrated() throws {
        func finding(gap: Double, detector: FindingDetector = FindingDetector()) -> Finding? {
            let recording = Self.scriptCookieFlow(gap: gap)
            let result = WebViewEmulator(preset: Preset.named("urlprotocol-naive")!).run(recording, provenance: CookieProvenance(recording: recording))
            return detector.findings(for: recording, result: result).first { $0.code == .cookieMissing }
        }
        // J3's delay is 1 s: a 0.5 s window is certainly missed.
        let certain = try #require(finding(gap: 0.5))
        #expect(certain.severity == .error && certain.likelihood == nil)
        let likely = try #require(finding(gap: 4))
        #expect(likely.severity == .warning && abs(likely.likelihood! - 0.25) < 0.01)
        let unlikely = try #require(finding(gap: 40))
        #expect(unlikely.severity == .info && unlikely.likelihood! < 0.1)
        #expect(unlikely.rank == .api)
        #expect(finding(gap: 40, detector: FindingDetector(minLikelihood: 0.1)) == nil)
        #expect(finding(gap: 4, detector: FindingDetector(importantCookies: ["a*"]))?.rank == .important)
    }

    @Test("rank: a request the app's own page sent ranks by initiator, though every server is another site to that page")
    func appPageRank() {
        func request(_ headers: [(String, String)], initiator: Initiator = .xhr, thirdParty: Bool = true) -> Exchange {
            var e = Exchange(sequence: 0, startedAt: 0, request: RecordedRequest(method: "POST", url: "https://api.example.com/login", headers: HeaderList(headers.lazy.map { HeaderField($0.0, $0.1) })), response: RecordedResponse(status: 200))
            e.initiator = initiator
            e.frame = Frame(kind: .main, thirdParty: thirdParty)
            return e
        }
        #expect(Rank.of(request([("Origin", "capacitor://localhost")])) == .api)
        #expect(Rank.of(request([("Referer", "ionic://localhost/home")], initiator: .image)) == .subresource)
        // Another site's page, or none named: third party.
        #expect(Rank.of(request([("Origin", "https://m.shop.example")])) == .thirdParty)
        #expect(Rank.of(request([])) == .thirdParty)
        #expect(Rank.of(request([("Origin", "capacitor://localhost")], thirdParty: false)) == .api)
    }
}
