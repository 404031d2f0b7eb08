import CookieJar
import TrafficModel

// The cookie phase of a step: the Cookie header the transport builds, compared with the
// recorded one, and the response's Set-Cookie on its way to the jar the transport writes.
extension EmulationRun {
    /// Cookies both ways for a request that reaches its server at `recorded`.
    mutating func exchangeCookies(_ s: inout ExchangeStep, plan: TransportPlan, recorded: RequestTarget) {
        let e = s.exchange
        // N4: WebKit's own request to another site than the page's (measured in WebKitGTK 2.50.6).
        let keptOffByITP = profile.itp && !plan.intercepted && s.facts.thirdPartyToPage
        // D1, D2: a request sent to an IP (HTTPDNS) reads and writes cookies under the IP.
        let byHost = cookieHost(s, plan: plan)
        let target = byHost.map { recorded.with(host: $0.host) } ?? recorded
        // N4, A2, N5: cookies WebKit itself keeps off the request. A navigation of the main
        // frame is first-party to where it goes, not third-party to the app. An iframe's
        // requests too: the top-level page is still the app's, and ITP judges a request by
        // the top-level site, not by the frame that sends it. Not a request of a page the
        // recording never loaded: its top-level site is unknown.
        let topAppPage = app != nil && e.sequence < appPageEnd ? app : nil
        let thirdPartyToApp = !plan.intercepted && profile.itp && !(e.initiator.isDocument && e.frame.kind == .main) && !s.facts.fromUnseenPage
            && topAppPage.map { !$0.serves(target) } == true
        var header = cookieHeader(&s, plan: plan, target: target)
        if let byHost { header.rule = byHost.rule }
        if !plan.intercepted && !header.givenToLoad {
            emulator.withhold(&header, from: e, issuedUnder: s.facts.documentURL, appPage: topAppPage, keptOffByITP: keptOffByITP, thirdPartyToApp: thirdPartyToApp, target: target)
        }
        s.outcome.sentCookies = header.cookies
        compareCookies(&s, header: header)
        let thirdPartyRule: RuleID? = keptOffByITP ? "N4" : thirdPartyToApp ? "A2" : nil
        var arrival = responseArrival(&s, plan: plan, target: target, thirdPartyRule: thirdPartyRule, byIP: byHost != nil)
        // CAPC2: once the response is in, a jar copied into the other.
        arrival.mirror = plan.jarCopyAfter
        startDocument(&s, arrival: &arrival)
        if !arrival.setCookies.isEmpty || arrival.mirror != nil || arrival.documentStart != nil { landOrHold(arrival, of: e) }
    }

    /// The host a mitigation has the request's cookies go by instead of its own: asked of
    /// a load's first hop, which the mitigations see (D1, D2).
    func cookieHost(_ s: ExchangeStep, plan: TransportPlan) -> CookieHost? {
        guard !hooks.cookieHost.isEmpty, s.hop == 0, s.exchange.initiator != .websocket else { return nil }
        let request = IssuedRequest(exchange: s.exchange, plan: plan, context: context, input: input)
        return hooks.cookieHost.lazy.compactMap { $0(request) }.first
    }

    /// The Cookie header from the jar the transport reads, or the one a mitigation gave
    /// the first document's loadRequest (C1, C2).
    mutating func cookieHeader(_ s: inout ExchangeStep, plan: TransportPlan, target: RequestTarget) -> CookieHeaderChoice {
        var header = CookieHeaderChoice(cookies: jars.cookies(in: plan.requestJar, for: target, at: s.time), side: plan.requestJar, rule: plan.requestJarRule, fixedAtLoad: false)
        let hop = s.hop
        guard s.chainStart == input.firstDocument, let load = hooks.documentLoadCookies.lazy.compactMap({ $0(DocumentLoad(hop: hop)) }).first else { return header }
        if load.source == .nativeJarNow { loadHeader = jars.native.cookies(for: target, at: s.time) }
        s.outcome.note(Change(rule: load.rule, what: "Cookie header given to loadRequest, built from NativeJar"))
        header = CookieHeaderChoice(cookies: loadHeader, side: .native, rule: load.rule, fixedAtLoad: load.source == .headerOfLoad)
        header.givenToLoad = true
        return header
    }

    /// The header compared with the recorded one, unless the recording's header is no
    /// evidence (E1-E8).
    func compareCookies(_ s: inout ExchangeStep, header: CookieHeaderChoice) {
        if let gap = s.exchange.evidenceGap {
            // E1-E7: the recorded Cookie header is no evidence; nothing to compare.
            s.outcome.note(Change(rule: RuleID(gap.rule), note: .cookiesNotCompared(reason: gap.reason)))
        } else {
            s.outcome.cookieDifferences = emulator.cookieDifferences(recorded: input.provenance.sent[s.exchange.sequence], header: header, jars: jars, time: s.time, sessionStart: sessionStart)
            let beforeWrite = s.facts.headerBeforeWrite
            if !beforeWrite.isEmpty {
                // E8: those cookies are as they were before a recent write; the rest of the header still shows the jar.
                s.outcome.cookieDifferences.removeAll { beforeWrite.contains($0.name) }
                let names = beforeWrite.joined(separator: ", ")
                s.outcome.note(Change(rule: "E8", note: .cookiesNotCompared(reason: "\(names) as before a recent write: the Cookie header was built before it, the request queued behind others")))
            }
            if s.eventSourceUnbridged {
                for k in s.outcome.cookieDifferences.indices { s.outcome.cookieDifferences[k].rules.insert("ES1", at: min(1, s.outcome.cookieDifferences[k].rules.count)) }
            }
        }
        if !s.outcome.cookieDifferences.isEmpty && !header.givenToLoad {
            s.outcome.note(Change(rule: header.rule, note: .cookieHeaderBuilt(from: header.side)))
        }
    }

    /// The response's Set-Cookie, bound for the jar the transport writes when its head
    /// arrives; or kept out of WebJar by WebKit (N4, A2) or a mitigation (ION3).
    mutating func responseArrival(_ s: inout ExchangeStep, plan: TransportPlan, target: RequestTarget, thirdPartyRule: RuleID?, byIP: Bool) -> WebViewEmulator.Arrival {
        let e = s.exchange, setCookies = s.facts.setCookies, firstLaunch = input.scenario.firstLaunch
        var arrival = WebViewEmulator.Arrival(at: e.responseArrivedAt, end: e.endedAt, setCookies: [], target: target, side: plan.responseJar, origin: JarPair.Origin(rules: [], setBy: e.sequence, redirectStatus: nil))
        guard !setCookies.isEmpty else { return arrival }
        if let rule = thirdPartyRule {
            // N4, A2: WebKit does not store a third-party response's cookies either.
            for setCookie in setCookies { jars.block(setCookie.name, from: .web, by: rule) }
            s.outcome.note(Change(rule: rule, what: "Set-Cookie of a third-party response not stored"))
        } else if plan.responseJar == .web, let rule = hooks.webSetCookieArriving.lazy.compactMap({ $0(SetCookieArrival(name: setCookies[0].name, firstLaunch: firstLaunch)) }).first {
            // ION3: WebJar ignores the Set-Cookie on the app's first launch.
            for setCookie in setCookies { jars.block(setCookie.name, from: .web, by: rule) }
            s.outcome.note(Change(rule: rule, what: "Set-Cookie ignored: the app's first launch"))
        } else {
            var origin = JarPair.Origin(rules: [plan.responseJarRule], setBy: e.sequence, redirectStatus: e.response.isRedirect ? e.response.status : nil)
            if byIP { origin.rules.append("D2") }  // stored under the IP
            origin.fromRedirect = e.response.isRedirect
            if plan.responseJar == .native {
                s.outcome.note(Change(rule: plan.responseJarRule, what: "Set-Cookie stored in NativeJar, not WebJar"))
            }
            arrival.setCookies = setCookies
            arrival.origin = origin
            arrival.byIP = byIP
        }
        return arrival
    }

    /// Document start of the main frame, once its chain ends (C3-C6), in a reused web
    /// view with the NativeJar of its creation (W1).
    func startDocument(_ s: inout ExchangeStep, arrival: inout WebViewEmulator.Arrival) {
        guard !hooks.documentStart.isEmpty, s.exchange.redirect?.next == nil else { return }
        let head = exchanges[s.chainStart]
        guard head.initiator.isDocument, head.frame.kind == .main else { return }
        let reused = input.facts[s.chainStart].reusedWebView
        if reused { s.outcome.note(Change(rule: "W1", what: "a reused web view's document-start script writes the NativeJar of its creation")) }
        arrival.documentStart = reused ? .inPooledWebView : .inWebView
    }
}
