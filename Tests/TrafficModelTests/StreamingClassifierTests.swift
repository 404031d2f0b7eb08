import Foundation
import Testing
@testable import TrafficModel

/// The classifier as it was before it streamed: the whole list at once. It stays here as the
/// reference the streaming classifier must agree with exchange for exchange.
enum BatchClassifier {
    static func classify(_ exchanges: inout [Exchange]) {
        for i in exchanges.indices {
            exchanges[i].initiator = ExchangeClassifier.initiator(of: exchanges[i])
            exchanges[i].bodyKind = ExchangeClassifier.bodyKind(of: exchanges[i].request)
            if exchanges[i].evidenceGap == nil, ExchangeClassifier.isPreflight(exchanges[i].request) { exchanges[i].evidenceGap = .corsPreflight }
        }
        linkRedirects(&exchanges)
        assignFrames(&exchanges)
    }


    /// Links each 3xx response to the later request for its Location: hop 0 is the
    /// request the page issued, hop n the n-th redirect target.
    static func linkRedirects(_ exchanges: inout [Exchange]) {
        // Requests by normalised URL, in time order, so each 3xx finds its target in one
        // lookup rather than a scan.
        var byURL: [String: [Int]] = [:]
        var hasRedirect = false
        for i in exchanges.indices {
            if exchanges[i].response.isRedirect { hasRedirect = true }
        }
        guard hasRedirect else { return }
        for i in exchanges.indices { byURL[normalize(exchanges[i].request.url), default: []].append(i) }
        var claimed = Set<Int>()
        // Per URL, where the search for the next unclaimed later request starts: a flow that
        // redirects to the same page thousands of times stays linear.
        var cursor: [String: Int] = [:]
        for i in exchanges.indices where exchanges[i].response.isRedirect {
            guard let location = exchanges[i].response.location,
                let target = RequestTarget.resolve(location, against: exchanges[i].request.url)
            else { continue }
            let wantedMethod = exchanges[i].response.preservesMethod ? exchanges[i].request.method : nil
            let key = normalize(target)
            var next: Int?
            if let candidates = byURL[key] {
                var c = cursor[key] ?? 0
                while c < candidates.count, candidates[c] <= i || claimed.contains(candidates[c]) { c += 1 }
                cursor[key] = c
                next = candidates[c...].first { j in
                    !claimed.contains(j) && (wantedMethod == nil || exchanges[j].request.method == wantedMethod)
                }
            }
            let start = exchanges[i].redirect?.chainStart ?? i
            let hop = exchanges[i].redirect?.hop ?? 0
            guard let j = next else {
                exchanges[i].redirect = RedirectLink(chainStart: start, hop: hop, next: nil)
                continue
            }
            claimed.insert(j)
            exchanges[i].redirect = RedirectLink(chainStart: start, hop: hop, next: j)
            exchanges[j].redirect = RedirectLink(chainStart: start, hop: hop + 1, next: nil)
            // A redirect target inherits the initiator of the request that started the chain.
            exchanges[j].initiator = exchanges[start].initiator == .formSubmission ? .navigation : exchanges[start].initiator
        }
    }

    /// URL comparison that ignores the fragment and the default port.
    static func normalize(_ url: String) -> String {
        guard let t = RequestTarget(url) else { return url }
        return t.origin + t.pathAndQuery
    }

    // MARK: - Frames

    /// Main frame unless `Sec-Fetch-Dest: iframe`; iframes' subresources are found through
    /// the Referer; third party when the request's site is not the top document's site.
    static func assignFrames(_ exchanges: inout [Exchange]) {
        var topSite = Recording(name: "", sourceFormat: "", exchanges: exchanges).topLevelSite
        // The main frame's document load that set the top site; it follows that load's
        // redirects and each document the engine names top-level.
        var topChain = exchanges.firstIndex { $0.initiator.isDocument && $0.initiator != .native }.map { exchanges[$0].redirect?.chainStart ?? $0 }
        var iframeDocuments = Set<String>()
        var pages: [(url: String, sequences: [Int], startedAt: Double, endedAt: Double, referrers: [Int], named: Bool)] = []
        var suspects: [(url: String, sequences: [Int], startedAt: Double, endedAt: Double, referrers: [Int], named: Bool)] = []
        for i in exchanges.indices {
            let e = exchanges[i]
            var kind = Frame.Kind.main
            let dest = e.request.headers.first("Sec-Fetch-Dest")?.asciiLowercased
            if dest == "iframe" || dest == "frame" || e.resourceType?.asciiLowercased == "sub_frame" {
                kind = .iframe
                iframeDocuments.insert(normalize(e.request.url))
            } else if !iframeDocuments.isEmpty, let referer = e.request.headers.first("Referer"), iframeDocuments.contains(normalize(referer)) {
                kind = .iframe
            } else if let start = e.redirect?.chainStart, start != i {
                kind = exchanges[start].frame.kind
            }
            let site = e.request.target?.site
            if let site, e.initiator.isDocument, kind == .main, let start = topChain, i > start {
                let chain = e.redirect?.chainStart ?? i
                if chain == start || dest == "document" { (topSite, topChain) = (site, chain) }
            }
            exchanges[i].frame = Frame(kind: kind, thirdParty: topSite != nil && site != nil && site != topSite)
            guard kind == .main, e.initiator != .native else { continue }
            // The main frame's documents: one an earlier page went on loading past, and that
            // went on loading beside it, was an iframe's.
            if e.initiator.isDocument {
                if let start = e.redirect?.chainStart, start != i, pages.last?.sequences.first == start {
                    pages[pages.count - 1].sequences.append(i)
                    pages[pages.count - 1].url = normalize(e.request.url)
                    pages[pages.count - 1].endedAt = e.endedAt
                } else {
                    let named = e.request.headers.first("Sec-Fetch-Dest") != nil || e.resourceType != nil
                    pages = Array((pages + [(normalize(e.request.url), [i], e.startedAt, e.endedAt, [], named)]).suffix(8))
                }
            } else if let referer = e.request.headers.first("Referer").map(normalize), let current = pages.last {
                // A Referer with spaces (Android 2 sends `%20` so) names a document decoded.
                func names(_ url: String) -> Bool {
                    url == referer || referer.contains(" ") && url.removingPercentEncoding == (referer.removingPercentEncoding ?? referer)
                }
                if names(current.url) {
                    if current.referrers.count < 4096 { pages[pages.count - 1].referrers.append(i) } else { pages = [current] }
                } else if let k = pages.dropLast().lastIndex(where: { names($0.url) }) {
                    if e.initiator != .beacon && e.startedAt > current.endedAt + 0.5 {
                        // A document nothing named as its page is an iframe's at once.
                        for document in pages[(k + 1)...] where document.referrers.isEmpty && !document.named {
                            for s in document.sequences { exchanges[s].frame.kind = .iframe }
                            iframeDocuments.insert(document.url)
                            iframeDocuments.insert(document.url.removingPercentEncoding ?? document.url)
                        }
                        // One that loaded its own things, the page resuming sooner than a
                        // navigation there and back takes, is an iframe's with what it referred.
                        let quick = pages[(k + 1)...].filter { !$0.referrers.isEmpty && !$0.named && e.startedAt - $0.startedAt < 1.5 }
                        for document in quick {
                            for s in document.sequences + document.referrers { exchanges[s].frame.kind = .iframe }
                            iframeDocuments.insert(document.url)
                            iframeDocuments.insert(document.url.removingPercentEncoding ?? document.url)
                        }
                        suspects = Array((suspects + pages[(k + 1)...].filter { $0.named || (!$0.referrers.isEmpty && e.startedAt - $0.startedAt >= 1.5) }).suffix(8))
                        pages = Array(pages[...k])
                    }
                } else if let j = suspects.lastIndex(where: { names($0.url) }) {
                    let frame = suspects.remove(at: j)
                    for k in frame.sequences + frame.referrers + [i] { exchanges[k].frame.kind = .iframe }
                    iframeDocuments.insert(frame.url)
                    iframeDocuments.insert(frame.url.removingPercentEncoding ?? frame.url)
                }
            }
        }
    }
}

@Suite("The streaming classifier agrees with the whole-list one")
struct StreamingClassifierTests {
    /// A small deterministic generator, so that a failure names a seed that reproduces it.
    struct Generator {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(n))
        }
    }

    static let hosts = ["a.example", "www.a.example", "cdn.b.example", "c.example:8080", "d.test"]
    static let paths = ["/", "/login", "/step", "/home", "/app.js", "/frame", "/api?x=1", "/img.png"]

    static func randomFlow(seed: UInt64) -> [Exchange] {
        var g = Generator(state: seed)
        let count = 1 + g.next(40)
        var out: [Exchange] = []
        for i in 0..<count {
            let host = hosts[g.next(hosts.count)]
            let url = "http://\(host)\(paths[g.next(paths.count)])"
            let method = ["GET", "GET", "POST", "PUT"][g.next(4)]
            var headers: HeaderList = []
            switch g.next(6) {
            case 0: headers.append(HeaderField("Accept", "text/html"))
            case 1: headers.append(HeaderField("Sec-Fetch-Dest", "iframe"))
            case 2: headers.append(HeaderField("Referer", "http://\(hosts[g.next(hosts.count)])/frame"))
            case 3: headers.append(HeaderField("Sec-Fetch-Dest", "document")); headers.append(HeaderField("Sec-Fetch-Mode", "navigate"))
            default: break
            }
            if method == "POST" && g.next(2) == 0 { headers.append(HeaderField("Content-Type", "application/x-www-form-urlencoded")) }
            var response = RecordedResponse(status: 200)
            if g.next(3) == 0 {
                response.status = [301, 302, 303, 307, 308][g.next(5)]
                let location = g.next(2) == 0 ? paths[g.next(paths.count)] : "http://\(hosts[g.next(hosts.count)])\(paths[g.next(paths.count)])#f"
                response.headers = [HeaderField("Location", location)]
            }
            out.append(Exchange(sequence: i, startedAt: Double(i), request: RecordedRequest(method: method, url: g.next(12) == 0 ? "not a url" : url, headers: headers, body: method == "GET" ? Data() : Data("a=1".utf8)), response: response))
        }
        return out
    }

    @Test("2,000 random flows: every initiator, frame, body kind and redirect link is the same")
    func randomFlows() {
        var iframeRevisions = 0
        for seed in UInt64(1)...2000 {
            let flow = Self.randomFlow(seed: seed)
            var streamed = flow
            var stream = ExchangeClassifier.Stream()
            for i in streamed.indices {
                for revision in stream.add(&streamed[i]) {
                    if case .iframe = revision { iframeRevisions += 1 }
                    revision.apply(to: &streamed)
                }
            }
            var batch = flow
            BatchClassifier.classify(&batch)
            if let k = streamed.indices.first(where: { streamed[$0] != batch[$0] }) {
                Issue.record("seed \(seed), exchange \(k): streamed \(streamed[k].initiator) \(streamed[k].frame.label) \(String(describing: streamed[k].redirect)), whole list \(batch[k].initiator) \(batch[k].frame.label) \(String(describing: batch[k].redirect))")
                return
            }
        }
        // The flows exercise the revision of a document read as the main frame's to an iframe's.
        #expect(iframeRevisions >= 10, "\(iframeRevisions) iframe revisions")
    }

    /// A page, a document loaded from it at 1 s (no Sec-Fetch-Dest, as older browsers,
    /// captures and cache hits record it), a request that document referred, then requests
    /// of the page at `pageAgain`.
    static func frames(pageAgain: [(time: Double, initiatorHeader: HeaderField)]) -> [Exchange] {
        func html(_ k: Int, _ t: Double, _ url: String, referer: String?) -> Exchange {
            var headers: HeaderList = [HeaderField("Accept", "text/html,application/xhtml+xml")]
            if let referer { headers.append(HeaderField("Referer", referer)) }
            return Exchange(sequence: k, startedAt: t, duration: 0.1, request: RecordedRequest(method: "GET", url: url, headers: headers), response: RecordedResponse(status: 200))
        }
        func sub(_ k: Int, _ t: Double, _ url: String, referer: String, _ header: HeaderField) -> Exchange {
            Exchange(sequence: k, startedAt: t, duration: 0.05, request: RecordedRequest(method: header.name == "Content-Type" ? "POST" : "GET", url: url, headers: [HeaderField("Referer", referer), header]), response: RecordedResponse(status: 200))
        }
        var flow = [
            html(0, 0, "http://a.example/", referer: nil),
            sub(1, 0.2, "http://a.example/app.js", referer: "http://a.example/", HeaderField("Accept", "*/*")),
            html(2, 1, "http://ads.example/frame", referer: "http://a.example/"),
            sub(3, 1.2, "http://ads.example/ad.png", referer: "http://ads.example/frame", HeaderField("Accept", "image/png")),
        ]
        for (k, request) in pageAgain.enumerated() {
            flow.append(sub(4 + k, request.time, "http://a.example/more\(k)", referer: "http://a.example/", request.initiatorHeader))
        }
        return flow
    }

    @Test("a document loading beside the page that went on loading past it is an iframe's, with what it referred; a page left and restored (back-forward cache) or an unload beacon leaves it the main frame's")
    func iframeByReferer() {
        func adRequest(_ k: Int, at time: Double) -> Exchange {
            Exchange(sequence: k, startedAt: time, request: RecordedRequest(method: "GET", url: "http://ads.example/track\(k).png", headers: [HeaderField("Referer", "http://ads.example/frame")]), response: RecordedResponse(status: 200))
        }
        var flow = Self.frames(pageAgain: [(2.5, HeaderField("Accept", "image/png")), (3, HeaderField("Accept", "*/*"))])
        flow += [adRequest(6, at: 3.5), adRequest(7, at: 4)]
        ExchangeClassifier.classify(&flow)
        #expect(flow.map(\.frame.kind) == [.main, .main, .iframe, .iframe, .main, .main, .iframe, .iframe])
        #expect(flow[2].frame.thirdParty && flow[3].frame.thirdParty)

        // Android 2 names a document whose URL holds `%20` with spaces in the Referer.
        var spaced = Self.frames(pageAgain: [(2.5, HeaderField("Accept", "image/png"))])
        spaced[2].request.url = "http://ads.example/frame?t=a%20b"
        spaced[3].request.headers = [HeaderField("Referer", "http://ads.example/frame?t=a b")]
        spaced.append(Exchange(sequence: 5, startedAt: 3, request: RecordedRequest(method: "GET", url: "http://ads.example/t.png", headers: [HeaderField("Referer", "http://ads.example/frame?t=a b")]), response: RecordedResponse(status: 200)))
        spaced.append(Exchange(sequence: 6, startedAt: 3.5, request: RecordedRequest(method: "GET", url: "http://ads.example/u.png", headers: [HeaderField("Referer", "http://ads.example/frame?t=a b")]), response: RecordedResponse(status: 200)))
        ExchangeClassifier.classify(&spaced)
        #expect(spaced.map(\.frame.kind) == [.main, .main, .iframe, .iframe, .main, .iframe, .iframe])

        // The page's requests after the document, and none of the document's after them:
        // a page left for the next one and restored without a request. The next stays main.
        var restored = Self.frames(pageAgain: [(6, HeaderField("Accept", "image/png")), (6.5, HeaderField("Accept", "*/*"))])
        ExchangeClassifier.classify(&restored)
        #expect(restored.allSatisfy { $0.frame.kind == .main })

        // The page's own requests as the next document arrives (unload pings) and a beacon
        // later: the main frame did go on to the next page.
        var navigated = Self.frames(pageAgain: [(1.15, HeaderField("Accept", "image/png")), (3, HeaderField("Content-Type", "text/plain;charset=UTF-8"))])
        navigated[5].resourceType = "ping"
        navigated.append(adRequest(6, at: 3.5))
        ExchangeClassifier.classify(&navigated)
        #expect(navigated[5].initiator == .beacon)
        #expect(navigated.allSatisfy { $0.frame.kind == .main })
    }

    @Test("a document that loaded its own things, whose earlier page went on loading sooner than anyone navigates there and back, is an iframe's with what it referred (an ad tag's frame); later, it stays a suspect")
    func iframeBackTooSoon() {
        // The frame document at 1 s loads an image at 1.2 s; the page loads again after.
        func flow(pageAgainAt time: Double) -> [Exchange] {
            var flow = Self.frames(pageAgain: [(time, HeaderField("Accept", "image/png"))])
            ExchangeClassifier.classify(&flow)
            return flow
        }
        #expect(flow(pageAgainAt: 2.3).map(\.frame.kind) == [.main, .main, .iframe, .iframe, .main])
        #expect(flow(pageAgainAt: 4).allSatisfy { $0.frame.kind == .main }, "a page left and restored later")
    }

    @Test("a document the page went on loading past, that nothing named as its page, is an iframe's (an ad's frame with nothing to load); one the engine named a document stays the main frame's")
    func iframeWithNothingToLoad() {
        // The page, its frame at 1 s (ended at 1.1 s), then the page's own requests: one as
        // the frame arrives, which could be the page's unload, and one well after.
        var flow = Self.frames(pageAgain: [(2, HeaderField("Accept", "image/png"))])
        flow[3] = Exchange(sequence: 3, startedAt: 1.2, request: RecordedRequest(method: "GET", url: "http://a.example/logo.png", headers: [HeaderField("Referer", "http://a.example/"), HeaderField("Accept", "image/png")]), response: RecordedResponse(status: 200))
        var streamed = flow
        ExchangeClassifier.classify(&streamed)
        #expect(streamed.map(\.frame.kind) == [.main, .main, .iframe, .main, .main])
        var batch = flow
        BatchClassifier.classify(&batch)
        #expect(batch == streamed)

        // Until the page's request well after it, the frame reads as the next page.
        var early = Array(flow.prefix(4))
        ExchangeClassifier.classify(&early)
        #expect(early.allSatisfy { $0.frame.kind == .main })

        // Sec-Fetch-Dest: document says the main frame loaded it: a page left and restored.
        var named = flow
        named[2].request.headers.append(HeaderField("Sec-Fetch-Dest", "document"))
        ExchangeClassifier.classify(&named)
        #expect(named.allSatisfy { $0.frame.kind == .main })
    }

    @Test("a revision reaches an exchange already added: the top site and a redirect's next")
    func revisions() {
        var stream = ExchangeClassifier.Stream()
        var list = [
            Exchange(sequence: 0, startedAt: 0, request: RecordedRequest(method: "GET", url: "http://cdn.b.example/a.png"), response: RecordedResponse(status: 200)),
            Exchange(sequence: 1, startedAt: 1, request: RecordedRequest(method: "GET", url: "http://a.example/", headers: [HeaderField("Accept", "text/html")]), response: RecordedResponse(status: 302, headers: [HeaderField("Location", "/home")])),
            Exchange(sequence: 2, startedAt: 2, request: RecordedRequest(method: "GET", url: "http://a.example/home"), response: RecordedResponse(status: 200)),
        ]
        #expect(stream.add(&list[0]).isEmpty)
        #expect(list[0].frame == .main, "the first exchange's site stands in for the top site")
        let atDocument = stream.add(&list[1])
        #expect(atDocument == [.topSite("a.example", before: 1)])
        #expect(stream.awaitingRedirects == 1)
        let atTarget = stream.add(&list[2])
        #expect(atTarget == [.redirectNext(sequence: 1, next: 2)])
        #expect(stream.awaitingRedirects == 0)
        for r in atDocument + atTarget { r.apply(to: &list) }
        #expect(list.map(\.frame.label) == ["main-3p", "main", "main"])
        #expect(list[1].redirect == RedirectLink(chainStart: 1, hop: 0, next: 2))
        #expect(list[2].redirect == RedirectLink(chainStart: 1, hop: 1, next: nil))
        #expect(list[2].initiator == .navigation, "a redirect target inherits the chain's initiator")
    }
}
