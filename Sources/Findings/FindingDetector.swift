import Foundation
import TrafficModel
import WebViewEmulation

/// Compares a replay's outcomes with the recording's truth and explains each difference.
public struct FindingDetector: Sendable {
    public var catalog: RuleCatalog
    /// Findings less likely than this are left out (`--min-likelihood`); 0 keeps them all.
    public var minLikelihood: Double
    /// Cookie names (`*` globs) that matter most (a scenario's `importantCookies`): a
    /// finding about one ranks `important`.
    public var importantCookies: [String]
    /// A cookie finding less likely than this is info, not a warning (docs/model.md,
    /// "Where a cookie came from"): below one chance in ten it should not hold up a release.
    public static let warningLikelihood = 0.10

    public init(catalog: RuleCatalog = .bundled, minLikelihood: Double = 0, importantCookies: [String] = []) {
        self.catalog = catalog
        self.minLikelihood = minLikelihood
        self.importantCookies = importantCookies
    }

    /// `subjects`: each exchange's label and rank made once for the recording
    /// (`Subjects(recording)`), when several presets' results are read; otherwise each is
    /// made when a finding needs it.
    ///
    /// Each outcome is read once, by one detector per kind of effect, in this order: a
    /// request that fails or is never sent (nothing else about it then counts), what the
    /// request lost or gained on its way, what the page could not read, the body, the
    /// page's URL after a redirect, and the cookies; then the jars at the end of the flow.
    public func findings(for recording: Recording, result: EmulationResult, subjects known: Subjects? = nil) -> [Finding] {
        var out: [Finding] = []
        let exchanges = recording.exchanges
        var made = [Int: String]()
        var serverSet = known?.serverSet
        for outcome in result.outcomes {
            let e = exchanges[outcome.sequence]
            guard Self.mayFind(outcome, e.request.bodyFingerprint) else { continue }
            let label: String
            if let known { label = known.labels[e.sequence] } else if let earlier = made[e.sequence] { label = earlier } else { label = Self.label(e); made[e.sequence] = label }
            let s = Subject(exchange: e, rank: known?.ranks[e.sequence] ?? Rank.of(e), label: label, preset: result.preset, recording: recording.name)
            let before = out.count
            if let unsent = unsent(outcome, s) {
                out.append(unsent)
            } else {
                requestChanges(outcome, s, into: &out)
                unreadable(outcome, s, into: &out)
                if let body = body(outcome, s, exchanges) { out.append(body) }
                if let redirect = redirectHidden(outcome, s, exchanges) { out.append(redirect) }
                cookies(outcome, s, recording, serverSet: &serverSet, into: &out)
            }
            if out.count > before { Self.annotate(&out[before...], outcome, e) }
        }
        if let last = exchanges.last, !result.divergences.isEmpty {
            out.append(jarDiverged(result.divergences, last, preset: result.preset, recording: recording.name))
        }
        return out
    }

    /// The exchange a finding is about, as findings name it.
    struct Subject {
        let exchange: Exchange
        let rank: Rank
        let label: String
        let preset: String
        let recording: String
    }

    /// Builds a finding about `s`'s exchange.
    func make(_ code: FindingCode, _ s: Subject, _ rules: consuming [RuleID], expected: consuming FindingFields, actual: consuming FindingFields, detail: consuming FindingDetail, subject: String? = nil) -> Finding {
        make(code, s.exchange, s.rank, s.preset, s.recording, rules, expected: expected, actual: actual, detail: detail, subject: subject)
    }

    /// Says so when the model evaluated several possibilities and kept the worse, and what
    /// the exchange's sender and frame rest on.
    static func annotate(_ findings: inout ArraySlice<Finding>, _ outcome: Outcome, _ e: Exchange) {
        let alternative = outcome.alternative
        let inferred = FindingInference.ofExchange(e)
        for i in findings.indices where findings[i].sequence == outcome.sequence {
            if let alternative { findings[i].alternative = alternative }
            if !inferred.isEmpty { findings[i].inferences = inferred + findings[i].inferences }
        }
    }

    /// A request that fails before any server answers (D4, D5), or is never sent: nothing
    /// else about it reaches the server.
    func unsent(_ outcome: Outcome, _ s: Subject) -> Finding? {
        if outcome.has(.failed) {
            return make(.requestFailed, s, outcome[.failed],
                expected: ["answered": "yes"], actual: ["answered": "no", "url": outcome.deliveredURL],
                detail: FindingDetail(outcome[.failed].contains("D5") ? .requestFailedNoSNI : .requestFailedCertificate, [s.label, outcome.deliveredURL]))
        }
        guard outcome.has(.neverSent) || outcome.observedMissing else { return nil }
        return make(.requestStalled, s, outcome[.neverSent], expected: ["sent": "yes"], actual: ["sent": "no"], detail: FindingDetail(.requestStalled, [s.label]))
    }

    /// What the request lost or gained on its way: its URL, headers, a preflight, a body
    /// too large for a header or readable only as a stream, and the response it got back.
    func requestChanges(_ outcome: Outcome, _ s: Subject, into out: inout [Finding]) {
        let e = s.exchange, label = s.label, recordedBody = e.request.bodyFingerprint
        if outcome.has(.urlChanged), outcome.deliveredURL != e.request.url {
            out.append(make(.urlMutated, s, outcome[.urlChanged], expected: ["url": e.request.url], actual: ["url": outcome.deliveredURL], detail: FindingDetail(.urlMutated, [label, outcome.deliveredURL])))
        }
        for header in outcome.removedHeaders {
            out.append(make(.headerLost, s, [header.rule], expected: ["header": header.name, "present": "yes"], actual: ["header": header.name, "present": "no"],
                detail: FindingDetail(.headerLost, [label, header.name]), subject: header.name))
        }
        for header in outcome.addedHeaders {
            out.append(make(.headerAdded, s, [header.rule], expected: ["header": header.name, "present": "no"], actual: ["header": header.name, "present": "yes"],
                detail: FindingDetail(.headerAdded, [label, header.name]), subject: header.name))
        }
        if outcome.has(.preflightAdded) {
            out.append(make(.preflightAdded, s, outcome[.preflightAdded], expected: ["preflight": "no"], actual: ["preflight": "OPTIONS"], detail: FindingDetail(.preflightAdded, [label])))
        }
        if outcome.has(.tooLargeForHeader) {
            let length = String(recordedBody.length)
            out.append(make(.bodyTooLargeForHeader, s, outcome[.tooLargeForHeader], expected: ["bodyLength": length], actual: ["bodyLength": length], detail: FindingDetail(.bodyTooLargeForHeader, [label, length])))
        }
        if outcome.has(.streamOnly) {
            out.append(make(.bodyStreamOnly, s, outcome[.streamOnly], expected: ["body": "HTTPBody"], actual: ["body": "HTTPBodyStream only"], detail: FindingDetail(.bodyStreamOnly, [label])))
        }
        if outcome.has(.responseChanged) {
            let response = BodyFingerprint(e.response.body)
            out.append(make(.responseMutated, s, outcome[.responseChanged],
                expected: ["bodyLength": String(response.length), "bodySHA256": response.sha256], actual: ["body": "not delivered as binary"],
                detail: FindingDetail(outcome[.responseChanged].contains("O2") ? .responseFromPackage : .responseMangled, [label])))
        }
    }

    /// What the page could not read (A1), an interceptor that took a third party's
    /// request, and cookies a hook accepted for a site the page may not set (C9).
    func unreadable(_ outcome: Outcome, _ s: Subject, into out: inout [Finding]) {
        if outcome.has(.corsBlocked), let reason = outcome.corsReason {
            // A server that picks the allowed origin per request: nothing to judge, a
            // thing to check.
            let unverified = reason.isUnverifiable
            var finding = make(.corsBlocked, s, outcome[.corsBlocked],
                expected: ["readable": "yes"], actual: ["readable": unverified ? "unknown" : "no", "reason": reason.text],
                detail: FindingDetail(unverified ? .corsUnverified : .corsBlocked, [s.label, reason.text]))
            if unverified { finding.severity = .info }
            out.append(finding)
        }
        if outcome.has(.thirdPartyIntercepted) {
            out.append(make(.thirdPartyIntercepted, s, outcome[.thirdPartyIntercepted], expected: ["intercepted": "no"], actual: ["intercepted": "yes"], detail: FindingDetail(.thirdPartyIntercepted, [s.label])))
        }
        for name in outcome.crossSiteCookies {
            out.append(make(.cookieCrossSiteAccepted, s, ["C9"], expected: ["cookie": name, "accepted": "no"], actual: ["cookie": name, "accepted": "yes"],
                detail: FindingDetail(.cookieCrossSiteAccepted, [s.label, name]), subject: name))
        }
    }

    /// The body: a 307/308 hop re-issued without it or with another method, or the body
    /// lost, re-encoded or changed on its way.
    func body(_ outcome: Outcome, _ s: Subject, _ exchanges: [Exchange]) -> Finding? {
        let e = s.exchange, label = s.label, recordedBody = e.request.bodyFingerprint, delivered = outcome.deliveredBody
        let expected: FindingFields = ["bodyLength": String(recordedBody.length), "bodySHA256": recordedBody.sha256]
        let reason = outcome.bodyReason.map { [$0] } ?? []
        if outcome.has(.redirectReissued) {
            return make(.redirectMethodChanged, s, outcome[.redirectReissued],
                expected: ["method": e.request.method, "bodyLength": String(recordedBody.length), "bodySHA256": recordedBody.sha256], actual: ["method": outcome.deliveredMethod, "bodyLength": String(delivered.length), "bodySHA256": delivered.sha256],
                detail: FindingDetail(.redirectMethodChanged, [label, previousStatus(e, exchanges), outcome.deliveredMethod, delivered.isEmpty ? "empty" : "other"]))
        }
        if !recordedBody.isEmpty && delivered.isEmpty {
            return make(.bodyLost, s, outcome[.bodyChanged], expected: expected, actual: ["bodyLength": "0", "bodySHA256": BodyFingerprint.empty.sha256],
                detail: FindingDetail(.bodyLost, [label, String(recordedBody.length)] + reason))
        }
        guard delivered != recordedBody else { return nil }
        let actual: FindingFields = ["bodyLength": String(delivered.length), "bodySHA256": delivered.sha256]
        let values = [label, String(delivered.length), String(recordedBody.length)] + reason
        if outcome.bodyReencoded {
            return make(.bodyReencoded, s, outcome[.bodyChanged], expected: expected, actual: actual, detail: FindingDetail(.bodyReencoded, values))
        }
        return make(.bodyMutated, s, outcome[.bodyChanged], expected: expected, actual: actual, detail: FindingDetail(.bodyMutated, values))
    }

    /// The page's URL after a redirect chain, when it is not the last hop's.
    func redirectHidden(_ outcome: Outcome, _ s: Subject, _ exchanges: [Exchange]) -> Finding? {
        let e = s.exchange
        guard let pageURL = outcome.pageURL, let final = Self.lastHop(of: e, in: exchanges), pageURL != final.request.url else { return nil }
        let finalURL = final.request.url
        var finding = make(.redirectHidden, s, outcome[.redirectHidden], expected: ["pageURL": finalURL], actual: ["pageURL": pageURL],
            detail: e.initiator.isDocument ? FindingDetail(.redirectHiddenDocument, [s.label, pageURL, finalURL]) : FindingDetail(.redirectHidden, [s.label, finalURL]))
        if !e.initiator.isDocument { finding.severity = .info }
        return finding
    }

    /// Cookies: one finding per code for the exchange, naming every cookie.
    func cookies(_ outcome: Outcome, _ s: Subject, _ recording: Recording, serverSet: inout [String: Int]?, into out: inout [Finding]) {
        let differences = outcome.cookieDifferences
        guard !differences.isEmpty else { return }
        func emit(_ code: FindingCode, _ differences: [CookieDifference]) {
            let kept = differences.allSatisfy({ $0.likelihood >= minLikelihood }) ? differences : differences.filter { $0.likelihood >= minLikelihood }
            guard !kept.isEmpty else { return }
            if serverSet == nil, kept.contains(where: { $0.recordedSource != nil }) { serverSet = Subjects.serverSet(recording) }
            out.append(cookieFinding(code, kept, s.exchange, label: s.label, rank: s.rank, preset: s.preset, recording: s.recording, serverSet: serverSet ?? [:]))
        }
        // The first difference's code read in place, not the difference copied.
        if case let firstCode = Self.code(of: differences[0]), differences.allSatisfy({ Self.code(of: $0) == firstCode }) {
            // One code for every cookie (most exchanges): the outcome's own list.
            emit(firstCode, differences)
            return
        }
        var byCode: [(FindingCode, [CookieDifference])] = []
        for difference in differences {
            let code = Self.code(of: difference)
            if let i = byCode.firstIndex(where: { $0.0 == code }) { byCode[i].1.append(difference) } else { byCode.append((code, [difference])) }
        }
        for (code, group) in byCode { emit(code, group) }
    }

    /// Jar divergence at the end of the flow, once every synchronisation has completed:
    /// one finding naming every cookie on which the jars disagree.
    func jarDiverged(_ divergences: [JarDivergence], _ last: Exchange, preset: String, recording: String) -> Finding {
        let first = divergences[0]
        var expected: FindingFields = ["cookie": first.name, "domain": first.domain, "path": first.path, "in": "NativeJar and WebJar"]
        var actual: FindingFields = ["cookie": first.name, "domain": first.domain, "path": first.path]
        actual["in"] = first.nativeValue == nil ? "WebJar only" : first.webValue == nil ? "NativeJar only" : "both, with different values"
        if let v = first.nativeValue ?? first.webValue { expected["value"] = v }
        if let n = first.nativeValue, let w = first.webValue { expected["value"] = n; actual["value"] = w }
        let subjects = divergences.map { "\($0.name)@\($0.domain)\($0.path)" }
        if divergences.count > 1 { expected["cookies"] = subjects.joined(separator: ", ") }
        var values: [String] = []
        values.reserveCapacity(divergences.count * 5)
        for d in divergences {
            values.append(d.name)
            values.append(d.domain)
            values.append(d.path)
            values.append(d.nativeValue == nil ? "web" : d.webValue == nil ? "native" : "both")
            values.append(d.explanation)
        }
        // The end of the flow is no request: rank by the cookies alone.
        let rank: Rank = divergences.contains { isImportant($0.name) } ? .important : .subresource
        return make(.jarDiverged, last, rank, preset, recording, Self.unionRules(divergences) { $0.rules }, expected: expected, actual: actual, detail: FindingDetail(.jarDiverged, values), subject: subjects[0], subjects: subjects)
    }

    /// The finding a cookie difference gives.
    static func code(of difference: CookieDifference) -> FindingCode {
        switch (difference.recordedValue, difference.sentValue) {
        case (.some, .none) where difference.setByRedirect: return .redirectCookieLost
        case (.some, .none): return .cookieMissing
        case (.none, .some): return .cookieExtra
        default: return .cookieStale
        }
    }

    /// Whether the scenario names the cookie as important.
    func isImportant(_ name: String) -> Bool {
        importantCookies.contains { Scenario.Override.glob($0, name) }
    }

    /// Every rule of `items`, each once, in the order first met.
    static func unionRules<Item>(_ items: [Item], _ rules: (Item) -> [RuleID]) -> [RuleID] {
        // One item (most cookie findings): its own list, shared, when it names each rule once.
        if items.count == 1 {
            let only = rules(items[0])
            if only.indices.allSatisfy({ i in !only[..<i].contains(only[i]) }) { return only }
        }
        var out: [RuleID] = []
        out.reserveCapacity(items.count * 4)
        for item in items { out.appendNew(rules(item)) }
        return out
    }

    /// One finding for the cookies of one exchange and code: severity from the code, or
    /// from the likelihood when no cookie of it is certain.
    func cookieFinding(_ code: FindingCode, _ differences: [CookieDifference], _ e: Exchange, label: String, rank: Rank, preset: String, recording: String, serverSet: [String: Int] = [:]) -> Finding {
        // The first cookie's fields read in place: a copy of it is a retain of each.
        let name = differences[0].name
        let names = differences.map { $0.name }
        let one = differences.count == 1
        var values: [String] = []
        values.reserveCapacity(1 + differences.count * 2)
        values.append(label)
        // Each difference's fields read in place: a difference taken out of the list is a
        // retain of each of its strings.
        for i in differences.indices {
            values.append(differences[i].name)
            values.append(differences[i].explanation)
        }
        let form: FindingDetail.Form
        switch code {
        case .redirectCookieLost: form = .redirectCookieLost
        case .cookieMissing: form = .cookieMissing
        case .cookieExtra: form = .cookieExtra
        default: form = .cookieStale
        }
        var expected: FindingFields = differences[0].recordedValue.map { ["cookie": name, "value": $0] } ?? ["cookie": name, "present": "no"]
        var actual: FindingFields = differences[0].sentValue.map { ["cookie": name, "value": $0] } ?? ["cookie": name, "present": "no"]
        if !one {
            expected["cookies"] = names.joined(separator: ", ")
            actual["cookies"] = names.joined(separator: ", ")
        }
        var finding = make(code, e, rank, preset, recording, Self.unionRules(differences) { $0.rules }, expected: expected, actual: actual, detail: FindingDetail(form, values), subject: name, subjects: names)
        // Calibration: a certain cookie keeps the code's severity; otherwise the likeliest
        // decides: a warning from one chance in ten, info below.
        let likelihood = differences.reduce(0) { max($0, $1.likelihood) }
        if likelihood < 1 {
            finding.likelihood = likelihood
            let cap: Severity = likelihood >= Self.warningLikelihood ? .warning : .info
            if finding.severity > cap { finding.severity = cap }
        }
        // The scenario names no cookie (most runs): no closure over the detector to make.
        if !importantCookies.isEmpty, names.contains(where: { isImportant($0) }) { finding.rank = .important }
        Self.restOn(differences, serverSet: serverSet, finding: &finding)
        return finding
    }

    /// The cookie sources a finding rests on; one the recording contradicts makes the
    /// finding less likely, a warning at most.
    static func restOn(_ differences: [CookieDifference], serverSet: [String: Int], finding: inout Finding) {
        guard differences.contains(where: { $0.recordedSource != nil }) else { return }
        let inferences = differences.compactMap { FindingInference.ofCookie($0, serverSet: serverSet) }
        finding.inferences = inferences
        guard inferences.contains(where: { $0.contradictedBy != nil }) else { return }
        finding.likelihood = min(finding.likelihood ?? 1, FindingInference.contradictedLikelihood)
        if finding.severity > .warning { finding.severity = .warning }
    }

    /// Builds a finding: severity from the code, capped at warning when a rule is folklore;
    /// the message ends with the rules, their statements' clauses and confidence.
    func make(_ code: FindingCode, _ e: Exchange, _ rank: Rank, _ preset: String, _ recording: String, _ rules: consuming [RuleID], expected: consuming FindingFields, actual: consuming FindingFields, detail: consuming FindingDetail, subject: String? = nil, subjects: consuming [String]? = nil) -> Finding {
        let confidence = catalog.confidence(of: rules)
        var severity = code.defaultSeverity
        if confidence == .folklore && severity == .error { severity = .warning }
        var finding = Finding(
            code: code, severity: severity, preset: preset, recording: recording,
            sequence: e.sequence, method: e.request.method, url: e.request.url, subject: subject,
            rules: rules, confidence: confidence, expected: expected, actual: actual, detail: detail)
        finding.subjects = subjects ?? subject.map { [$0] } ?? []
        finding.rank = rank
        return finding
    }

    /// Whether an outcome can give a finding at all: most exchanges of most presets cannot.
    static func mayFind(_ o: Outcome, _ recordedBody: BodyFingerprint) -> Bool {
        o.hasEffects || o.observedMissing || !o.addedHeaders.isEmpty || !o.removedHeaders.isEmpty || !o.crossSiteCookies.isEmpty
            || o.deliveredBody != recordedBody || o.pageURL != nil || !o.cookieDifferences.isEmpty
    }

    /// What findings say of each exchange of a recording, its label and rank, made once for
    /// all its presets' results.
    public struct Subjects: Sendable {
        public var labels: [String]
        public var ranks: [Rank]

        /// Each "name=value" a response of the recording set, and the first exchange that
        /// set it: what contradicts a value inferred written by script.
        public var serverSet: [String: Int]

        public init(_ recording: Recording) {
            serverSet = Self.serverSet(recording)
            labels = recording.exchanges.map(FindingDetector.label)
            // Reading the Referer of a third-party frame's request takes more than the rest
            // of a finding's rank: once per exchange, not per finding and preset.
            ranks = recording.exchanges.map(Rank.of)
        }

        /// Each "name=value" the recording's responses set (a Set-Cookie of several lines
        /// is several cookies), with the first exchange that set it.
        static func serverSet(_ recording: Recording) -> [String: Int] {
            var out: [String: Int] = [:]
            for e in recording.exchanges {
                for value in e.response.headers.all("Set-Cookie") {
                    for line in value.split(separator: "\n") {
                        let pair = line.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
                        if pair.contains("="), out[pair] == nil { out[pair] = e.sequence }
                    }
                }
            }
            return out
        }
    }

    /// "The XHR POST /api/order".
    static func label(_ e: Exchange) -> String {
        let what: String
        switch e.initiator {
        case .navigation: what = "document"
        case .formSubmission: what = "form submission"
        case .xhr: what = "XHR"
        case .fetch: what = "fetch"
        case .ajax: what = "request"
        case .beacon: what = "beacon"
        case .websocket: what = "WebSocket handshake"
        case .eventSource: what = "EventSource"
        default: what = e.initiator.rawValue
        }
        let hop = (e.redirect?.hop ?? 0) > 0 ? " (redirect hop \(e.redirect!.hop))" : ""
        return "The \(what) \(e.request.method) \(FindingDetail.shortURL(e.request.url, parsed: e.request.target))\(hop)"
    }

    /// The last recorded hop of the chain `e` starts; nil when `e` does not redirect.
    static func lastHop(of e: Exchange, in exchanges: [Exchange]) -> Exchange? {
        var current = e
        var guardCount = 0
        while let next = current.redirect?.next, guardCount < 64 {
            current = exchanges[next]
            guardCount += 1
        }
        return guardCount == 0 ? nil : current
    }

    func previousStatus(_ e: Exchange, _ exchanges: [Exchange]) -> String {
        let previous = exchanges.first { $0.redirect?.next == e.sequence }
        return previous.map { String($0.response.status) } ?? "3xx"
    }
}
