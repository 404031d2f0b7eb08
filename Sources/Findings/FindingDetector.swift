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
    /// A cookie finding less likely than this is info, not a warning (BEHAVIOUR.md
    /// section 8, calibrated): below one chance in ten it should not hold up a release.
    public static let warningLikelihood = 0.10

    public init(catalog: RuleCatalog = .bundled, minLikelihood: Double = 0, importantCookies: [String] = []) {
        self.catalog = catalog
        self.minLikelihood = minLikelihood
        self.importantCookies = importantCookies
    }

    /// `labels`: each exchange's label made once for the recording (`labels(for:)`), when
    /// several presets' results are read; otherwise each is made when a finding needs it.
    public func findings(for recording: Recording, result: EmulationResult, labels known: [String]? = nil) -> [Finding] {
        var out: [Finding] = []
        let exchanges = recording.exchanges
        var made: [Int: String] = [:]
        for outcome in result.outcomes {
            let before = out.count
            defer {
                // Say so when the model evaluated several possibilities and kept the worse.
                if let alternative = outcome.alternative {
                    for i in before..<out.count where out[i].sequence == outcome.sequence {
                        out[i].alternative = alternative
                    }
                }
            }
            let e = exchanges[outcome.sequence]
            let recordedBody = e.request.bodyFingerprint
            guard Self.mayFind(outcome, recordedBody) else { continue }
            let label: String
            if let known { label = known[e.sequence] } else if let earlier = made[e.sequence] { label = earlier } else { label = Self.label(e); made[e.sequence] = label }

            // A request that fails before any server answers (D4, D5).
            if !outcome.failedRules.isEmpty {
                out.append(make(.requestFailed, e, result.preset, recording.name, outcome.failedRules,
                    expected: ["answered": "yes"], actual: ["answered": "no", "url": outcome.deliveredURL],
                    sentence: outcome.failedRules.contains("D5")
                        ? "\(label) fails before any server answers: it goes to \(Self.shortURL(outcome.deliveredURL)) without SNI, and that IP serves several names"
                        : "\(label) fails before any server answers: it goes to \(Self.shortURL(outcome.deliveredURL)), whose certificate names the host, not the IP"))
                continue
            }
            // A request that is never sent: nothing else about it reaches the server.
            if !outcome.stalledRules.isEmpty || outcome.observedMissing {
                out.append(make(.requestStalled, e, result.preset, recording.name, outcome.stalledRules,
                    expected: ["sent": "yes"], actual: ["sent": "no"],
                    sentence: "\(label) is never sent"))
                continue
            }
            if !outcome.urlRules.isEmpty, outcome.deliveredURL != e.request.url {
                out.append(make(.urlMutated, e, result.preset, recording.name, outcome.urlRules,
                    expected: ["url": e.request.url], actual: ["url": outcome.deliveredURL],
                    sentence: "\(label) reaches the server as \(Self.shortURL(outcome.deliveredURL))"))
            }
            for header in outcome.removedHeaders {
                out.append(make(.headerLost, e, result.preset, recording.name, [header.rule],
                    expected: ["header": header.name, "present": "yes"], actual: ["header": header.name, "present": "no"],
                    sentence: "\(label) reaches the server without the \(header.name) header the page sent", subject: header.name))
            }
            for header in outcome.addedHeaders {
                out.append(make(.headerAdded, e, result.preset, recording.name, [header.rule],
                    expected: ["header": header.name, "present": "no"], actual: ["header": header.name, "present": "yes"],
                    sentence: "\(label) reaches the server with a \(header.name) header the page did not send", subject: header.name))
            }
            if !outcome.preflightRules.isEmpty {
                out.append(make(.preflightAdded, e, result.preset, recording.name, outcome.preflightRules,
                    expected: ["preflight": "no"], actual: ["preflight": "OPTIONS"],
                    sentence: "\(label) now needs a CORS preflight (an extra OPTIONS request) because a custom header makes it non-simple"))
            }
            if !outcome.tooLargeRules.isEmpty {
                out.append(make(.bodyTooLargeForHeader, e, result.preset, recording.name, outcome.tooLargeRules,
                    expected: ["bodyLength": String(recordedBody.length)], actual: ["bodyLength": String(recordedBody.length)],
                    sentence: "\(label) moves a \(recordedBody.length)-byte body into a header, more than anyone has measured to work"))
            }
            if !outcome.streamOnlyRules.isEmpty {
                out.append(make(.bodyStreamOnly, e, result.preset, recording.name, outcome.streamOnlyRules,
                    expected: ["body": "HTTPBody"], actual: ["body": "HTTPBodyStream only"],
                    sentence: "\(label) hands its body to the scheme handler only as a stream; a handler that reads HTTPBody sees nothing"))
            }
            if !outcome.responseRules.isEmpty {
                let response = BodyFingerprint(e.response.body)
                out.append(make(.responseMutated, e, result.preset, recording.name, outcome.responseRules,
                    expected: ["bodyLength": String(response.length), "bodySHA256": response.sha256], actual: ["body": "not delivered as binary"],
                    sentence: outcome.responseRules.contains("O2")
                        ? "\(label) is served the offline package's file, not what the server sent"
                        : "\(label) gets its binary response mangled by the JSON bridge"))
            }

            if !outcome.corsRules.isEmpty, let reason = outcome.corsReason {
                out.append(make(.corsBlocked, e, result.preset, recording.name, outcome.corsRules,
                    expected: ["readable": "yes"], actual: ["readable": "no", "reason": reason.text],
                    sentence: "\(label) is sent from the app's own origin, and the page may not read its response: \(reason.text)"))
            }
            if !outcome.thirdPartyRules.isEmpty {
                out.append(make(.thirdPartyIntercepted, e, result.preset, recording.name, outcome.thirdPartyRules,
                    expected: ["intercepted": "no"], actual: ["intercepted": "yes"],
                    sentence: "\(label) belongs to a third-party site but goes through the app's interceptor"))
            }
            for name in outcome.crossSiteCookies {
                out.append(make(.cookieCrossSiteAccepted, e, result.preset, recording.name, ["C9"],
                    expected: ["cookie": name, "accepted": "no"], actual: ["cookie": name, "accepted": "yes"],
                    sentence: "Before \(label.lowercasedFirst) a script set the cookie \(name) for another site, and the native setter hook accepted it", subject: name))
            }

            // A 307/308 hop re-issued without its body or with another method.
            if !outcome.redirectReissueRules.isEmpty {
                out.append(make(.redirectMethodChanged, e, result.preset, recording.name, outcome.redirectReissueRules,
                    expected: ["method": e.request.method, "bodyLength": String(recordedBody.length), "bodySHA256": recordedBody.sha256],
                    actual: ["method": outcome.deliveredMethod, "bodyLength": String(outcome.deliveredBody.length), "bodySHA256": outcome.deliveredBody.sha256],
                    sentence: "\(label) follows a \(previousStatus(e, exchanges)) redirect that must keep its method and body, but is re-issued as \(outcome.deliveredMethod) with \(outcome.deliveredBody.isEmpty ? "an empty body" : "another body")"))
            } else if !recordedBody.isEmpty && outcome.deliveredBody.isEmpty {
                out.append(make(.bodyLost, e, result.preset, recording.name, outcome.bodyRules,
                    expected: ["bodyLength": String(recordedBody.length), "bodySHA256": recordedBody.sha256],
                    actual: ["bodyLength": "0", "bodySHA256": BodyFingerprint.empty.sha256],
                    sentence: "\(label) reaches the server with an empty body (\(recordedBody.length) bytes recorded)" + (outcome.bodyReason.map { ", because \($0)" } ?? "")))
            } else if outcome.deliveredBody != recordedBody && outcome.bodyReencoded {
                out.append(make(.bodyReencoded, e, result.preset, recording.name, outcome.bodyRules,
                    expected: ["bodyLength": String(recordedBody.length), "bodySHA256": recordedBody.sha256],
                    actual: ["bodyLength": String(outcome.deliveredBody.length), "bodySHA256": outcome.deliveredBody.sha256],
                    sentence: "\(label) reaches the server with the same fields in other bytes (\(outcome.deliveredBody.length) bytes instead of \(recordedBody.length))" + (outcome.bodyReason.map { ", because \($0)" } ?? "")))
            } else if outcome.deliveredBody != recordedBody {
                out.append(make(.bodyMutated, e, result.preset, recording.name, outcome.bodyRules,
                    expected: ["bodyLength": String(recordedBody.length), "bodySHA256": recordedBody.sha256],
                    actual: ["bodyLength": String(outcome.deliveredBody.length), "bodySHA256": outcome.deliveredBody.sha256],
                    sentence: "\(label) reaches the server with a different body (\(outcome.deliveredBody.length) bytes instead of \(recordedBody.length))" + (outcome.bodyReason.map { ", because \($0)" } ?? "")))
            }

            // The page's URL after a redirect chain.
            if let pageURL = outcome.pageURL, let final = Self.lastHop(of: e, in: exchanges), pageURL != final.request.url {
                let finalURL = final.request.url
                // Both URLs are mostly recorded requests', already parsed.
                let shownPage = Self.shortURL(pageURL, parsed: pageURL == e.request.url ? e.request.target : nil)
                let shownFinal = Self.shortURL(finalURL, parsed: final.request.target)
                var finding = make(.redirectHidden, e, result.preset, recording.name, outcome.redirectRules,
                    expected: ["pageURL": finalURL], actual: ["pageURL": pageURL],
                    sentence: e.initiator.isDocument
                        ? "After \(label.lowercasedFirst) the page stays at \(shownPage) instead of following the redirect to \(shownFinal)"
                        : "\(label) is redirected to \(shownFinal) without the page knowing")
                if !e.initiator.isDocument { finding.severity = .info }
                out.append(finding)
            }

            // Cookies: one finding per code for the exchange, naming every cookie.
            var byCode: [(FindingCode, [CookieDifference])] = []
            for difference in outcome.cookieDifferences {
                let code: FindingCode
                switch (difference.recordedValue, difference.sentValue) {
                case (.some, .none) where difference.setByRedirect: code = .redirectCookieLost
                case (.some, .none): code = .cookieMissing
                case (.none, .some): code = .cookieExtra
                default: code = .cookieStale
                }
                if let i = byCode.firstIndex(where: { $0.0 == code }) { byCode[i].1.append(difference) } else { byCode.append((code, [difference])) }
            }
            for (code, differences) in byCode {
                let kept = differences.allSatisfy({ $0.likelihood >= minLikelihood }) ? differences : differences.filter { $0.likelihood >= minLikelihood }
                guard !kept.isEmpty else { continue }
                out.append(cookieFinding(code, kept, e, label: label, preset: result.preset, recording: recording.name))
            }
        }

        // Jar divergence at the end of the flow, once every synchronisation has completed:
        // one finding naming every cookie on which the jars disagree.
        if let last = exchanges.last, !result.divergences.isEmpty {
            let divergences = result.divergences
            func place(_ d: JarDivergence) -> String {
                d.nativeValue == nil ? "only WebJar holds" : d.webValue == nil ? "only NativeJar holds" : "NativeJar and WebJar hold different values"
            }
            let first = divergences[0]
            var expected: FindingFields = ["cookie": first.name, "domain": first.domain, "path": first.path, "in": "NativeJar and WebJar"]
            var actual: FindingFields = ["cookie": first.name, "domain": first.domain, "path": first.path]
            actual["in"] = first.nativeValue == nil ? "WebJar only" : first.webValue == nil ? "NativeJar only" : "both, with different values"
            if let v = first.nativeValue ?? first.webValue { expected["value"] = v }
            if let n = first.nativeValue, let w = first.webValue { expected["value"] = n; actual["value"] = w }
            let subjects = divergences.map { "\($0.name)@\($0.domain)\($0.path)" }
            if divergences.count > 1 { expected["cookies"] = subjects.joined(separator: ", ") }
            let sentence = divergences.count == 1
                ? "At the end of the flow \(place(first))\(first.nativeValue != nil && first.webValue != nil ? " of" : "") the cookie \(first.name) (\(first.domain)\(first.path)) (\(first.explanation))"
                : "At the end of the flow NativeJar and WebJar disagree on \(divergences.count) cookies: " + divergences.prefix(Self.namedCookies).map { "\($0.name) (\($0.domain)\($0.path); \(place($0)); \($0.explanation))" }.joined(separator: "; ") + (divergences.count > Self.namedCookies ? "; and \(divergences.count - Self.namedCookies) more" : "")
            var finding = make(.jarDiverged, last, result.preset, recording.name, Self.unionRules(divergences) { $0.rules }, expected: expected, actual: actual, sentence: Sentence(stringLiteral: sentence), subject: subjects[0])
            finding.subjects = subjects
            // The end of the flow is no request: rank by the cookies alone.
            finding.rank = divergences.contains { isImportant($0.name) } ? .important : .subresource
            out.append(finding)
        }
        return out
    }

    /// How many cookies a grouped finding's sentence names before "and N more".
    static let namedCookies = 8

    /// Whether the scenario names the cookie as important.
    func isImportant(_ name: String) -> Bool {
        importantCookies.contains { Scenario.Override.glob($0, name) }
    }

    /// Every rule of `items`, each once, in the order first met.
    static func unionRules<Item>(_ items: [Item], _ rules: (Item) -> [RuleID]) -> [RuleID] {
        var out: [RuleID] = []
        for item in items { out.appendNew(rules(item)) }
        return out
    }

    /// One finding for the cookies of one exchange and code: severity from the code, or
    /// from the likelihood when no cookie of it is certain.
    func cookieFinding(_ code: FindingCode, _ differences: [CookieDifference], _ e: Exchange, label: String, preset: String, recording: String) -> Finding {
        let first = differences[0]
        let names = differences.map(\.name)
        func listed() -> String {
            let shown = names.prefix(Self.namedCookies).joined(separator: ", ")
            return names.count > Self.namedCookies ? shown + " and \(names.count - Self.namedCookies) more" : shown
        }
        // Say each distinct reason once, after the cookies it explains.
        func reasons() -> String {
            var reasons: [(explanation: String, names: [String])] = []
            for d in differences {
                if let i = reasons.firstIndex(where: { $0.explanation == d.explanation }) { reasons[i].names.append(d.name) } else { reasons.append((d.explanation, [d.name])) }
            }
            return reasons.count == 1 ? reasons[0].explanation
                : reasons.prefix(Self.namedCookies).map { "\($0.names.joined(separator: ", ")): \($0.explanation)" }.joined(separator: "; ")
        }
        let why = differences.count == 1 ? first.explanation : reasons()
        let one = differences.count == 1
        let sentence: Sentence
        switch code {
        case .redirectCookieLost:
            sentence = one ? "\(label) is sent without the cookie \(first.name), which a redirect response set and the recording carried: \(why)"
                : "\(label) is sent without \(names.count) cookies a redirect response set and the recording carried (\(listed())): \(why)"
        case .cookieMissing:
            sentence = one ? "\(label) is sent without the cookie \(first.name), which the recording carried: \(why)"
                : "\(label) is sent without \(names.count) cookies the recording carried (\(listed())): \(why)"
        case .cookieExtra:
            sentence = one ? "\(label) carries the cookie \(first.name), which the recording did not: \(why)"
                : "\(label) carries \(names.count) cookies the recording did not (\(listed())): \(why)"
        default:
            sentence = one ? "\(label) carries an older value of the cookie \(first.name): \(why)"
                : "\(label) carries older values of \(names.count) cookies (\(listed())): \(why)"
        }
        var expected: FindingFields = first.recordedValue.map { ["cookie": first.name, "value": $0] } ?? ["cookie": first.name, "present": "no"]
        var actual: FindingFields = first.sentValue.map { ["cookie": first.name, "value": $0] } ?? ["cookie": first.name, "present": "no"]
        if !one {
            expected["cookies"] = names.joined(separator: ", ")
            actual["cookies"] = names.joined(separator: ", ")
        }
        var finding = make(code, e, preset, recording, Self.unionRules(differences) { $0.rules }, expected: expected, actual: actual, sentence: sentence, subject: first.name)
        finding.subjects = names
        // Calibration: a certain cookie keeps the code's severity; otherwise the likeliest
        // decides: a warning from one chance in ten, info below.
        let likelihood = differences.reduce(0) { max($0, $1.likelihood) }
        if likelihood < 1 {
            finding.likelihood = likelihood
            let cap: Severity = likelihood >= Self.warningLikelihood ? .warning : .info
            if finding.severity > cap { finding.severity = cap }
        }
        if names.contains(where: isImportant) { finding.rank = .important }
        return finding
    }

    /// Builds a finding: severity from the code, capped at warning when a rule is folklore;
    /// the message ends with the rules, their statements' clauses and confidence.
    func make(_ code: FindingCode, _ e: Exchange, _ preset: String, _ recording: String, _ rules: [RuleID], expected: FindingFields, actual: FindingFields, sentence: Sentence, subject: String? = nil) -> Finding {
        let confidence = catalog.confidence(of: rules)
        var severity = code.defaultSeverity
        if confidence == .folklore && severity == .error { severity = .warning }
        var finding = Finding(
            code: code, severity: severity, preset: preset, recording: recording,
            sequence: e.sequence, method: e.request.method, url: e.request.url, subject: subject,
            rules: rules, confidence: confidence, expected: expected, actual: actual, detail: sentence.text)
        finding.subjects = subject.map { [$0] } ?? []
        finding.rank = Rank.of(e)
        return finding
    }

    /// Whether an outcome can give a finding at all: most exchanges of most presets cannot.
    static func mayFind(_ o: Outcome, _ recordedBody: BodyFingerprint) -> Bool {
        !o.stalledRules.isEmpty || o.observedMissing || !o.urlRules.isEmpty || !o.addedHeaders.isEmpty || !o.preflightRules.isEmpty
            || !o.tooLargeRules.isEmpty || !o.streamOnlyRules.isEmpty || !o.responseRules.isEmpty || !o.thirdPartyRules.isEmpty
            || !o.crossSiteCookies.isEmpty || !o.redirectReissueRules.isEmpty || o.deliveredBody != recordedBody || o.pageURL != nil
            || !o.cookieDifferences.isEmpty || !o.corsRules.isEmpty || !o.removedHeaders.isEmpty || !o.failedRules.isEmpty
    }

    /// Every exchange's label, once per recording for all its presets.
    public static func labels(for recording: Recording) -> [String] { recording.exchanges.map(label) }

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
        default: what = e.initiator.rawValue
        }
        let hop = (e.redirect?.hop ?? 0) > 0 ? " (redirect hop \(e.redirect!.hop))" : ""
        return "The \(what) \(e.request.method) \(shortURL(e.request.url, parsed: e.request.target))\(hop)"
    }

    /// `url` as findings show it; `parsed`, when given, is `url` already parsed.
    static func shortURL(_ url: String, parsed: RequestTarget? = nil) -> String {
        // An app's own scheme (app://localhost) says where the request went; http(s) goes without saying.
        let target = parsed ?? RequestTarget(url)
        let scheme = target?.scheme ?? url.prefix { $0 != ":" }.lowercased()
        var shown = target?.hostAndPath ?? url
        if scheme != "http" && scheme != "https" { shown = scheme + "://" + shown }
        // No more characters than bytes: most URLs are measured without counting characters.
        return shown.utf8.count > 100 && shown.count > 100 ? String(shown.prefix(97)) + "..." : shown
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

extension String {
    /// The string with its first letter lowercased ("The XHR ..." after "After").
    var lowercasedFirst: String {
        // Labels start with an ASCII capital: lowercase that byte alone.
        if let first = utf8.first, first >= 65, first <= 90 {
            var bytes = Array(utf8)
            bytes[0] |= 0x20
            return String(decoding: bytes, as: UTF8.self)
        }
        return prefix(1).lowercased() + dropFirst()
    }
}

/// A finding's sentence: literal words and values, its storage reserved once for a usual
/// sentence's length. Swift's own interpolation reserves two bytes a value, so a sentence
/// that starts with an exchange's label grew its storage two or three times.
struct Sentence: ExpressibleByStringInterpolation {
    var text: String

    struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + interpolationCount * 48) }
        mutating func appendLiteral(_ literal: String) { text += literal }
        mutating func appendInterpolation(_ value: String) { text += value }
        mutating func appendInterpolation(_ value: Int) { text += String(value) }
    }

    init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }
    init(stringLiteral: String) { text = stringLiteral }

    /// A clause added at the end (", because ...").
    static func + (sentence: Sentence, clause: String) -> Sentence {
        var sentence = sentence
        sentence.text += clause
        return sentence
    }
}
