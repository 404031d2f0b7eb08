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
        let topSite = Recording(name: "", sourceFormat: "", exchanges: exchanges).topLevelSite
        var iframeDocuments = Set<String>()
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
            exchanges[i].frame = Frame(kind: kind, thirdParty: topSite != nil && site != nil && site != topSite)
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
            var headers: [HeaderField] = []
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
        for seed in UInt64(1)...2000 {
            let flow = Self.randomFlow(seed: seed)
            var streamed = flow
            ExchangeClassifier.classify(&streamed)
            var batch = flow
            BatchClassifier.classify(&batch)
            if let k = streamed.indices.first(where: { streamed[$0] != batch[$0] }) {
                Issue.record("seed \(seed), exchange \(k): streamed \(streamed[k].initiator) \(streamed[k].frame.label) \(String(describing: streamed[k].redirect)), whole list \(batch[k].initiator) \(batch[k].frame.label) \(String(describing: batch[k].redirect))")
                return
            }
        }
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
