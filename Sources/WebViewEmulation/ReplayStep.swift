import CookieJar
import TrafficModel

/// What stays fixed through one replay: the recording, its facts, and what the preset
/// decided before the first exchange.
struct ReplaySetup {
    let input: ReplayInput
    let exchanges: [Exchange]
    let provenance: CookieProvenance
    let hooks: ComposedHooks
    /// W1: a pooled web view's document-start scripts were built when it was created, at
    /// the session's start, with the NativeJar of then; kept only where a document-start
    /// script runs.
    let pooledNativeJar: CookieStore?
    /// When the session began, as far as the recording knows: a script write no request
    /// bounds happened after it.
    let sessionStart: Double
    /// A1-A3: under a framework that serves the page from its own scheme, the first
    /// document is the bundled page, and the main frame stays on it until the next
    /// document load, the exchange `appPageEnd`. (What the bundle answers, A3 and A4, the
    /// shell says at the `loadAboutToGo` moment.)
    let app: AppShell?
    let appPageEnd: Int
    /// RNW1: a jar copied into the other before the web view's first load, the load
    /// waiting for it: at the session's start, before anything the recording holds.
    let firstLoadMirrors: [JarMirror]

    /// `nativeJar` is NativeJar at the session's start, before any first-load copy.
    /// (Every field is worked out from locals, never read back from `self` while it is
    /// being set: a read of a half-made setup copied it whole, once a replay.)
    init(input: ReplayInput, app: AppShell?, hooks: ComposedHooks, nativeJar: CookieStore) {
        let exchanges = input.recording.exchanges
        var appPageEnd = exchanges.count
        if app != nil, let first = input.firstDocument {
            let next = exchanges.first { $0.sequence > first && $0.initiator.isDocument && $0.frame.kind == .main && ($0.redirect?.hop ?? 0) == 0 }
            appPageEnd = next?.sequence ?? exchanges.count
        }
        self.input = input
        self.exchanges = exchanges
        provenance = input.provenance
        self.hooks = hooks
        pooledNativeJar = hooks.documentStart.isEmpty ? nil : nativeJar
        sessionStart = input.sessionStart.time
        self.app = app
        self.appPageEnd = appPageEnd
        firstLoadMirrors = hooks.beforeFirstLoad.compactMap { $0() }
    }
}

/// What one replay changes as it walks the exchanges: the jars, the outcomes so far, and
/// what a later exchange needs to know of an earlier one.
struct ReplayState {
    var jars = JarPair()
    var outcomes: [Outcome] = []
    /// The plan of each load that redirects, by the sequence of its first hop.
    var plans = [Int: TransportPlan]()
    /// C1: the Cookie header given to the first document's loadRequest, for its redirect
    /// hops (C2).
    var loadHeader: [Cookie] = []
    /// Loads whose later hops an answer without the server stands for (A4: the bundle's;
    /// O4: the offline package's), by the sequence of their first hop, with the answer's rule.
    var answeredChains = [Int: RuleID]()
    var prefetch: [PrefetchOutcome] = []
    /// Exchanges the preset's interceptor or app shell handled (`interceptedExchanges`).
    var intercepted = 0
    /// One context for the whole flow, its per-exchange facts set afresh for each
    /// exchange: a copy per exchange cost more than the assignments.
    var context: EmulationContext
    /// Responses whose Set-Cookie, and what a transport does after it, waits for the
    /// response's head to arrive (as in the cookie provenance walk).
    var arriving = ArrivalQueue<WebViewEmulator.Arrival>()
}

/// Where a request's cookies were read, for its response's Set-Cookie to be written the
/// same way.
struct CookieRoute {
    /// The request's target, under the IP a mitigation sent it to (D1, D2).
    var target: RequestTarget
    /// The rule by which it went to that IP, nil when it went to its own host.
    var hostRule: RuleID?
    var byIP: Bool { hostRule != nil }
    /// N4: WebKit's own request to another site than the page's, under ITP.
    var keptOffByITP: Bool
    /// A2: a request of the app's bundled page to another site, under ITP.
    var thirdPartyToApp: Bool
}

/// The phases are functions for a reader and one body for the optimiser: each is inlined
/// into `step` (`@inline(__always)`), 9,153 instructions per evaluation against 9,285
/// without, when the single 345-line loop before took 8,863 (callgrind, Tools/bench's
/// method, bundled Recordings). They take the state `inout` and the setup borrowed, and
/// return no tuples: a returned tuple of a plan or a header cost copies paid per exchange
/// (9,652).
extension WebViewEmulator {
    /// One exchange, phase by phase (docs/architecture.md, "One replay, step by step"):
    /// responses that arrived, the page's context and scripts, native code's own request,
    /// the load's start, what answers it before the transport, the transport, what the
    /// app's interceptor answers, CORS, the cookies sent, the response's cookies, and where
    /// a redirect leaves the page. An exchange that a phase answers stops there.
    @inline(__always) func step(_ e: Exchange, _ setup: borrowing ReplaySetup, _ state: inout ReplayState) {
        let facts = setup.input.facts[e.sequence]
        if !state.arriving.isEmpty { landArrivals(before: e, setup, arriving: &state.arriving, jars: &state.jars) }
        state.jars.completeSyncs(upTo: e.startedAt)
        let fromAppPage = enter(e, facts: facts, setup, &state.context)
        let crossSite = runPageScripts(e, facts: facts, fromAppPage: fromAppPage, setup, &state.jars)
        var outcome = Outcome(sequence: e.sequence, deliveredMethod: e.request.method, deliveredURL: e.request.url, deliveredBody: e.request.bodyFingerprint)
        if e.initiator == .native {
            sentByNativeCode(e, facts: facts, setup, &state, &outcome)
            state.outcomes.append(outcome)
            return
        }
        startLoad(e, fromAppPage: fromAppPage, setup, &state, &outcome)
        if !setup.hooks.loadAboutToGo.isEmpty, answeredBeforeTransport(e, fromAppPage: fromAppPage, facts: facts, setup, &state, &outcome) {
            state.outcomes.append(outcome)
            return
        }
        var eventSourceUnbridged = false
        let plan = planTransport(e, facts: facts, setup, &state, &outcome, eventSourceUnbridged: &eventSourceUnbridged)
        if plan.intercepted || setup.app != nil { state.intercepted += 1 }
        if !setup.hooks.loadAtInterceptor.isEmpty, answeredAtInterceptor(e, fromAppPage: fromAppPage, facts: facts, plan: plan, setup, &state, &outcome) {
            state.outcomes.append(outcome)
            return
        }
        if !crossSite.isEmpty { outcome.crossSiteCookies = crossSite }
        checkCORS(e, plan: plan, exchanges: setup.exchanges, context: state.context, &outcome)
        if outcome.has(.failed) {
            // D4, D5: the request fails before it reaches the server.
            state.outcomes.append(outcome)
            return
        }
        if let recorded = e.request.target {
            let route = cookieRoute(e, to: recorded, facts: facts, plan: plan, setup, context: state.context)
            let header = cookieHeader(e, route: route, facts: facts, plan: plan, setup, &state, &outcome)
            outcome.sentCookies = header.cookies
            compareCookies(e, header: header, facts: facts, eventSourceUnbridged: eventSourceUnbridged, setup, jars: state.jars, &outcome)
            receive(e, facts: facts, plan: plan, route: route, setup, &state, &outcome)
        }
        state.outcomes.append(outcome)
        settleRedirect(e, plan: plan, setup, &state)
    }

    /// The responses still on their way that arrive before `e` leaves, and those whose
    /// cookie `e`'s recorded request carried, as the provenance walk read it.
    @inline(__always) func landArrivals(before e: Exchange, _ setup: ReplaySetup, arriving: inout ArrivalQueue<Arrival>, jars: inout JarPair) {
        arriving.land(before: e) { land($0, hooks: setup.hooks, pooledNativeJar: setup.pooledNativeJar, into: &jars) }
        for sent in setup.provenance.sent[e.sequence] where sent.kind == .serverSet {
            guard let by = sent.setBy, by < setup.exchanges.count else { continue }
            for arrival in arriving.arrived(through: setup.exchanges[by]) {
                land(arrival, hooks: setup.hooks, pooledNativeJar: setup.pooledNativeJar, into: &jars)
            }
        }
    }

    /// The exchange's page, as the recording shows it, set on the context. Returns whether
    /// the main frame is on the app's bundled page (A1-A3), from its load to the next
    /// document load: what it issues comes from the app's origin.
    @inline(__always) func enter(_ e: Exchange, facts: ExchangeFacts, _ setup: ReplaySetup, _ context: inout EmulationContext) -> Bool {
        context.documentURL = facts.documentURL
        context.crossOrigin = facts.crossOrigin
        context.thirdPartyPage = facts.thirdPartyPage
        context.submittedByScript = facts.submittedByScript
        context.uploadListener = facts.uploadListener
        context.nativeMultipart = facts.nativeMultipart
        let fromAppPage = setup.app != nil && e.frame.kind == .main && e.sequence < setup.appPageEnd
        context.appPage = fromAppPage ? setup.app : nil
        return fromAppPage
    }

    /// What happened to the jars before `e` left: a new process pool (J4), then the
    /// cookie writes of the page's scripts the provenance walk inferred. Returns the
    /// script-set cookies a setter hook accepted for a site the page may not set (C9).
    @inline(__always) func runPageScripts(_ e: Exchange, facts: ExchangeFacts, fromAppPage: Bool, _ setup: ReplaySetup, _ jars: inout JarPair) -> [String] {
        let time = e.startedAt
        // J4: a new web view with its own process pool starts without session cookies.
        if facts.opensProcessPool { jars.dropSessionCookies(from: .web, at: time) }
        let events = setup.provenance.inferred[e.sequence]
        guard !events.isEmpty else { return [] }
        let crossSite = applyScriptEvents(
            events, at: time, into: &jars, hooks: setup.hooks.scriptCookieWritten, deletionHooks: setup.hooks.scriptCookieDeleted, page: facts.frameDocument,
            writerNamed: e.request.headers.first("Referer") != nil, onAppPage: fromAppPage, inMainFrame: e.frame.kind == .main)
        jars.completeSyncs(upTo: time)
        return crossSite
    }

    /// NC1: the app's native code sent it, outside the web view: no strategy or mitigation
    /// touches it, and what it carried is NativeJar's business. Its Set-Cookie goes to
    /// NativeJar, which WebJar learns through J1.
    @inline(__always) func sentByNativeCode(_ e: Exchange, facts: ExchangeFacts, _ setup: ReplaySetup, _ state: inout ReplayState, _ outcome: inout Outcome) {
        outcome.note(Change(rule: "NC1", what: "sent by native code, outside the web view; not compared"))
        guard let target = e.request.target, !facts.setCookies.isEmpty else { return }
        var origin = JarPair.Origin(rules: ["NC1"], setBy: e.sequence, redirectStatus: e.response.isRedirect ? e.response.status : nil)
        origin.fromRedirect = e.response.isRedirect
        admit(Arrival(at: e.responseArrivedAt, end: e.endedAt, setCookies: facts.setCookies, target: target, side: .native, origin: origin), of: e, setup, &state)
    }

    /// What a response does to the jars: landed now when nothing is held and no request
    /// leaves before it arrives (most flows, and no queue to keep), else held until then.
    @inline(__always) func admit(_ arrival: Arrival, of e: Exchange, _ setup: ReplaySetup, _ state: inout ReplayState) {
        if state.arriving.isEmpty, Self.landsBeforeNext(arrival, after: e, in: setup.exchanges) {
            land(arrival, hooks: setup.hooks, pooledNativeJar: setup.pooledNativeJar, into: &state.jars)
        } else {
            state.arriving.hold(arrival, of: e)
        }
    }

    /// What happens as a load starts: at the first document, the jars a framework copied
    /// before it (RNW1); at a main-frame document load, the calls native code makes for
    /// the page, as a part says at `pageLoadStarts` (PF1-PF3).
    @inline(__always) func startLoad(_ e: Exchange, fromAppPage: Bool, _ setup: ReplaySetup, _ state: inout ReplayState, _ outcome: inout Outcome) {
        if e.sequence == (setup.input.firstDocument ?? 0) {
            for mirror in setup.firstLoadMirrors {
                outcome.note(Change(rule: mirror.rule, note: .mirroredBeforeFirstLoad(from: mirror.from, to: mirror.to)))
            }
        }
        guard !setup.hooks.pageLoadStarts.isEmpty, e.initiator.isDocument, e.frame.kind == .main, e.redirect.map({ $0.hop == 0 }) ?? true else { return }
        let load = pendingLoad(e, fromAppPage: fromAppPage, setup, state)
        for hook in setup.hooks.pageLoadStarts {
            guard let page = hook(load) else { continue }
            state.prefetch += prefetchOutcomes(page, at: e.startedAt, jars: state.jars, provenance: setup.provenance, exchanges: setup.exchanges, into: &outcome)
        }
    }

    /// `e` at a moment before the server, for the parts' hooks.
    @inline(__always) func pendingLoad(_ e: Exchange, fromAppPage: Bool, _ setup: ReplaySetup, _ state: borrowing ReplayState) -> PendingLoad {
        let hop = e.redirect?.hop ?? 0
        let chainStart = e.redirect?.chainStart ?? e.sequence
        return PendingLoad(input: setup.input, sequence: e.sequence, chainStart: chainStart, hop: hop, fromAppPage: fromAppPage, chainAnsweredBy: hop > 0 ? state.answeredChains[chainStart] : nil)
    }

    /// A load no server sees, answered before its transport is planned, as a part says at
    /// `loadAboutToGo`: by the app's bundle (A3, A4) or by the offline package that answered
    /// its chain's first request (O4). True when `e` is one.
    @inline(__always) func answeredBeforeTransport(_ e: Exchange, fromAppPage: Bool, facts: ExchangeFacts, _ setup: ReplaySetup, _ state: inout ReplayState, _ outcome: inout Outcome) -> Bool {
        let load = pendingLoad(e, fromAppPage: fromAppPage, setup, state)
        for hook in setup.hooks.loadAboutToGo {
            guard let answer = hook(&outcome, load) else { continue }
            apply(answer, to: load, facts: facts, &state)
            return true
        }
        return false
    }

    /// A load the app's interceptor answers itself once its transport is planned, as a part
    /// says at `loadAtInterceptor` (O1-O4: the offline package's file). True when `e` is one.
    @inline(__always) func answeredAtInterceptor(
        _ e: Exchange, fromAppPage: Bool, facts: ExchangeFacts, plan: TransportPlan, _ setup: ReplaySetup, _ state: inout ReplayState, _ outcome: inout Outcome
    ) -> Bool {
        let load = pendingLoad(e, fromAppPage: fromAppPage, setup, state)
        for hook in setup.hooks.loadAtInterceptor {
            guard let answer = hook(&outcome, load, plan) else { continue }
            apply(answer, to: load, facts: facts, &state)
            return true
        }
        return false
    }

    /// What an answer without the server does: the response's Set-Cookie kept out of both
    /// jars (O3, O4), the chain's later hops answered with it (A4, O4), the exchange counted
    /// among those the app handled.
    @inline(__always) func apply(_ answer: LoadAnswer, to load: PendingLoad, facts: ExchangeFacts, _ state: inout ReplayState) {
        if let rule = answer.dropsSetCookies {
            for setCookie in facts.setCookies {
                state.jars.block(setCookie.name, from: .web, by: rule)
                state.jars.block(setCookie.name, from: .native, by: rule)
            }
        }
        if let rule = answer.chainRule { state.answeredChains[load.chainStart] = rule }
        if answer.intercepted { state.intercepted += 1 }
    }

    /// The transport `e` goes by: WebKit's own for a WebSocket (WS1), the strategy's plan
    /// with the mitigations' changes for a first hop, the chain's plan for a later hop.
    /// Also says whether an EventSource goes another way than an XHR would (ES1).
    /// (No tuple returned: a returned tuple of a plan cost copies a replay pays per exchange.)
    @inline(__always) func planTransport(
        _ e: Exchange, facts: ExchangeFacts, _ setup: ReplaySetup, _ state: inout ReplayState, _ outcome: inout Outcome, eventSourceUnbridged: inout Bool
    ) -> TransportPlan {
        if e.initiator == .websocket {
            // WS1: WebKit opens WebSockets itself: no NSURLProtocol (registered for http
            // and https, not ws and wss), scheme handler or XHR and fetch bridge sees the
            // handshake, and no CORS check applies; it carries WebJar's cookies.
            outcome.note(Change(rule: "WS1", what: "a WebSocket handshake: WebKit's own, under every strategy"))
            return Self.webSocketPlan
        }
        guard let link = e.redirect, link.hop > 0 else { return planFirstHop(e, setup, &state, &outcome, eventSourceUnbridged: &eventSourceUnbridged) }
        let plan = state.plans[link.chainStart] ?? planChainHead(link.chainStart, setup)
        if let previous = facts.previousHop, setup.exchanges[previous].response.preservesMethod, !e.request.bodyFingerprint.isEmpty {
            let chainStartIsDocument = setup.exchanges[link.chainStart].initiator.isDocument
            followPreservingRedirect(&outcome, previous: previous, plan: plan, chainStartIsDocument: chainStartIsDocument, exchanges: setup.exchanges, outcomes: state.outcomes)
        }
        return plan
    }

    /// A load's first hop: the strategy plans it and the mitigations adjust it.
    @inline(__always) func planFirstHop(_ e: Exchange, _ setup: ReplaySetup, _ state: inout ReplayState, _ outcome: inout Outcome, eventSourceUnbridged: inout Bool) -> TransportPlan {
        let plan = issue(e, input: setup.input, context: state.context, hooks: setup.hooks, into: &outcome)
        if e.initiator == .eventSource {
            // ES1: neither XHR nor fetch, so a bridge that patches those does not see it;
            // the strategy's transport carries it as any subresource. Where an XHR would
            // have gone another way, its cookie differences cite ES1.
            outcome.note(Change(rule: "ES1", what: "an EventSource: no XHR or fetch bridge sees it"))
            var asXHR = e
            asXHR.initiator = .xhr
            let bridged = preset.strategy.plan(for: asXHR, in: state.context)
            eventSourceUnbridged = bridged.requestJar != plan.requestJar || bridged.intercepted != plan.intercepted
        }
        if e.redirect?.next != nil { state.plans[e.redirect?.chainStart ?? e.sequence] = plan }
        return plan
    }

    /// The plan of a chain's first hop, for a later hop of a chain that kept none.
    func planChainHead(_ chainStart: Int, _ setup: ReplaySetup) -> TransportPlan {
        let head = setup.input.facts[chainStart]
        var context = EmulationContext(profile: profile, scenario: setup.input.scenario)
        (context.documentURL, context.crossOrigin, context.uploadListener) = (head.documentURL, head.crossOrigin, head.uploadListener)
        context.nativeMultipart = head.nativeMultipart
        context.thirdPartyPage = head.thirdPartyPage
        return preset.strategy.plan(for: setup.exchanges[chainStart], in: context)
    }

    /// A1: a script's request from the app's page to a server reads the response only if
    /// CORS lets the app origin read it.
    @inline(__always) func checkCORS(_ e: Exchange, plan: TransportPlan, exchanges: [Exchange], context: EmulationContext, _ outcome: inout Outcome) {
        guard let page = context.appPage, !plan.intercepted, e.initiator == .xhr || e.initiator == .fetch || e.initiator == .ajax || e.initiator == .eventSource,
            let target = e.request.target, target.scheme == "http" || target.scheme == "https",
            !ExchangeClassifier.isPreflight(e.request),  // the engine's own preflight (E5)
            let reason = CORSCheck.check(e, from: page.origin, in: exchanges)
        else { return }
        outcome[.corsBlocked] = ["A1", page.originRule]
        outcome.corsReason = reason
        outcome.note(Change(rule: "A1", note: .unreadableResponse(origin: page.origin, reason: reason)))
    }

    /// Where the request's cookies are read and its response's written: under the host a
    /// mitigation sends it to (D1, D2: an HTTPDNS IP), and whether WebKit treats it as
    /// third-party (N4, A2).
    @inline(__always) func cookieRoute(_ e: Exchange, to recorded: RequestTarget, facts: ExchangeFacts, plan: TransportPlan, _ setup: ReplaySetup, context: EmulationContext) -> CookieRoute {
        // N4: WebKit's own request to another site than the page's (measured in WebKitGTK 2.50.6).
        let keptOffByITP = profile.itp && !plan.intercepted && facts.thirdPartyToPage
        // D1, D2: a request sent to an IP (HTTPDNS) reads and writes cookies under the IP.
        let byHost = (e.redirect?.hop ?? 0) == 0 && e.initiator != .websocket ? cookieHost(e, plan: plan, context: context, input: setup.input, hooks: setup.hooks) : nil
        let target = byHost.map { recorded.with(host: $0.host) } ?? recorded
        // A navigation of the main frame is first-party to where it goes, not third-party
        // to the app. An iframe's requests are not: the top-level page is still the app's,
        // and ITP judges a request by the top-level site, not by the frame that sends it.
        // Nor is a request of a page the recording never loaded: its top-level site is unknown.
        let thirdPartyToApp = !plan.intercepted && profile.itp && !(e.initiator.isDocument && e.frame.kind == .main) && !facts.fromUnseenPage
            && topAppPage(e, setup).map { !$0.serves(target) } == true
        return CookieRoute(target: target, hostRule: byHost?.rule, keptOffByITP: keptOffByITP, thirdPartyToApp: thirdPartyToApp)
    }

    /// The app's bundled page while it is the top-level page (A2).
    func topAppPage(_ e: Exchange, _ setup: ReplaySetup) -> AppShell? {
        setup.app != nil && e.sequence < setup.appPageEnd ? setup.app : nil
    }

    /// The Cookie header the request carries under the preset: from the jar the transport
    /// reads, or given to the first document's load (C1, C2), less what WebKit keeps off it
    /// (N4, A2, N5).
    @inline(__always) func cookieHeader(_ e: Exchange, route: CookieRoute, facts: ExchangeFacts, plan: TransportPlan, _ setup: ReplaySetup, _ state: inout ReplayState, _ outcome: inout Outcome) -> CookieHeaderChoice {
        let time = e.startedAt
        let target = route.target
        var header = CookieHeaderChoice(cookies: state.jars.cookies(in: plan.requestJar, for: target, at: time), side: plan.requestJar, rule: route.hostRule ?? plan.requestJarRule, fixedAtLoad: false)
        let hop = e.redirect?.hop ?? 0
        if (e.redirect?.chainStart ?? e.sequence) == setup.input.firstDocument, let load = setup.hooks.documentLoadCookies.firstNonNil({ $0(DocumentLoad(hop: hop)) }) {
            if load.source == .nativeJarNow { state.loadHeader = state.jars.native.cookies(for: target, at: time) }
            outcome.note(Change(rule: load.rule, what: "Cookie header given to loadRequest, built from NativeJar"))
            header = CookieHeaderChoice(cookies: state.loadHeader, side: .native, rule: load.rule, fixedAtLoad: load.source == .headerOfLoad)
            header.givenToLoad = true
        }
        if !plan.intercepted && !header.givenToLoad {
            // N4, A2, N5: cookies WebKit itself keeps off the request.
            withhold(&header, from: e, issuedUnder: facts.documentURL, appPage: topAppPage(e, setup), keptOffByITP: route.keptOffByITP, thirdPartyToApp: route.thirdPartyToApp, target: target)
        }
        return header
    }

    /// The header's cookies against the recorded ones, each difference with its rule;
    /// nothing compared where the recorded header is no evidence (E1-E8).
    @inline(__always) func compareCookies(_ e: Exchange, header: CookieHeaderChoice, facts: ExchangeFacts, eventSourceUnbridged: Bool, _ setup: ReplaySetup, jars: JarPair, _ outcome: inout Outcome) {
        if let gap = e.evidenceGap {
            // E1-E7: the recorded Cookie header is no evidence; nothing to compare.
            outcome.note(Change(rule: RuleID(gap.rule), note: .cookiesNotCompared(reason: gap.reason)))
            return
        }
        outcome.cookieDifferences = cookieDifferences(recorded: setup.provenance.sent[e.sequence], header: header, jars: jars, time: e.startedAt, sessionStart: setup.sessionStart)
        if !facts.headerBeforeWrite.isEmpty {
            // E8: those cookies are as they were before a recent write; the rest of the header still shows the jar.
            outcome.cookieDifferences.removeAll { facts.headerBeforeWrite.contains($0.name) }
            let names = facts.headerBeforeWrite.joined(separator: ", ")
            outcome.note(Change(rule: "E8", note: .cookiesNotCompared(reason: "\(names) as before a recent write: the Cookie header was built before it, the request queued behind others")))
        }
        if eventSourceUnbridged {
            for k in outcome.cookieDifferences.indices { outcome.cookieDifferences[k].rules.insert("ES1", at: min(1, outcome.cookieDifferences[k].rules.count)) }
        }
        if !outcome.cookieDifferences.isEmpty && !header.givenToLoad {
            outcome.note(Change(rule: header.rule, note: .cookieHeaderBuilt(from: header.side)))
        }
    }

    /// The response, once its head arrives: its Set-Cookie to the jar the transport writes
    /// or kept out (N4, A2, ION3), a framework's copy of a jar after it (CAPC2), and the
    /// main frame's document-start script once its chain ends (C3-C6, W1).
    @inline(__always) func receive(_ e: Exchange, facts: ExchangeFacts, plan: TransportPlan, route: CookieRoute, _ setup: ReplaySetup, _ state: inout ReplayState, _ outcome: inout Outcome) {
        var arrival = Arrival(at: e.responseArrivedAt, end: e.endedAt, setCookies: [], target: route.target, side: plan.responseJar, origin: JarPair.Origin(rules: [], setBy: e.sequence, redirectStatus: nil))
        if !facts.setCookies.isEmpty, let refusal = refusedSetCookie(facts.setCookies[0], route: route, plan: plan, setup) {
            for setCookie in facts.setCookies { state.jars.block(setCookie.name, from: .web, by: refusal.rule) }
            outcome.note(refusal)
        } else if !facts.setCookies.isEmpty {
            var origin = JarPair.Origin(rules: [plan.responseJarRule], setBy: e.sequence, redirectStatus: e.response.isRedirect ? e.response.status : nil)
            if route.byIP { origin.rules.append("D2") }  // stored under the IP
            origin.fromRedirect = e.response.isRedirect
            if plan.responseJar == .native {
                outcome.note(Change(rule: plan.responseJarRule, what: "Set-Cookie stored in NativeJar, not WebJar"))
            }
            arrival.setCookies = facts.setCookies
            arrival.origin = origin
            arrival.byIP = route.byIP
        }
        arrival.mirror = plan.jarCopyAfter
        if !setup.hooks.documentStart.isEmpty, e.redirect?.next == nil {
            let chainStart = e.redirect?.chainStart ?? e.sequence
            let head = setup.exchanges[chainStart]
            if head.initiator.isDocument, head.frame.kind == .main {
                let reused = setup.input.facts[chainStart].reusedWebView
                if reused { outcome.note(Change(rule: "W1", what: "a reused web view's document-start script writes the NativeJar of its creation")) }
                arrival.documentStart = reused ? Arrival.DocumentStart.inPooledWebView : .inWebView
            }
        }
        if !arrival.setCookies.isEmpty || arrival.mirror != nil || arrival.documentStart != nil { admit(arrival, of: e, setup, &state) }
    }

    /// Why WebJar does not store a response's Set-Cookie: a third-party response under
    /// ITP (N4, A2) or a mitigation's refusal (ION3: the app's first launch); nil when it
    /// is stored.
    @inline(__always) func refusedSetCookie(_ first: SetCookie, route: CookieRoute, plan: TransportPlan, _ setup: ReplaySetup) -> Change? {
        if route.keptOffByITP || route.thirdPartyToApp {
            // N4, A2: WebKit does not store a third-party response's cookies either.
            return Change(rule: route.keptOffByITP ? "N4" : "A2", what: "Set-Cookie of a third-party response not stored")
        }
        guard plan.responseJar == .web, !setup.hooks.webSetCookieArriving.isEmpty else { return nil }
        let arriving = SetCookieArrival(name: first.name, firstLaunch: setup.input.scenario.firstLaunch)
        guard let rule = setup.hooks.webSetCookieArriving.firstNonNil({ $0(arriving) }) else { return nil }
        return Change(rule: rule, what: "Set-Cookie ignored: the app's first launch")
    }

    /// The page's URL once a redirect chain ends: the last hop's, unless a native session
    /// followed it silently and handed the response over under the first URL. (A chain the
    /// offline package answered never comes here: each of its later hops is answered before
    /// its transport, O4.)
    @inline(__always) func settleRedirect(_ e: Exchange, plan: TransportPlan, _ setup: ReplaySetup, _ state: inout ReplayState) {
        guard let link = e.redirect, link.hop > 0, link.next == nil else { return }
        let chainStart = link.chainStart
        let silent = plan.redirects == .silent || (plan.redirects == .reloadDocument && !setup.exchanges[chainStart].initiator.isDocument)
        switch silent ? RedirectHandling.silent : plan.redirects {
        case .silent:
            state.outcomes[chainStart].pageURL = setup.exchanges[chainStart].request.url
            state.outcomes[chainStart][.redirectHidden] = [plan.redirectRule]
            state.outcomes[chainStart].note(Change(rule: plan.redirectRule, what: "redirect followed silently; the page stays at the first URL"))
        case .engine, .forwarded, .reloadDocument, .reported:
            state.outcomes[chainStart].pageURL = e.request.url
            if plan.redirects == .engine {
                state.outcomes[chainStart].note(Change(rule: plan.redirectRule, what: "WebKit followed the redirect; the page sees every hop"))
            } else if plan.redirects == .reported {
                state.outcomes[chainStart].note(Change(rule: plan.redirectRule, what: "the native session followed the redirect and gave the page the final URL"))
            }
        }
    }

    /// The responses still held land, the last synchronisations complete, and the jars'
    /// disagreements are read (none where they never exchange cookies, TAU3).
    func finish(_ setup: borrowing ReplaySetup, _ state: inout ReplayState) -> EmulationResult {
        for arrival in state.arriving.all() { land(arrival, hooks: setup.hooks, pooledNativeJar: setup.pooledNativeJar, into: &state.jars) }
        state.jars.completeSyncs(upTo: .infinity)
        let end = setup.exchanges.last?.endedAt ?? 0
        var separate = false
        if case .separate = state.jars.link { separate = true }
        var result = EmulationResult(preset: preset.name, outcomes: state.outcomes, divergences: separate ? [] : divergences(state.jars, at: end), jarEvents: state.jars.events, prefetch: state.prefetch)
        result.interceptedExchanges = state.intercepted
        return result
    }
}
