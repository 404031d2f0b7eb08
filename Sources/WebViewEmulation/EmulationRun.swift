import CookieJar
import TrafficModel

/// One replay under one preset in progress: the jars, the outcomes so far, and what the
/// flow has settled on the way (a redirect chain's plan, the chains the app's bundle or the
/// offline package answered). `WebViewEmulator.run` makes one, `step`s it past each
/// exchange in time order, and `finish`es it.
///
/// A step runs its phases in order, and a phase that settles the exchange ends the step:
/// 1. `landArrivals`: responses whose head arrived before the request leaves reach the jars;
/// 2. `begin`: the page's context for the request, and its script's cookie writes;
/// 3. `claimedBeforeTransport`: native code, the app's bundle and the offline package's
///    redirect hops settle what never reaches a transport;
/// 4. `planTransport`: the strategy plans the transport and the mitigations adjust it;
/// 5. `servedOffline`, `checkCORS`: the offline package serves it, the app origin reads it;
/// 6. `exchangeCookies`: the Cookie header from the jar the transport reads, compared with
///    the recorded one, and the response's Set-Cookie sent towards the jar it writes;
/// 7. `settlePageURL`: where the page is once a redirect chain ends.
struct EmulationRun {
    let emulator: WebViewEmulator
    let input: ReplayInput
    let exchanges: [Exchange]
    let hooks: ComposedHooks
    /// A1-A4: the framework's app shell, when the page is served from the app's own scheme.
    let app: AppShell?
    /// When the session began, as far as the recording knows: a script write no request
    /// bounds happened after it.
    let sessionStart: Double
    /// W1: a pooled web view's document-start scripts were built when it was created, at
    /// the session's start, with the NativeJar of then; kept only where a document-start
    /// script runs.
    let pooledNativeJar: CookieStore?
    /// RNW1: a jar copied into the other before the web view's first load, the load
    /// waiting for it: at the session's start, before anything the recording holds.
    let firstLoadMirrors: [JarMirror]
    /// PF1-PF3: the pages whose load starts a native prefetch, by sequence.
    let prefetchPages: [Int: PrefetchPage]
    /// A1-A3: the main frame stays on the bundled page until the next document load.
    let appPageEnd: Int
    /// A4: where the recorded page was, whose own static files the app bundles with it.
    let bundledOrigin: RequestTarget?

    var jars = JarPair()
    var outcomes: [Outcome] = []
    /// The plan of each load that redirects, by the sequence of its first hop.
    var plans = [Int: TransportPlan]()
    /// C1: the Cookie header given to the first document's loadRequest, for its redirect hops (C2).
    var loadHeader: [Cookie] = []
    /// O4: chains whose first request the offline package answered: their hops never go.
    var servedChains = Set<Int>()
    /// A4: loads answered from the bundle, by the sequence of their first hop.
    var bundledChains = Set<Int>()
    var prefetch: [PrefetchOutcome] = []
    /// Exchanges the preset's interceptor or app shell handled (`interceptedExchanges`).
    var intercepted = 0
    /// One context for the whole flow, its per-exchange facts set afresh for each
    /// exchange: a copy per exchange cost more than the assignments.
    var context: EmulationContext
    /// Responses whose Set-Cookie, and what a transport does after it, waits for the
    /// response's head to arrive (as in the cookie provenance walk).
    var arriving = ArrivalQueue<WebViewEmulator.Arrival>()

    var profile: Profile { emulator.profile }

    init(_ emulator: WebViewEmulator, input: ReplayInput) {
        self.emulator = emulator
        self.input = input
        exchanges = input.recording.exchanges
        hooks = emulator.preset.hooks
        app = emulator.preset.app
        sessionStart = input.sessionStart.time
        context = EmulationContext(profile: emulator.profile, scenario: input.scenario)
        jars.link = hooks.jarLink
        outcomes.reserveCapacity(exchanges.count)
        emulator.placePreexisting(input.sessionStart, scenario: input.scenario, into: &jars)
        pooledNativeJar = hooks.documentStart.isEmpty ? nil : jars.native
        firstLoadMirrors = hooks.beforeFirstLoad.compactMap { $0() }
        var pages = [Int: PrefetchPage]()
        for page in input.prefetchPages { pages[page.page] = page }
        prefetchPages = pages
        for mirror in firstLoadMirrors { jars.mirror(mirror, at: sessionStart) }
        bundledOrigin = app != nil ? input.recordedPage : nil
        appPageEnd = Self.appPageEnd(app: app, input: input)
    }

    /// A1-A3: under a framework that serves the page from its own scheme, the first
    /// document is the bundled page, and the main frame stays on it until the next
    /// document load.
    static func appPageEnd(app: AppShell?, input: ReplayInput) -> Int {
        let exchanges = input.recording.exchanges
        guard app != nil, let first = input.firstDocument else { return exchanges.count }
        return exchanges.first { $0.sequence > first && $0.initiator.isDocument && $0.frame.kind == .main && ($0.redirect?.hop ?? 0) == 0 }?.sequence ?? exchanges.count
    }

    /// Moves the replay past `e`, appending its outcome.
    mutating func step(_ e: Exchange) {
        landArrivals(before: e)
        var s = begin(e)
        if claimedBeforeTransport(&s) { return outcomes.append(s.outcome) }
        let plan = planTransport(&s)
        if plan.intercepted || app != nil { intercepted += 1 }
        if servedOffline(&s, plan: plan) { return outcomes.append(s.outcome) }
        if !s.crossSite.isEmpty { s.outcome.crossSiteCookies = s.crossSite }
        checkCORS(&s, plan: plan)
        // D4, D5: the request fails before it reaches the server.
        if !s.outcome.failedRules.isEmpty { return outcomes.append(s.outcome) }
        if let recorded = e.request.target { exchangeCookies(&s, plan: plan, recorded: recorded) }
        outcomes.append(s.outcome)
        settlePageURL(after: s, plan: plan)
    }

    /// The result once every exchange has been stepped past: what was still arriving
    /// lands, every synchronisation completes, and the jars are compared.
    mutating func finish() -> EmulationResult {
        for arrival in arriving.all() { land(arrival) }
        jars.completeSyncs(upTo: .infinity)
        let end = exchanges.last?.endedAt ?? 0
        // TAU3: jars that never exchange cookies are not expected to agree.
        var separate = false
        if case .separate = jars.link { separate = true }
        var result = EmulationResult(preset: emulator.preset.name, outcomes: outcomes, divergences: separate ? [] : emulator.divergences(jars, at: end), jarEvents: jars.events, prefetch: prefetch)
        result.interceptedExchanges = intercepted
        return result
    }
}

/// What a step knows of the exchange it is moving past, and the outcome it builds.
struct ExchangeStep {
    let exchange: Exchange
    let facts: ExchangeFacts
    let time: Double
    /// The sequence of the redirect chain's first hop (the exchange's own when it is one).
    let chainStart: Int
    let hop: Int
    /// A1-A3: the main frame is on the bundled page from its load to the next document
    /// load; what it issues comes from the app's origin.
    let fromAppPage: Bool
    var outcome: Outcome
    /// C9: cookies a setter hook accepted for a site the page may not set.
    var crossSite: [String] = []
    /// ES1: an EventSource the strategy carries otherwise than it would an XHR.
    var eventSourceUnbridged = false
}

// MARK: - Before the transport

extension EmulationRun {
    /// An arrival let into the jars, after the synchronisations due before it.
    mutating func land(_ arrival: WebViewEmulator.Arrival) {
        emulator.land(arrival, hooks: hooks, pooledNativeJar: pooledNativeJar, into: &jars)
    }

    /// Lands `arrival` now when nothing is held and no request leaves before it (most
    /// flows, and no queue to keep); holds it until its time otherwise.
    mutating func landOrHold(_ arrival: WebViewEmulator.Arrival, of e: Exchange) {
        if arriving.isEmpty, WebViewEmulator.landsBeforeNext(arrival, after: e, in: exchanges) {
            land(arrival)
        } else {
            arriving.hold(arrival, of: e)
        }
    }

    /// The responses whose head arrived before `e` leaves reach the jars.
    mutating func landArrivals(before e: Exchange) {
        guard !arriving.isEmpty else { return }
        // The queue is taken out while it is walked, so that landing may change the jars.
        var queue = ArrivalQueue<WebViewEmulator.Arrival>()
        swap(&queue, &arriving)
        defer { swap(&queue, &arriving) }
        queue.land(before: e) { land($0) }
        // A cookie the recorded request carried from a response still on its way shows it
        // had arrived, as the provenance walk read it.
        for sent in input.provenance.sent[e.sequence] where sent.kind == .serverSet {
            guard let by = sent.setBy, by < exchanges.count else { continue }
            for arrival in queue.arrived(through: exchanges[by]) { land(arrival) }
        }
    }

    /// The page's context for `e`, a new process pool's jar (J4), and the page's script
    /// cookie writes just before the request.
    mutating func begin(_ e: Exchange) -> ExchangeStep {
        let facts = input.facts[e.sequence]
        let time = e.startedAt
        jars.completeSyncs(upTo: time)
        context.documentURL = facts.documentURL
        context.crossOrigin = facts.crossOrigin
        context.thirdPartyPage = facts.thirdPartyPage
        context.submittedByScript = facts.submittedByScript
        context.uploadListener = facts.uploadListener
        context.nativeMultipart = facts.nativeMultipart
        context.appPage = nil
        let fromAppPage = app != nil && e.frame.kind == .main && e.sequence < appPageEnd
        let outcome = Outcome(sequence: e.sequence, deliveredMethod: e.request.method, deliveredURL: e.request.url, deliveredBody: e.request.bodyFingerprint)
        var s = ExchangeStep(exchange: e, facts: facts, time: time, chainStart: e.redirect?.chainStart ?? e.sequence, hop: e.redirect?.hop ?? 0, fromAppPage: fromAppPage, outcome: outcome)
        // J4: a new web view with its own process pool starts without session cookies.
        if facts.opensProcessPool { jars.dropSessionCookies(from: .web, at: time) }
        let events = input.provenance.inferred[e.sequence]
        if !events.isEmpty {
            s.crossSite = emulator.applyScriptEvents(events, at: time, into: &jars, hooks: hooks.scriptCookieWritten, deletionHooks: hooks.scriptCookieDeleted, page: facts.frameDocument,
                writerNamed: e.request.headers.first("Referer") != nil, onAppPage: fromAppPage, inMainFrame: e.frame.kind == .main)
        }
        jars.completeSyncs(upTo: time)
        return s
    }

    /// Whether the exchange is settled before any transport: sent by native code, the
    /// bundled page or one of its files, or a hop of a chain the offline package answered.
    mutating func claimedBeforeTransport(_ s: inout ExchangeStep) -> Bool {
        if s.exchange.initiator == .native {
            sentByNativeCode(&s)
            return true
        }
        startPageLoad(&s)
        if servedAsBundledPage(&s) { return true }
        context.appPage = s.fromAppPage ? app : nil
        return servedAsBundledFile(&s) || neverSentInServedChain(&s)
    }

    /// NC1: the app's native code sent it, outside the web view: no strategy or mitigation
    /// touches it, and what it carried is NativeJar's business. Its Set-Cookie goes to
    /// NativeJar, which WebJar learns through J1.
    mutating func sentByNativeCode(_ s: inout ExchangeStep) {
        let e = s.exchange
        s.outcome.note(Change(rule: "NC1", what: "sent by native code, outside the web view; not compared"))
        guard let target = e.request.target, !s.facts.setCookies.isEmpty else { return }
        var origin = JarPair.Origin(rules: ["NC1"], setBy: e.sequence, redirectStatus: e.response.isRedirect ? e.response.status : nil)
        origin.fromRedirect = e.response.isRedirect
        let arrival = WebViewEmulator.Arrival(at: e.responseArrivedAt, end: e.endedAt, setCookies: s.facts.setCookies, target: target, side: .native, origin: origin)
        landOrHold(arrival, of: e)
    }

    /// RNW1 and PF1-PF3: what happens as the page's load starts, before the request.
    mutating func startPageLoad(_ s: inout ExchangeStep) {
        if s.exchange.sequence == (input.firstDocument ?? 0) {
            for mirror in firstLoadMirrors {
                s.outcome.note(Change(rule: mirror.rule, note: .mirroredBeforeFirstLoad(from: mirror.from, to: mirror.to)))
            }
        }
        if let page = prefetchPages[s.exchange.sequence] {
            // PF1-PF3: native code prefetches the page's API calls as the load starts.
            prefetch += emulator.prefetchOutcomes(page, at: s.time, jars: jars, provenance: input.provenance, exchanges: exchanges, into: &s.outcome)
        }
    }

    /// A3: the bundled page; no server sees this load.
    func servedAsBundledPage(_ s: inout ExchangeStep) -> Bool {
        guard let app, s.chainStart == input.firstDocument else { return false }
        s.outcome.note(Change(rule: "A3", what: "served from the app's bundle; no server sees this load"))
        s.outcome.note(Change(rule: app.originRule, note: .pageOrigin(app.origin)))
        return true
    }

    /// A4: a script, stylesheet, image, font or media file of the page's own origin is a
    /// file of the bundle, at a URL relative to the app's origin.
    mutating func servedAsBundledFile(_ s: inout ExchangeStep) -> Bool {
        guard let app, s.fromAppPage else { return false }
        let bundled = s.hop > 0 ? bundledChains.contains(s.chainStart) : WebViewEmulator.isBundledFile(s.exchange, of: bundledOrigin)
        guard bundled else { return false }
        bundledChains.insert(s.chainStart)
        intercepted += 1
        s.outcome.note(Change(rule: "A4", note: .bundledFile(origin: app.origin)))
        return true
    }

    /// O4: the package answered the chain's first request; this hop never goes.
    mutating func neverSentInServedChain(_ s: inout ExchangeStep) -> Bool {
        guard servedChains.contains(s.chainStart) else { return false }
        s.outcome.note(Change(rule: "O4", what: "never requested: the offline package answered the redirect's first request"))
        for setCookie in s.facts.setCookies {
            jars.block(setCookie.name, from: .web, by: "O4")
            jars.block(setCookie.name, from: .native, by: "O4")
        }
        return true
    }
}

// MARK: - The transport

extension EmulationRun {
    /// How the request goes: WebKit's own for a WebSocket (WS1), the strategy's plan
    /// adjusted by the mitigations for a load's first hop, the chain's plan for its later hops.
    mutating func planTransport(_ s: inout ExchangeStep) -> TransportPlan {
        if s.exchange.initiator == .websocket {
            // WS1: WebKit opens WebSockets itself: no NSURLProtocol (registered for http
            // and https, not ws and wss), scheme handler or XHR and fetch bridge sees the
            // handshake, and no CORS check applies; it carries WebJar's cookies.
            s.outcome.note(Change(rule: "WS1", what: "a WebSocket handshake: WebKit's own, under every strategy"))
            return WebViewEmulator.webSocketPlan
        }
        return s.hop == 0 ? planFirstHop(&s) : planLaterHop(&s)
    }

    mutating func planFirstHop(_ s: inout ExchangeStep) -> TransportPlan {
        let e = s.exchange
        let plan = emulator.issue(e, input: input, context: context, hooks: hooks, into: &s.outcome)
        if e.initiator == .eventSource {
            // ES1: neither XHR nor fetch, so a bridge that patches those does not see it;
            // the strategy's transport carries it as any subresource. Where an XHR would
            // have gone another way, its cookie differences cite ES1.
            s.outcome.note(Change(rule: "ES1", what: "an EventSource: no XHR or fetch bridge sees it"))
            var asXHR = e
            asXHR.initiator = .xhr
            let bridged = emulator.preset.strategy.plan(for: asXHR, in: context)
            s.eventSourceUnbridged = bridged.requestJar != plan.requestJar || bridged.intercepted != plan.intercepted
        }
        if e.redirect?.next != nil { plans[s.chainStart] = plan }
        // CDV3, TAU2: the framework's handler serves a request to the app origin itself.
        if let app, let target = e.request.target, app.serves(target), let rule = app.handlerLosesBody(e, devServer: input.scenario.devServer) {
            s.outcome.deliveredBody = .empty
            s.outcome.bodyRules = [rule]
            s.outcome.note(Change(rule: rule, note: .bodyRemoved(bytes: e.request.bodyFingerprint.length)))
        }
        return plan
    }

    /// A redirect hop goes the way its chain's first hop was planned; a 307/308 hop's body
    /// depends on who follows the redirect.
    func planLaterHop(_ s: inout ExchangeStep) -> TransportPlan {
        let plan = plans[s.chainStart] ?? chainPlan(from: s.chainStart)
        if let previous = s.facts.previousHop, exchanges[previous].response.preservesMethod, !s.exchange.request.bodyFingerprint.isEmpty {
            emulator.followPreservingRedirect(&s.outcome, previous: previous, plan: plan, chainStartIsDocument: exchanges[s.chainStart].initiator.isDocument, exchanges: exchanges, outcomes: outcomes)
        }
        return plan
    }

    /// The strategy's plan for a chain's first hop, in that hop's context.
    func chainPlan(from chainStart: Int) -> TransportPlan {
        let head = input.facts[chainStart]
        var headContext = EmulationContext(profile: profile, scenario: input.scenario)
        (headContext.documentURL, headContext.crossOrigin, headContext.uploadListener) = (head.documentURL, head.crossOrigin, head.uploadListener)
        headContext.nativeMultipart = head.nativeMultipart
        headContext.thirdPartyPage = head.thirdPartyPage
        return emulator.preset.strategy.plan(for: exchanges[chainStart], in: headContext)
    }

    /// O1-O4: the interceptor serves the package's file; no server sees the request.
    /// Whether that settles the exchange; a miss or a request the interceptor cannot
    /// serve only says so on the outcome.
    mutating func servedOffline(_ s: inout ExchangeStep, plan: TransportPlan) -> Bool {
        guard let verdict = s.facts.offline else { return false }
        if verdict == .miss {
            s.outcome.offline = .miss
            return false
        }
        if !plan.intercepted || s.hop > 0 {
            s.outcome.offline = .notInterceptable
            return false
        }
        s.outcome.offline = verdict
        s.outcome.note(Change(rule: "O1", what: "served from the offline package"))
        if verdict == .stale {
            s.outcome.responseRules = ["O2"]
            s.outcome.note(Change(rule: "O2", what: "the package's file is not what the server sent"))
        }
        if !s.facts.setCookies.isEmpty {
            for setCookie in s.facts.setCookies {
                jars.block(setCookie.name, from: .web, by: "O3")
                jars.block(setCookie.name, from: .native, by: "O3")
            }
            s.outcome.note(Change(rule: "O3", what: "the served file carries no Set-Cookie"))
        }
        if s.exchange.response.isRedirect {
            servedChains.insert(s.chainStart)
            s.outcome.pageURL = s.exchange.request.url
            s.outcome.redirectRules = ["O4"]
            s.outcome.note(Change(rule: "O4", what: "the served file carries no redirect; the page stays at the first URL"))
        }
        return true
    }

    /// A1: a script's request from the app's page to a server reads the response only if
    /// CORS lets the app origin read it.
    func checkCORS(_ s: inout ExchangeStep, plan: TransportPlan) {
        let e = s.exchange
        guard let page = context.appPage, !plan.intercepted, e.initiator == .xhr || e.initiator == .fetch || e.initiator == .ajax || e.initiator == .eventSource,
            let target = e.request.target, target.scheme == "http" || target.scheme == "https",
            !ExchangeClassifier.isPreflight(e.request),  // the engine's own preflight (E5)
            let reason = CORSCheck.check(e, from: page.origin, in: exchanges)
        else { return }
        s.outcome.corsRules = ["A1", page.originRule]
        s.outcome.corsReason = reason
        s.outcome.note(Change(rule: "A1", note: .unreadableResponse(origin: page.origin, reason: reason)))
    }

    /// The page's URL once the chain ends: the last hop's, unless a native session
    /// followed it silently and handed the response over under the first URL.
    mutating func settlePageURL(after s: ExchangeStep, plan: TransportPlan) {
        let e = s.exchange, chainStart = s.chainStart
        guard s.hop > 0, e.redirect?.next == nil, !servedChains.contains(chainStart) else { return }
        let silent = plan.redirects == .silent || (plan.redirects == .reloadDocument && !exchanges[chainStart].initiator.isDocument)
        switch silent ? RedirectHandling.silent : plan.redirects {
        case .silent:
            outcomes[chainStart].pageURL = exchanges[chainStart].request.url
            outcomes[chainStart].redirectRules = [plan.redirectRule]
            outcomes[chainStart].note(Change(rule: plan.redirectRule, what: "redirect followed silently; the page stays at the first URL"))
        case .engine, .forwarded, .reloadDocument, .reported:
            outcomes[chainStart].pageURL = e.request.url
            if plan.redirects == .engine {
                outcomes[chainStart].note(Change(rule: plan.redirectRule, what: "WebKit followed the redirect; the page sees every hop"))
            } else if plan.redirects == .reported {
                outcomes[chainStart].note(Change(rule: plan.redirectRule, what: "the native session followed the redirect and gave the page the final URL"))
            }
        }
    }
}
