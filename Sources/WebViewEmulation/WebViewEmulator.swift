import CookieJar
import Foundation
import TrafficModel

/// Replays a recording through one preset: walks the exchanges in time order with
/// NativeJar, WebJar and the synchronisations between them (docs/design.md, "Replay").
///
/// For each exchange it (1) rebuilds the request the page issued, minus the Cookie header,
/// (2) lets the preset's strategy decide the transport, (3) computes the Cookie header
/// from the jar that transport reads, (4) applies the response to the jar it writes and
/// to the page, and (5) records an `Outcome` whose every change names its rule.
/// Pure and deterministic: no I/O, the same inputs give the same outcomes.
public struct WebViewEmulator: Sendable {
    /// N6 and C6 as the profile asks them, once per cross-site load and per document start.
    static let n6 = Profile.Bounded("N6"), c6 = Profile.Bounded("C6")
    public var preset: Preset
    public var profile: Profile
    /// The scenario `run(_:provenance:)` builds its replay input with; `run(_:)` replays
    /// under the input's own.
    public var scenario: Scenario

    /// The profile is the run's with the preset's own numbers and framework release over it.
    public init(preset: Preset, profile: Profile = Profile(), scenario: Scenario = Scenario()) {
        self.preset = preset
        self.profile = preset.profile(over: profile)
        self.scenario = scenario
    }

    /// Replays `recording` with its cookie provenance; for several presets, build one
    /// `ReplayInput` and run each preset on it.
    public func run(_ recording: Recording, provenance: CookieProvenance) -> EmulationResult {
        run(ReplayInput(recording: recording, provenance: provenance, scenario: scenario))
    }

    /// The session's start (the scenario's and the inferred cookies, a framework's copy
    /// before the first load), then `step` for each exchange in time order, then what is
    /// still due (ReplayStep.swift).
    public func run(_ input: ReplayInput) -> EmulationResult {
        let hooks = preset.hooks.joined(input.scenarioHooks)
        var state = ReplayState(context: EmulationContext(profile: profile, scenario: input.scenario))
        state.jars.link = hooks.jarLink
        state.outcomes.reserveCapacity(input.recording.exchanges.count)
        placePreexisting(input.sessionStart, scenario: input.scenario, into: &state.jars)
        return replay(ReplaySetup(input: input, app: preset.app, hooks: hooks, nativeJar: state.jars.native), &state)
    }

    /// The framework's copy before the first load, each exchange, and what is still due.
    /// (The setup is borrowed from the caller's temporary: held in a local, it was copied
    /// once a replay.)
    func replay(_ setup: borrowing ReplaySetup, _ state: inout ReplayState) -> EmulationResult {
        for mirror in setup.firstLoadMirrors { state.jars.mirror(mirror, at: setup.sessionStart) }
        for e in setup.exchanges { step(e, setup, &state) }
        return finish(setup, &state)
    }

    /// A4: whether `e` is a load the bundled page makes of its own files, at the page's
    /// recorded origin; scripts' requests go to the API by absolute URL.
    static func isBundledFile(_ e: Exchange, of page: RequestTarget?) -> Bool {
        switch e.initiator {
        case .script, .stylesheet, .image, .font, .media:
            guard let page, let target = e.request.target else { return false }
            return target.hasSameOrigin(as: page)
        default:
            return false
        }
    }

    /// WS1: how every preset opens a WebSocket.
    static let webSocketPlan = TransportPlan(requestJar: .web, requestJarRule: "WS1", responseJar: .web, responseJarRule: "WS1", bodyLostBy: nil, redirects: .engine, redirectRule: "WS1", intercepted: false)

    /// A response's Set-Cookie headers stored in the jar its transport writes, when it ends.
    /// What a response does to the jars once its head arrives: its Set-Cookie stored, a
    /// framework's copy of the jar after a native response (CAPC2), the main frame's
    /// document-start script (C3-C6).
    struct Arrival {
        enum DocumentStart { case inWebView, inPooledWebView }
        var at: Double
        /// When the response ended: the time a framework's copy and a document-start
        /// script are stamped with.
        var end: Double
        var setCookies: [SetCookie]
        var target: RequestTarget
        var side: JarSide
        var origin: JarPair.Origin
        var byIP = false
        var mirror: JarMirror?
        var documentStart: DocumentStart?
    }

    /// Whether `arrival`, of `e`, comes before the next exchange's request leaves (or `e` is
    /// the last): then landing it at once is landing it where the queue would.
    static func landsBeforeNext(_ arrival: Arrival, after e: Exchange, in exchanges: [Exchange]) -> Bool {
        let next = e.sequence + 1
        guard next < exchanges.count else { return true }
        let following = exchanges[next]
        if arrival.at <= following.startedAt + ArrivalQueue<Arrival>.tolerance { return true }
        // The next hop of its own redirect chain left because it came.
        if let link = following.redirect, link.hop > 0, link.chainStart == e.redirect?.chainStart { return true }
        return false
    }

    /// An arrival let into the jars, after the synchronisations due before it.
    func land(_ arrival: Arrival, hooks: ComposedHooks, pooledNativeJar: CookieStore?, into jars: inout JarPair) {
        jars.completeSyncs(upTo: arrival.at)
        if !arrival.setCookies.isEmpty {
            store(arrival.setCookies, from: arrival.target, in: arrival.side, at: arrival.at, origin: arrival.origin, hooks: hooks, into: &jars, byIP: arrival.byIP)
        }
        if let mirror = arrival.mirror { jars.mirror(mirror, at: arrival.end) }
        if let start = arrival.documentStart {
            documentStart(arrival.target, at: arrival.end, hooks: hooks.documentStart, into: &jars, nativeJar: start == .inPooledWebView ? pooledNativeJar : nil)
        }
    }

    func store(_ setCookies: [SetCookie], from target: RequestTarget, in side: JarSide, at time: Double, origin: JarPair.Origin, hooks: ComposedHooks, into jars: inout JarPair, byIP: Bool = false) {
        for setCookie in setCookies {
            let result = jars.receive(setCookie, from: target, in: side, at: time, origin: origin, profile: profile)
            if case .ignored = result, byIP {
                // D2: a cookie for the name, refused by the IP it came from.
                jars.block(setCookie.name, from: side, by: "D2")
            }
            // C7 and the like: a copy the app schedules to the other jar.
            if case .stored(let cookie) = result {
                for hook in hooks.setCookieStored {
                    if let copy = hook(StoredCookie(cookie: cookie, jar: side, time: time, profile: profile)) {
                        jars.copy(cookie, to: copy.to, due: copy.due, rule: copy.rule, origin: origin)
                    }
                }
            }
        }
    }

    /// PF1-PF3: what each call a page load's prefetch makes meets; a hit whose page request
    /// carried other cookies than NativeJar gives the prefetch is stale.
    func prefetchOutcomes(_ page: PrefetchPage, at time: Double, jars: JarPair, provenance: CookieProvenance, exchanges: [Exchange], into outcome: inout Outcome) -> [PrefetchOutcome] {
        var out: [PrefetchOutcome] = []
        for call in page.calls {
            var verdict = call.verdict
            var detail = call.detail
            if verdict == .hit, let request = call.pageRequest, let target = RequestTarget(call.planned.url) {
                // PF3: the prefetch carries NativeJar's cookies at page start.
                let native = Set(jars.native.cookies(for: target, at: time).map { "\($0.name)=\($0.value)" })
                let page = Set(provenance.sent[request].map { "\($0.name)=\($0.value)" })
                if native != page {
                    verdict = .stale
                    let missing = page.subtracting(native).map { String($0.prefix { $0 != "=" }) }.sorted()
                    let extra = native.subtracting(page).map { String($0.prefix { $0 != "=" }) }.sorted()
                    detail = "the prefetch carried NativeJar's cookies at page start, not the page's" + (missing.isEmpty ? "" : " (without \(missing.joined(separator: ", ")))") + (extra.isEmpty ? "" : " (with \(extra.joined(separator: ", ")))")
                }
            }
            out.append(PrefetchOutcome(page: page.page, interface: call.planned.interface, method: call.planned.method, url: call.planned.url, verdict: verdict, pageRequest: call.pageRequest, detail: detail))
        }
        let counts = PrefetchVerdict.allCases.compactMap { v -> String? in
            let n = out.filter { $0.verdict == v }.count
            return n == 0 ? nil : "\(n) \(v.rawValue)"
        }
        outcome.note(Change(rule: "PF1", what: "native code prefetches \(out.count) API call(s): \(counts.joined(separator: ", "))"))
        if out.contains(where: { $0.verdict == .hit || $0.verdict == .mismatch }) { outcome.note(Change(rule: "PF2", what: "the page's own calls met the prefetch")) }
        if out.contains(where: { $0.verdict == .stale }) { outcome.note(Change(rule: "PF3", what: "a prefetch carried NativeJar's cookies, not the page's")) }
        return out
    }

    /// N4, A2, N5: the cookies WebKit itself keeps off a request, taken out of `header`
    /// with the rule and the reason.
    func withhold(_ header: inout CookieHeaderChoice, from e: Exchange, issuedUnder documentURL: String?, appPage: AppShell?, keptOffByITP: Bool, thirdPartyToApp: Bool, target: RequestTarget) {
        // N4: a cookie the jar lacks is missing by ITP's rule too (its Set-Cookie was not stored).
        if keptOffByITP { header.rule = "N4" }
        if keptOffByITP || thirdPartyToApp {
            let (rule, why): (RuleID, String) = keptOffByITP
                ? ("N4", "WebKit keeps a third-party cookie off the request: \(target.site) is another site than the page's and ITP is on")
                : ("A2", "WebKit keeps a third-party cookie off the request: the page is on \(appPage!.origin) and ITP is on")
            // Every cookie is kept off, held or not: what the jars hold cannot change that.
            header.allWithheld = (rule, why)
            header.cookies = []
            return
        }
        guard !header.cookies.isEmpty else { return }
        // N5: a cross-site POST navigation carries no Lax cookie (no SameSite counts as Lax from iOS 18).
        guard e.initiator.isDocument, e.frame.kind == .main, (e.redirect?.hop ?? 0) == 0, e.request.method.uppercased() == "POST" else { return }
        let crossSite: Bool
        if appPage != nil {
            crossSite = true
        } else if let document = documentURL.flatMap(RequestTarget.init) {
            crossSite = document.site != target.site || document.isSecure != target.isSecure
        } else {
            return
        }
        guard crossSite else { return }
        let laxByDefault = profile.holds(Self.n6)
        header.cookies.removeAll { c in
            guard c.sameSite == .lax || c.sameSite == .strict || (c.sameSite == .default && laxByDefault) else { return false }
            header.withheld[c.name] = c.sameSite == .default
                ? ("N6", "it has no SameSite attribute, which iOS \(profile.ios) treats as Lax, and a Lax cookie stays off a cross-site POST navigation")
                : ("N5", "it is SameSite=\(c.sameSite == .lax ? "Lax" : "Strict") and the POST navigation is cross-site")
            return true
        }
    }

    /// The first hop of a load: the strategy plans it and the mitigations adjust it. Where
    /// the model is unsure what the page used, it evaluates each possibility and keeps the
    /// worse, saying so.
    func issue(_ e: Exchange, input: ReplayInput, context: EmulationContext, hooks: ComposedHooks, into outcome: inout Outcome) -> TransportPlan {
        let possibilities = input.facts[e.sequence].alternatives
        guard !possibilities.isEmpty else {
            let plan = preset.strategy.plan(for: e, in: context)
            requestOutcome(e, plan: plan, context: context, input: input, hooks: hooks, into: &outcome)
            return plan
        }
        var worst: (Outcome, TransportPlan, String)?
        for (variant, label) in possibilities {
            let p = preset.strategy.plan(for: variant, in: context)
            var o = outcome
            requestOutcome(variant, plan: p, context: context, input: input, hooks: hooks, into: &o)
            if worst == nil || o.severity > worst!.0.severity { worst = (o, p, label) }
        }
        outcome = worst!.0
        if possibilities.count > 1 { outcome.alternative = worst!.2 }
        return worst!.1
    }

    /// The host a mitigation has a load's first hop's cookies go by instead of its own
    /// (D1, D2: an HTTPDNS IP), asked at the `cookieHost` moment.
    func cookieHost(_ e: Exchange, plan: TransportPlan, context: EmulationContext, input: ReplayInput, hooks: ComposedHooks) -> CookieHost? {
        guard !hooks.cookieHost.isEmpty else { return nil }
        let request = IssuedRequest(exchange: e, plan: plan, context: context, input: input)
        return hooks.cookieHost.firstNonNil { $0(request) }
    }

    /// On a 307/308 hop the body depends on who follows the redirect.
    func followPreservingRedirect(_ outcome: inout Outcome, previous: Int, plan: TransportPlan, chainStartIsDocument: Bool, exchanges: [Exchange], outcomes: [Outcome]) {
        // S5 spi: below iOS 15 only _didPerformRedirection: exists, which tells WebKit of a
        // hop the handler's session already followed with the body it had.
        let followedBySession = plan.redirects == .engine && plan.redirectRule == "S5" && profile.ios < IOSVersion(15)
        switch followedBySession ? .silent : plan.redirects {
        case .engine:
            break
        case .silent, .reported:
            // The native session re-sends the request it sent for the previous hop.
            let earlier = outcomes[previous]
            if earlier.deliveredBody.isEmpty {
                outcome.deliveredBody = .empty
                outcome[.bodyChanged] = earlier[.bodyChanged] + [plan.redirectRule]
                outcome.note(Change(rule: plan.redirectRule, note: .hopResentWithoutBody(status: exchanges[previous].response.status)))
            }
        case .forwarded:
            // Each forwarded hop crosses IPC again without its body (P4 forwarded).
            outcome.deliveredBody = .empty
            outcome[.redirectReissued] = [plan.redirectRule] + (plan.bodyLostBy.map { [$0] } ?? [])
            outcome.note(Change(rule: plan.redirectRule, note: .hopReissuedAcrossIPC(status: exchanges[previous].response.status)))
        case .reloadDocument where chainStartIsDocument:
            // S5 reload-document: the Location is loaded afresh with a GET.
            outcome.deliveredMethod = "GET"
            outcome.deliveredBody = .empty
            outcome[.redirectReissued] = [plan.redirectRule]
            outcome.note(Change(rule: plan.redirectRule, note: .hopReloadedAsGET(status: exchanges[previous].response.status)))
        case .reloadDocument:
            // Subresource redirects are followed silently by the handler's session.
            let earlier = outcomes[previous]
            if earlier.deliveredBody.isEmpty {
                outcome.deliveredBody = .empty
                outcome[.bodyChanged] = earlier[.bodyChanged] + [plan.redirectRule]
            }
        }
    }

    // MARK: - The page's request

    /// What the strategy and the mitigations do to the request the page issued.
    func requestOutcome(_ e: Exchange, plan: TransportPlan, context: EmulationContext, input: ReplayInput, hooks: ComposedHooks, into outcome: inout Outcome) {
        if let rule = plan.bodyLostBy {
            outcome.deliveredBody = .empty
            outcome[.bodyChanged] = [rule]
            outcome.note(Change(rule: rule, note: .bodyRemoved(bytes: e.request.bodyFingerprint.length)))
        }
        if let change = plan.bodyChange {
            switch change.effect {
            case .replaced(let body), .reencoded(let body):
                outcome.deliveredBody = body
                outcome[.bodyChanged] = [change.rule]
                outcome.bodyReason = change.reason
                if case .reencoded = change.effect { outcome.bodyReencoded = true }
            case .neverSent:
                outcome[.neverSent] = [change.rule]
            }
            outcome.note(Change(rule: change.rule, what: change.reason))
        }
        if let rule = plan.responseMutatedBy {
            outcome[.responseChanged] = [rule]
            outcome.note(Change(rule: rule, what: "binary response through the JSON bridge"))
        }
        if let rule = plan.streamOnlyBy { outcome[.streamOnly] = [rule] }
        if let rule = plan.thirdPartyBy { outcome[.thirdPartyIntercepted] = [rule] }
        if !plan.notes.isEmpty { outcome.changes.append(contentsOf: plan.notes) }
        // S4: WebKit itself refuses a ReadableStream upload, whatever the strategy.
        if e.bodyKind == .stream {
            outcome[.neverSent] = ["S4"]
            outcome.note(Change(rule: "S4", what: "ReadableStream upload rejected with NotSupportedError"))
        }
        if !hooks.requestIssued.isEmpty {
            let request = IssuedRequest(exchange: e, plan: plan, context: context, input: input)
            for hook in hooks.requestIssued { hook(&outcome, request) }
        }
    }

    // MARK: - Inferred cookie events

    /// The jars at session start: the scenario's initial jars (cookies.txt files), then
    /// the cookies inferred to have been there from the start, in the jars the scenario
    /// names. Either jar learns the other's start cookies through J1; a cookie only in
    /// NativeJar is what N3 (the first-request cookie problem) is about.
    private func placePreexisting(_ cookies: SessionStartCookies, scenario: Scenario, into jars: inout JarPair) {
        guard !cookies.isEmpty else { return }
        let start = cookies.time
        let nativeOnly = JarPair.Origin(rules: ["N3"], source: .atSessionStart)
        let webOnly = JarPair.Origin(rules: [], source: .atSessionStart)
        for cookie in cookies.native {
            jars.put(cookie, in: .native, at: start, origin: nativeOnly, syncDelay: profile.jarSyncDelay, syncRule: "J1")
        }
        for cookie in cookies.web {
            jars.put(cookie, in: .web, at: start, origin: webOnly, syncDelay: profile.jarSyncDelay, syncRule: "J1")
        }
        for cookie in cookies.inferred {
            switch scenario.preexisting {
            case .both:
                let origin = JarPair.Origin(rules: [], source: .fromStart)
                jars.put(cookie, in: .native, at: start, origin: origin, syncDelay: nil, syncRule: "J1")
                jars.put(cookie, in: .web, at: start, origin: origin, syncDelay: nil, syncRule: "J1")
            case .native:
                jars.put(cookie, in: .native, at: start, origin: nativeOnly, syncDelay: profile.jarSyncDelay, syncRule: "J1")
            case .web:
                jars.put(cookie, in: .web, at: start, origin: webOnly, syncDelay: profile.jarSyncDelay, syncRule: "J1")
            }
        }
    }

    /// Script writes and deletions happen in the page, so in WebJar, just before the
    /// request; they reach NativeJar through J3 (never on the simulator), or through a
    /// setter hook (C8). Returns the cookies a hook accepted for a site the page may not
    /// set (C9).
    /// `writerNamed`: the request names the document that sent it (a Referer), so a script
    /// cookie of another site than that document's was written by a frame of the cookie's
    /// own site (a script sets cookies for its own site only), where the page's hooks do
    /// not run.
    func applyScriptEvents(_ events: [CookieProvenance.Inference], at time: Double, into jars: inout JarPair, hooks: [@Sendable (ScriptCookieWrite) -> ScriptWriteEffect], deletionHooks: [@Sendable (ScriptCookieWrite) -> JarSide?], page: RequestTarget?, writerNamed: Bool, onAppPage: Bool, inMainFrame: Bool) -> [String] {
        let written = time - CookieProvenance.scriptLead
        var crossSite: [String] = []
        for event in events {
            switch event.kind {
            case .preExisting:
                continue
            case .scriptSet:
                // Another host of the site carried its value earlier: the write came by then.
                let writtenAt = min(written, event.writtenBy ?? written)
                let origin = JarPair.Origin(rules: [], scriptWindowStart: event.windowStart, writtenAt: writtenAt)
                if writerNamed, let page, Site.of(host: event.cookie.domain) != page.site {
                    jars.put(event.cookie, in: .web, at: writtenAt, origin: origin, syncDelay: profile.scriptWriteDelay, syncRule: "J3")
                    continue
                }
                let effects = hooks.map { $0(ScriptCookieWrite(cookie: event.cookie, time: writtenAt, page: page, onAppPage: onAppPage, inMainFrame: inMainFrame, profile: profile)) }
                // CAPC1, CDV2, ION2: a setter that writes elsewhere, or nowhere, keeps it out of
                // WebJar; CAPC2: one that writes elsewhere may copy it back later.
                let keptOut = effects.firstNonNil { effect -> (rule: RuleID, copiedBack: JarCopy?)? in
                    switch effect.pageWrite {
                    case .kept: return nil
                    case .replaced(let rule, let back): return (rule, back)
                    case .lost(let rule): return (rule, nil)
                    }
                }
                if let keptOut, let back = keptOut.copiedBack {
                    var via = origin
                    via.rules = [keptOut.rule]
                    jars.copy(event.cookie, to: .web, due: back.due, rule: back.rule, origin: via)
                } else if let keptOut {
                    jars.block(event.cookie.name, from: .web, by: keptOut.rule)
                } else {
                    jars.put(event.cookie, in: .web, at: writtenAt, origin: origin, syncDelay: profile.scriptWriteDelay, syncRule: "J3")
                }
                for effect in effects {
                    if let copy = effect.copy { jars.copy(event.cookie, to: copy.to, due: copy.due, rule: copy.rule, origin: origin) }
                    if effect.acceptedCrossSite { crossSite.append(event.cookie.name) }
                }
            case .pathNarrowed:
                jars.narrowPath(to: event.cookie)
            case .domainWidened:
                jars.widenDomain(to: event.cookie)
            case .forgotten:
                jars.forget(event.cookie)
            case .headerBeforeWrite:
                continue
            case .scriptDeleted:
                let origin = JarPair.Origin(rules: [], deletedByScriptAt: written)
                let delay = profile.scriptWriteDelay.map { max($0, profile.jarDeletionDelay) }
                // CAPC1: a redefined setter takes the deletion to NativeJar instead.
                let write = ScriptCookieWrite(cookie: event.cookie, time: written, page: page, onAppPage: onAppPage, inMainFrame: inMainFrame, profile: profile)
                let side = deletionHooks.firstNonNil { $0(write) } ?? .web
                jars.delete(event.cookie, in: side, at: written, origin: origin, syncDelay: delay, syncRule: "J2")
            }
        }
        return crossSite
    }

    /// Document start: what the preset's user scripts write to `document.cookie` (C3-C6).
    private func documentStart(_ page: RequestTarget, at time: Double, hooks: [@Sendable (DocumentStart) -> [DocumentCookieWrite]], into jars: inout JarPair, nativeJar: CookieStore? = nil) {
        let start = DocumentStart(nativeCookies: (nativeJar ?? jars.native).cookies(for: page, at: time), time: time, capsScriptCookies: profile.itp && profile.holds(Self.c6))
        for hook in hooks {
            for write in hook(start) {
                switch write {
                case .blocked(let name, let rule):
                    jars.block(name, from: .web, by: rule)
                case .written(let cookie, let rules):
                    // A document.cookie write cannot replace an HttpOnly cookie (RFC 6265bis
                    // section 5.7): the server's HttpOnly cookie in WebJar stays.
                    if jars.web.cookie(for: cookie.key)?.httpOnly == true { continue }
                    jars.put(cookie, in: .web, at: time, origin: JarPair.Origin(rules: rules, injectedAtDocumentStart: true), syncDelay: profile.scriptWriteDelay, syncRule: "J3")
                }
            }
        }
    }

    /// A difference's rules, starting with `first`, with room for the few that follow.
    static func ruleList(_ first: RuleID) -> [RuleID] {
        var rules: [RuleID] = []
        rules.reserveCapacity(6)
        rules.append(first)
        return rules
    }

    func otherJarOrigin(named name: String, side: JarSide, jars: JarPair) -> JarPair.Origin? {
        jars[side.other].first(named: name) { jars.origin(of: $0) != nil }.flatMap { jars.origin(of: $0) }
    }

    // MARK: - End of flow

    /// Once every synchronisation has completed, the cookies on which the jars disagree.
    func divergences(_ jars: JarPair, at time: Double) -> [JarDivergence] {
        guard jars.native.count + jars.web.count > 0 else { return [] }
        // Only the keys whose live values differ are sorted and explained.
        var differing: [Cookie.Key] = []
        func collect(_ side: CookieStore, against other: CookieStore) {
            side.forEachCookie { c in
                guard !c.isExpired(at: time), !other.holdsItself(c) else { return }
                if other.liveValue(name: c.name, domain: c.domain, path: c.path, at: time) != c.value { differing.append(c.key) }
            }
        }
        collect(jars.native, against: jars.web)
        collect(jars.web, against: jars.native)
        var out: [JarDivergence] = []
        differing.sort()
        for (i, key) in differing.enumerated() where i == 0 || differing[i - 1] != key {
            let n = jars.native.cookie(for: key).flatMap { $0.isExpired(at: time) ? nil : $0 }
            let w = jars.web.cookie(for: key).flatMap { $0.isExpired(at: time) ? nil : $0 }
            var rules: [RuleID] = []
            rules.reserveCapacity(6)
            // "NativeJar: how it got there; WebJar: how it got there", in one buffer.
            var explanation = Words(capacity: 96)
            var explained = false
            for (side, cookie) in [(JarSide.native, n), (JarSide.web, w)] {
                if cookie == nil, let blocker = jars.blocker(of: key.name, in: side) { rules.appendNew(blocker) }
                if cookie != nil, let held = jars.heldBack[key.name] { rules.appendNew(held) }
                guard let cookie, let origin = jars.origin(of: cookie) else { continue }
                rules.appendNew(origin.rules)
                if origin.isScriptWrite && profile.scriptWriteDelay == nil { rules.appendNew("J3") }
                if explained { explanation += "; " }
                explained = true
                explanation += side.jarName
                explanation += ": "
                origin.source.write(to: &explanation)
            }
            if rules.isEmpty { rules = ["J1"] }
            out.append(JarDivergence(name: key.name, domain: key.domain, path: key.path, nativeValue: n?.value, webValue: w?.value, rules: rules, explanation: explanation.string))
        }
        return out
    }

}

/// The Cookie header a request carries in the replay, and where it came from.
struct CookieHeaderChoice {
    var cookies: [Cookie]
    /// The jar it was built from.
    var side: JarSide
    /// The rule by which that jar was read (N2, P3, S7, X1; N4; C1, C2).
    var rule: RuleID
    /// The header was built when the document load started and is carried unchanged on a
    /// redirect hop (C2).
    var fixedAtLoad: Bool
    /// The header was given to `loadRequest` by a mitigation (C1, C2).
    var givenToLoad = false
    /// Cookies of the jar WebKit keeps off the request, by name: the rule and why (N4, A2, N5).
    var withheld = [String: (rule: RuleID, why: String)]()
    /// Set where WebKit keeps every cookie off the request (N4, A2): the rule and why.
    var allWithheld: (rule: RuleID, why: String)?
}
