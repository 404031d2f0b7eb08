import CookieJar
import Foundation
import TrafficModel

/// A recording made ready for replay, once, before any preset runs: the scenario applied,
/// its cookie provenance, and per exchange what every preset asks and no preset changes
/// (the document it was issued under, its parsed Set-Cookie headers, the bridges'
/// re-encodings of its body). Presets of a run share it.
public final class ReplayInput: Sendable {
    /// The recording with the scenario's pins and first-party sites applied.
    public let recording: Recording
    public let provenance: CookieProvenance
    public let scenario: Scenario
    /// Per exchange, in sequence order.
    public let facts: [ExchangeFacts]
    /// The main frame's first document load (hop 0), when there is one.
    public let firstDocument: Int?
    /// Where the main frame's page was, as far as the recording tells: the last hop of the
    /// first document load, or, when the recording holds no document load (the page came
    /// from the browser's cache, or the capture began after it), the page named by the
    /// main frame's first request that names one (its Referer, else its Origin): http(s)
    /// only.
    public let recordedPage: RequestTarget?
    /// The page loads a prefetch config matched, with what each planned call met (PF1, PF2).
    public let prefetchPages: [PrefetchPage]
    /// The cookies every preset's jars start with, made once for them all.
    let sessionStart: SessionStartCookies
    /// The hooks of the scenario's parts that act at moments (its offline package, then its
    /// prefetch config), joined after each preset's own for a replay.
    let scenarioHooks: [MitigationHooks]

    /// `provenance` is the one stored with the recording when there is one; otherwise it is
    /// computed here.
    public init(recording original: Recording, provenance: CookieProvenance? = nil, scenario: Scenario = Scenario()) {
        let recording = scenario.applied(to: original)
        self.recording = recording
        // A pinned initiator can change what provenance reads (a request pinned native says
        // nothing of the page's jar, NC1; a document load starts the first page): then the
        // provenance is the pinned recording's, not the one stored with the original.
        let pinsInitiators = scenario.overrides.contains { $0.initiator != nil }
        self.provenance = pinsInitiators ? CookieProvenance(recording: recording) : provenance ?? CookieProvenance(recording: original)
        self.scenario = scenario
        let exchanges = recording.exchanges
        var facts: [ExchangeFacts] = []
        facts.reserveCapacity(exchanges.count)
        var previousHop: [Int: Int] = [:]
        for e in exchanges { if let next = e.redirect?.next { previousHop[next] = e.sequence } }
        var documentURL: String?
        var documentTarget: RequestTarget?
        var documentSequence: Int?
        let firstDocument = exchanges.first { $0.initiator.isDocument && $0.frame.kind == .main && ($0.redirect?.hop ?? 0) == 0 }?.sequence
        let recordedPage = Self.recordedPage(exchanges, firstDocument: firstDocument)
        let documentOrigins = Set(exchanges.lazy.filter(\.initiator.isDocument).compactMap { $0.request.target?.origin })
        for e in exchanges {
            let hop = e.redirect?.hop ?? 0
            // The request is issued under the document before it; a document load then
            // becomes the document of what follows.
            let issuedUnder = documentURL, issuedUnderTarget = documentTarget, issuedUnderSequence = documentSequence
            // Each hop of a main-frame document load moves the page on: it ends at the last.
            if e.initiator.isDocument && e.frame.kind == .main {
                documentURL = e.request.url
                documentTarget = e.request.target
                documentSequence = e.sequence
            }
            // The document whose script wrote what the request carries: the one that sent
            // it, as its Referer says; without one, the main frame's last document. (An ad
            // iframe read as the main frame's next page is not every later request's writer.)
            let frameDocument = e.request.refererTarget ?? documentTarget
            let crossOrigin = Self.crossOrigin(e, issuedUnder: issuedUnderTarget)
            let thirdPartyToPage = Self.thirdPartyToPage(e, issuedUnder: issuedUnderTarget)
            let thirdPartyPage = Self.fromThirdPartyPage(e, issuedUnder: issuedUnderTarget)
            let unseenPage = Self.fromUnseenPage(e, top: recordedPage, documents: documentOrigins)
            let submittedByScript = e.initiator == .formSubmission && Self.submittedByScript(e, page: issuedUnderSequence.map { exchanges[$0] })
            let (formDataRebuilt, nativeMultipart, urlSearchParamsRejoined) = Self.rewrittenBodies(e)
            facts.append(ExchangeFacts(
                documentURL: issuedUnder, crossOrigin: crossOrigin, thirdPartyToPage: thirdPartyToPage, thirdPartyPage: thirdPartyPage, fromUnseenPage: unseenPage, submittedByScript: submittedByScript, frameDocument: frameDocument,
                headerBeforeWrite: self.provenance.inferred[e.sequence].filter { $0.kind == .headerBeforeWrite }.map(\.cookie.name),
                setCookies: e.evidenceGap == .fromCache ? [] : e.response.headers.all("Set-Cookie").compactMap(SetCookie.parse),
                previousHop: previousHop[e.sequence],
                opensProcessPool: hop == 0 && scenario.newProcessPool.contains { $0.matches(e) },
                reusedWebView: hop == 0 && e.initiator.isDocument && e.frame.kind == .main && scenario.reusedWebView.contains { $0.matches(e) },
                uploadListener: scenario.uploadListener(e),
                formDataRebuilt: formDataRebuilt, nativeMultipart: nativeMultipart, urlSearchParamsRejoined: urlSearchParamsRejoined,
                offline: scenario.offlinePackage.map { $0.verdict(for: e) },
                alternatives: ExchangeFacts.alternatives(of: e, binaryKindGiven: scenario.binaryKindGiven)))
        }
        self.facts = facts
        prefetchPages = scenario.prefetch.map { Self.matchPrefetch($0, exchanges) } ?? []
        self.firstDocument = firstDocument
        self.recordedPage = recordedPage
        sessionStart = SessionStartCookies(self.provenance.startingCookies, scenario: scenario, exchanges: exchanges)
        var parts: [any SessionPart] = []
        if let package = scenario.offlinePackage { parts.append(package) }
        if let prefetch = scenario.prefetch { parts.append(prefetch) }
        scenarioHooks = parts.map(\.hooks)
    }

    /// Whether the request goes to another origin than the document that sent it.
    static func crossOrigin(_ e: Exchange, issuedUnder document: RequestTarget?) -> Bool {
        guard let target = e.request.target else { return false }
        // The Origin a request carries names the document that sent it: an iframe's (a chat
        // widget's frame posting to its own server) rather than the page's.
        if let sender = namedOrigin(e.request) { return !sender.hasSameOrigin(as: target) }
        return document.map { !$0.hasSameOrigin(as: target) } ?? false
    }

    /// The body as a bridge or a native plugin would send it instead: a FormData rebuilt as
    /// multipart, the parts a native multipart encoder gets, URLSearchParams rejoined.
    static func rewrittenBodies(_ e: Exchange) -> (formData: BodyFingerprint?, nativeMultipart: NativeMultipart?, urlSearchParams: BodyFingerprint?) {
        guard !e.request.body.isEmpty else { return (nil, nil, nil) }
        switch e.bodyKind {
        case .formData, .formDataWithFile:
            let rebuilt = BodyBridge.rebuildMultipart(e.request.body, contentType: e.request.headers.first("Content-Type")).map(BodyFingerprint.init)
            return (rebuilt, CapacitorHttpStrategy.nativeMultipart(e), nil)
        case .urlEncoded:
            return (nil, nil, BodyFingerprint(BodyBridge.rejoinWithoutEncoding(e.request.body)))
        default:
            return (nil, nil, nil)
        }
    }

    /// P2, S8: the request belongs to a third-party page: a third-party iframe's document,
    /// or a request whose Referer names a page of another site than the top document's.
    /// A first-party iframe's loads from other sites (its images on a CDN) are the
    /// first-party page's, as they are in the main frame.
    static func fromThirdPartyPage(_ e: Exchange, issuedUnder document: RequestTarget?) -> Bool {
        guard e.frame.kind == .iframe, e.frame.thirdParty else { return false }
        guard !e.initiator.isDocument, let top = document?.site, let referer = e.request.refererTarget?.site else { return true }
        return referer != top
    }

    /// A form's submission the page's own script made: the page's HTML calls `.submit()`
    /// and the request does not say a user's gesture started it (`Sec-Fetch-User: ?1`,
    /// which Chromium sends on a clicked submit; WebKit sends none, so its HTML alone
    /// tells).
    static func submittedByScript(_ e: Exchange, page: Exchange?) -> Bool {
        guard let page, e.request.headers.first("Sec-Fetch-User") != "?1" else { return false }
        return page.response.body.range(of: Data(".submit()".utf8)) != nil
    }

    /// The origin a request's `Origin` header names, nil without one or for `null`.
    static func namedOrigin(_ request: RecordedRequest) -> RequestTarget? {
        guard let origin = request.headers.first("Origin"), origin.hasPrefix("http") else { return nil }
        return RequestTarget(origin + "/")
    }

    /// The request names (its Referer) a page of another site than the recorded page that
    /// the recording never loaded: another tab's, or a page from before the recording
    /// began. Which page was top-level when it left is unknown, so A2 does not judge it.
    static func fromUnseenPage(_ e: Exchange, top: RequestTarget?, documents: Set<String>) -> Bool {
        guard !e.initiator.isDocument, let top, let page = e.request.refererTarget, page.scheme == "http" || page.scheme == "https" else { return false }
        return page.site != top.site && !documents.contains(page.origin)
    }

    /// Whether WebKit counts the request as third-party to the top-level page (N4): an
    /// iframe's when its frame is on another site than the page; a main-frame request's when
    /// its site is neither that of the main frame's document before it nor that of the page
    /// it names (its Referer, else its Origin). A navigation of the main frame is first-party
    /// to where it goes. False when nothing names an http(s) page: a page on an app's own
    /// scheme is A2's, and a request no page names is not judged.
    static func thirdPartyToPage(_ e: Exchange, issuedUnder document: RequestTarget?) -> Bool {
        guard let target = e.request.target else { return false }
        switch e.frame.kind {
        case .iframe:
            return e.frame.thirdParty
        case .main where e.initiator.isDocument:
            return false
        default:
            // The page is the main frame's document, or the Referer's when the request came
            // from an iframe read as the main frame or from a page still unloading: third
            // party only to both.
            let pages = [document, e.request.issuingPage].compactMap { $0 }.filter { $0.scheme == "http" || $0.scheme == "https" }
            return !pages.isEmpty && pages.allSatisfy { $0.site != target.site }
        }
    }

    static func recordedPage(_ exchanges: [Exchange], firstDocument: Int?) -> RequestTarget? {
        let page: RequestTarget?
        if let firstDocument {
            page = exchanges.last { ($0.redirect?.chainStart ?? $0.sequence) == firstDocument }?.request.target
        } else {
            page = exchanges.lazy.filter { $0.frame.kind == .main && $0.initiator != .native }
                .compactMap(\.request.issuingPage).first
        }
        guard let page, page.scheme == "http" || page.scheme == "https" else { return nil }
        return page
    }

    /// PF1, PF2: for each main-frame page load a config entry matches, the calls native
    /// code would make and what the page itself asked before its next page load.
    static func matchPrefetch(_ config: PrefetchConfig, _ exchanges: [Exchange]) -> [PrefetchPage] {
        let pages = exchanges.filter { $0.initiator.isDocument && $0.frame.kind == .main && ($0.redirect?.hop ?? 0) == 0 }.map(\.sequence)
        var out: [PrefetchPage] = []
        for (i, page) in pages.enumerated() {
            guard let entry = config.entry(forPage: exchanges[page].request.url) else { continue }
            let end = i + 1 < pages.count ? pages[i + 1] : exchanges.count
            let window = exchanges[(page + 1)..<end].filter { !$0.initiator.isDocument }
            var calls: [PrefetchPage.Call] = []
            for planned in PrefetchConfig.plan(entry, pageURL: exchanges[page].request.url) {
                let api = PrefetchConfig.withoutQuery(planned.url)
                let candidates = window.filter { $0.request.method == planned.method && PrefetchConfig.withoutQuery($0.request.url) == api }
                let plannedQuery = Set(PrefetchConfig.queryItems(of: planned.url).map { "\($0.0)=\($0.1)" })
                var call = PrefetchPage.Call(planned: planned, verdict: .unused, pageRequest: nil, detail: "the page never asked \(planned.method) \(api)")
                for c in candidates {
                    let query = Set(PrefetchConfig.queryItems(of: c.request.url).map { "\($0.0)=\($0.1)" })
                    let body = planned.method == "GET" ? nil : PrefetchConfig.canonicalBody(c.request.body)
                    if query == plannedQuery && body == planned.body {
                        call = PrefetchPage.Call(planned: planned, verdict: .hit, pageRequest: c.sequence, detail: "the page asked exactly what was prefetched")
                        break
                    }
                    if call.verdict == .unused {
                        let what = query != plannedQuery
                            ? "the page asked ?\(query.sorted().joined(separator: "&")), the prefetch ?\(plannedQuery.sorted().joined(separator: "&"))"
                            : "the page's body \(body ?? "(none)") is not the prefetch's \(planned.body ?? "(none)")"
                        call = PrefetchPage.Call(planned: planned, verdict: .mismatch, pageRequest: c.sequence, detail: what)
                    }
                }
                calls.append(call)
            }
            out.append(PrefetchPage(page: page, calls: calls))
        }
        return out
    }

    /// Replays under one preset; a run's HTTPDNS joins every preset (it acts only where the
    /// strategy sends natively).
    public func replay(_ preset: Preset, profile: Profile = Profile()) -> EmulationResult {
        guard let httpdns = scenario.httpdns else {
            // The emulator replays under this input's scenario: it need not hold a copy.
            return WebViewEmulator(preset: preset, profile: profile).run(self)
        }
        var withHTTPDNS = preset
        withHTTPDNS.mitigations.append(httpdns)
        return WebViewEmulator(preset: withHTTPDNS, profile: profile).run(self)
    }
}

/// A page load a prefetch config matched, and its planned calls.
public struct PrefetchPage: Sendable, Hashable {
    public struct Call: Sendable, Hashable {
        public var planned: PrefetchConfig.PlannedRequest
        /// hit, mismatch or unused; stale is decided per preset, from the jars.
        public var verdict: PrefetchVerdict
        public var pageRequest: Int?
        public var detail: String
    }
    public var page: Int
    public var calls: [Call]
}

/// What the replay input knows of one exchange before any preset runs. Worked out once
/// per recording and read by every preset's replay, so it is shared, not copied: a replay
/// reads an exchange's facts several times, and a copy of this many fields cost more than
/// the reads.
public final class ExchangeFacts: Sendable {
    /// The main frame's document URL when the request was issued.
    public let documentURL: String?
    /// The request goes to another origin than that document's.
    public let crossOrigin: Bool
    /// WebKit counts the request third-party to the top-level page (N4):
    /// `ReplayInput.thirdPartyToPage(_:issuedUnder:)`.
    public let thirdPartyToPage: Bool
    /// The request belongs to a third-party page (P2, S8):
    /// `ReplayInput.fromThirdPartyPage(_:issuedUnder:)`.
    public let thirdPartyPage: Bool
    /// The request names a page the recording never loaded, of another site than the
    /// recorded page (`ReplayInput.fromUnseenPage`).
    public let fromUnseenPage: Bool
    /// A form's submission its page's script made (`ReplayInput.submittedByScript`).
    public let submittedByScript: Bool
    /// The cookies its Cookie header carried or lacked as they were before a recent
    /// write (E8: the header was built before it): not compared.
    public let headerBeforeWrite: [String]
    /// The document of the frame that issued it.
    public let frameDocument: RequestTarget?
    /// The response's Set-Cookie headers, parsed (unparsable ones left out).
    public let setCookies: [SetCookie]
    /// The exchange whose redirect led here, for a hop after the first.
    public let previousHop: Int?
    /// The first request of a web view with its own process pool (J4).
    public let opensProcessPool: Bool
    /// A document load in a pooled web view reused from an earlier page (W1).
    public let reusedWebView: Bool
    /// The scenario marks the XHR's upload listener (S3).
    public let uploadListener: Bool
    /// B5: the multipart body rebuilt through a dictionary, as KKJSBridge does.
    public let formDataRebuilt: BodyFingerprint?
    /// CAPH5: the multipart body as CapacitorHttp's native side writes it again.
    public let nativeMultipart: NativeMultipart?
    /// B6: the URL-encoded body re-joined without percent-encoding, as the NetEase snippet does.
    public let urlSearchParamsRejoined: BodyFingerprint?
    /// What the run's offline package holds for this request, before any preset (O1, O2).
    public let offline: OfflineVerdict?
    /// The exchange as each page API it could have come from issued it, when the recording
    /// cannot tell (`alternatives(of:binaryKindGiven:)`); empty when it can.
    public let alternatives: [(Exchange, String)]

    public init(documentURL: String?, crossOrigin: Bool, thirdPartyToPage: Bool, thirdPartyPage: Bool = false, fromUnseenPage: Bool = false, submittedByScript: Bool = false, frameDocument: RequestTarget?, headerBeforeWrite: [String] = [],
        setCookies: [SetCookie], previousHop: Int?, opensProcessPool: Bool, reusedWebView: Bool, uploadListener: Bool,
        formDataRebuilt: BodyFingerprint? = nil, nativeMultipart: NativeMultipart? = nil, urlSearchParamsRejoined: BodyFingerprint? = nil, offline: OfflineVerdict? = nil,
        alternatives: [(Exchange, String)] = [])
    {
        self.documentURL = documentURL
        self.crossOrigin = crossOrigin
        self.thirdPartyToPage = thirdPartyToPage
        self.thirdPartyPage = thirdPartyPage
        self.fromUnseenPage = fromUnseenPage
        self.submittedByScript = submittedByScript
        self.headerBeforeWrite = headerBeforeWrite
        self.frameDocument = frameDocument
        self.setCookies = setCookies
        self.previousHop = previousHop
        self.opensProcessPool = opensProcessPool
        self.reusedWebView = reusedWebView
        self.uploadListener = uploadListener
        self.formDataRebuilt = formDataRebuilt
        self.nativeMultipart = nativeMultipart
        self.urlSearchParamsRejoined = urlSearchParamsRejoined
        self.offline = offline
        self.alternatives = alternatives
    }

    /// The possibilities the model cannot tell apart: an ajax request of unknown API is an
    /// XHR or a fetch; a binary body the scenario did not classify is a Blob or an
    /// ArrayBuffer. Empty when the exchange is what it says.
    static func alternatives(of e: Exchange, binaryKindGiven: Bool) -> [(Exchange, String)] {
        let unknownBinary = e.bodyKind == .binary && !binaryKindGiven
        guard e.initiator == .ajax || unknownBinary else { return [] }
        var out: [(Exchange, String)] = [(e, "")]
        if e.initiator == .ajax {
            var x = e, f = e
            x.initiator = .xhr
            f.initiator = .fetch
            out = [(x, "an XHR"), (f, "a fetch")]
        }
        if unknownBinary {
            out = out.flatMap { (v, label) -> [(Exchange, String)] in
                [(v, label.isEmpty ? "a Blob body" : "\(label) with a Blob body"), (v, label.isEmpty ? "an ArrayBuffer body" : "\(label) with an ArrayBuffer body")]
            }
            // The second of each pair carries an ArrayBuffer.
            for i in out.indices where i % 2 == 1 { out[i].0.bodyKind = .binaryArrayBuffer }
        }
        return out
    }
}

/// The jars' cookies at the session's start, created then: the scenario's initial jars
/// (cookies.txt files) and the cookies inferred to have been there from the start, less
/// those the scenario gives itself.
struct SessionStartCookies: Sendable {
    /// When the session began, as far as the recording knows.
    var time: Double
    var native: [Cookie] = []
    var web: [Cookie] = []
    var inferred: [Cookie] = []

    init(_ startingCookies: [Cookie], scenario: Scenario, exchanges: [Exchange]) {
        time = (exchanges.first?.startedAt ?? 0) - CookieProvenance.scriptLead
        guard !exchanges.isEmpty else { return }
        let start = time
        func created(_ cookie: Cookie) -> Cookie {
            var cookie = cookie
            cookie.creation = start
            return cookie
        }
        native = scenario.nativeCookies.map(created)
        web = scenario.webCookies.map(created)
        // The scenario's own cookies replace the recording's of the same name.
        let given = Set(native.map(\.name) + web.map(\.name))
        inferred = startingCookies.filter { !given.contains($0.name) }.map(created)
    }

    var isEmpty: Bool { native.isEmpty && web.isEmpty && inferred.isEmpty }
}
