import Foundation
import TrafficModel

/// A framework that serves the app's own page from a custom scheme through a
/// WKURLSchemeHandler (Capacitor, Cordova, Ionic WebView, Tauri): the page's origin is the
/// app's, not the server's (A1-A3).
///
/// The recording's first main-frame document stands for the bundled page (A3). What the
/// page sends to an http(s) server is then cross-origin (A1: CORS) and cross-site (A2:
/// third-party cookies); what it sends to the app origin itself reaches the framework's
/// handler, which may lose the body (CDV3, TAU2).
///
/// A class of constants: every request of an app-served page carries its shell in the
/// emulation context, and sharing it costs one reference count where a copy of its
/// strings cost five.
public final class AppShell: SessionPart, Hashable {
    /// What the framework's handler does with a request body sent to the app origin.
    public enum HandlerBodies: String, Sendable, Hashable {
        /// The body arrives as WebKit hands it over (S2, S3 apply as for any handler).
        case kept
        /// A FormData with a file arrives with a nil HTTPBody (Cordova, CDV3).
        case formDataWithFileLost = "formdata-file-lost"
        /// Every POST body arrives empty.
        case postLost = "post-lost"
        /// Every POST body arrives empty when the app runs against its dev server (the
        /// scenario's `devServer`), as `tauri ios dev` proxies the app origin (TAU2); a
        /// release build serves it from the bundle.
        case postLostUnderDevServer = "post-lost-under-dev-server"
    }

    /// `capacitor`, `app`, `ionic`, `tauri`.
    public let scheme: String
    public let host: String
    /// The rule that says where this framework serves the page from (CAP1, CDV1, ION1, TAU1).
    public let originRule: RuleID
    public let handlerBodies: HandlerBodies
    /// The rule behind `handlerBodies`, when it loses bodies.
    public let handlerBodiesRule: RuleID?
    /// `capacitor://localhost`.
    public let origin: String
    /// How the framework's web view links the jars, whatever carries the requests, when it
    /// installs something of its own: Capacitor's cookie observer (CAP3). A mitigation's
    /// link still comes first.
    public let jarLink: JarLink?

    public init(scheme: String, host: String = "localhost", originRule: RuleID, handlerBodies: HandlerBodies = .kept, handlerBodiesRule: RuleID? = nil, jarLink: JarLink? = nil) {
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.originRule = originRule
        self.handlerBodies = handlerBodies
        self.handlerBodiesRule = handlerBodiesRule
        self.jarLink = jarLink
        origin = "\(self.scheme)://\(self.host)"
    }

    public static func == (a: AppShell, b: AppShell) -> Bool {
        (a.scheme, a.host, a.originRule, a.handlerBodies, a.handlerBodiesRule) == (b.scheme, b.host, b.originRule, b.handlerBodies, b.handlerBodiesRule) && a.jarLink == b.jarLink
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(scheme)
        hasher.combine(host)
        hasher.combine(originRule)
        hasher.combine(handlerBodies)
        hasher.combine(handlerBodiesRule)
        hasher.combine(jarLink)
    }

    /// Capacitor's default: `capacitor://localhost` (CAP1). Its cookie observer is never
    /// retained and never fires (CAP3): the jars synchronise as the system does.
    public static let capacitor = AppShell(scheme: "capacitor", originRule: "CAP1")

    /// An app that keeps Capacitor's cookie observer alive itself (capacitor PR #8520, not
    /// in a release): WebJar's additions copied into NativeJar at once, no deletion. A
    /// preset file's `"cookieObserver": true`.
    public static let capacitorCookieObserver = JarLink.observed(to: .native, rule: "CAP3", deletions: .towardObserved("CAP3"))

    /// Every rule the shell can cite.
    var citedRules: [RuleID] {
        var rules: [RuleID] = ["A1", "A2", "A3", "A4", originRule]
        if let handlerBodiesRule { rules.append(handlerBodiesRule) }
        if case .observed(_, let rule, _) = jarLink { rules.append(rule) }
        return rules
    }

    /// A3, A4: the loads the app's bundle answers, so no server sees them; the bodies the
    /// framework's handler loses of requests to the app origin as they reach it (CDV3,
    /// TAU2...); and the link of the jars the framework's web view installs, after any
    /// mitigation's.
    var hooks: MitigationHooks {
        var hooks = MitigationHooks(loadAboutToGo: { [self] outcome, load in answer(load, &outcome) }, jarLink: jarLink)
        if handlerBodies != .kept {
            hooks.loadAtInterceptor = { [self] outcome, load, _ in
                loseBody(load, &outcome)
                return nil
            }
        }
        return hooks
    }

    /// The body the framework's handler loses of a request the page sent to the app origin
    /// (a first hop: a redirect's later hops go where the server sends them).
    func loseBody(_ load: PendingLoad, _ outcome: inout Outcome) {
        guard load.hop == 0 else { return }
        let e = load.exchange
        guard e.initiator != .websocket, let target = e.request.target, serves(target), let rule = handlerLosesBody(e, devServer: load.input.scenario.devServer) else { return }
        outcome.deliveredBody = .empty
        outcome[.bodyChanged] = [rule]
        outcome.note(Change(rule: rule, note: .bodyRemoved(bytes: e.request.bodyFingerprint.length)))
    }

    /// What the bundle answers of a load about to go, nil when it goes to a server.
    func answer(_ load: PendingLoad, _ outcome: inout Outcome) -> LoadAnswer? {
        if load.chainStart == load.firstDocument {
            // A3: the bundled page; no server sees this load.
            outcome.note(Change(rule: "A3", what: "served from the app's bundle; no server sees this load"))
            outcome.note(Change(rule: originRule, note: .pageOrigin(origin)))
            return LoadAnswer()
        }
        guard load.fromAppPage, load.hop > 0 ? load.chainAnsweredBy == "A4" : WebViewEmulator.isBundledFile(load.exchange, of: load.recordedPage) else { return nil }
        // A4: a script, stylesheet, image, font or media file of the page's own origin is a
        // file of the bundle, at a URL relative to the app's origin; so are its redirect's hops.
        outcome.note(Change(rule: "A4", note: .bundledFile(origin: origin)))
        return LoadAnswer(chainRule: "A4", intercepted: true)
    }

    /// Whether `target` is the app origin itself, served by the framework's handler.
    public func serves(_ target: RequestTarget) -> Bool { target.scheme == scheme && target.host == host }

    /// The rule by which the handler loses the body of `e`, sent to the app origin; the
    /// scenario says whether the app ran against its dev server.
    func handlerLosesBody(_ e: Exchange, devServer: Bool) -> RuleID? {
        guard !e.request.body.isEmpty else { return nil }
        switch handlerBodies {
        case .kept: return nil
        case .formDataWithFileLost: return e.bodyKind == .formDataWithFile ? handlerBodiesRule : nil
        case .postLost: return e.request.method == "POST" ? handlerBodiesRule : nil
        case .postLostUnderDevServer: return devServer && e.request.method == "POST" ? handlerBodiesRule : nil
        }
    }

    public var options: [String: String] {
        var o = ["origin": origin]
        if handlerBodies != .kept { o["handler-bodies"] = handlerBodies.rawValue }
        if case .observed(_, let rule, _) = jarLink { o["cookie-observer"] = rule.rawValue }
        return o
    }
}

/// Whether a page on `origin` may read a recorded response (A1), from what the recording
/// holds: the response's `Access-Control-Allow-*` headers and any preflight it answered.
public enum CORSCheck {
    /// Why the page may not read the response.
    public enum Reason: Sendable, Hashable {
        case noAllowOrigin
        case otherOrigin(String)
        case wildcardWithCredentials
        case noAllowCredentials
        /// The request is not CORS-simple (the method or header named) and the recording
        /// holds no preflight answered for it.
        case preflightUnanswered(because: String)
        /// The response allowed the origin the request named and varies on Origin: the
        /// server picks the allowed origin per request, so whether it allows the app's
        /// origin is not in the recording.
        case chosenPerRequest(String)

        /// Whether the recording cannot tell, rather than shows, that the page may not read.
        public var isUnverifiable: Bool {
            if case .chosenPerRequest = self { return true }
            return false
        }

        public var text: String {
            switch self {
            case .noAllowOrigin: return "the response carries no Access-Control-Allow-Origin"
            case .otherOrigin(let allowed): return "the response allows only \(allowed)"
            case .wildcardWithCredentials: return "the response allows * but the request carries credentials"
            case .noAllowCredentials: return "the request carries credentials and the response has no Access-Control-Allow-Credentials: true"
            case .preflightUnanswered(let because): return "\(because) needs a preflight, and the recording holds no OPTIONS answered for it"
            case .chosenPerRequest(let allowed): return "the response allowed the origin the request named (\(allowed)) and varies on Origin: the server picks the allowed origin per request; check that it allows the app's origin"
            }
        }
    }

    /// Headers the engine sets itself, never a reason for a preflight: among them the
    /// validators its HTTP cache adds to revalidate a stored response (If-Modified-Since,
    /// If-None-Match), after the CORS check and so never preflighted.
    static let engineHeaders: Set<String> = [
        "accept-charset", "accept-encoding", "connection", "content-length", "cookie", "date", "dnt", "expect", "host",
        "keep-alive", "origin", "referer", "te", "trailer", "transfer-encoding", "upgrade", "via", "user-agent",
        "priority", "pragma", "cache-control", "if-modified-since", "if-none-match",
    ]
    /// The CORS-safelisted request headers (Fetch standard), Content-Type checked apart.
    static let safelisted: Set<String> = ["accept", "accept-language", "content-language", "range"]
    /// The CORS-safelisted methods (Fetch standard).
    static let simpleMethods = ["GET", "HEAD", "POST"]
    static let simpleContentTypes: Set<String> = ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"]

    /// Nil when a page on `origin` may read the response of `e`, or when the recording
    /// holds no response to judge (status 0: the request failed, or the exporter kept no
    /// more, E1).
    public static func check(_ e: Exchange, from origin: String, in exchanges: [Exchange]) -> Reason? {
        guard e.response.status > 0 else { return nil }
        let response = e.response.headers
        let credentialed = e.request.headers.first("Cookie").map { !$0.isEmpty } ?? false
        guard let allow = response.first("Access-Control-Allow-Origin")?.trimmingOWS else { return .noAllowOrigin }
        if allow == "*" {
            if credentialed { return .wildcardWithCredentials }
        } else if allow.lowercased() != origin {
            if allow.caseInsensitiveEquals(e.request.headers.first("Origin")?.trimmingOWS ?? ""), variesOnOrigin(response) { return .chosenPerRequest(allow) }
            return .otherOrigin(allow)
        } else if credentialed, response.first("Access-Control-Allow-Credentials")?.lowercased() != "true" {
            return .noAllowCredentials
        }
        // An EventSource is never preflighted: WebKit sends it as it is (ES1). A request the
        // recording's own engine sent from this origin went out only once its preflight had
        // passed (or was cached): a recording made in the app itself need not show the
        // OPTIONS, and Web Inspector's HAR lists none.
        let sentFromOrigin = e.request.headers.first("Origin")?.trimmingOWS.lowercased() == origin
        if e.initiator != .eventSource, !sentFromOrigin, let because = preflightReason(e.request), !answeredPreflight(for: e, from: origin, in: exchanges) {
            return .preflightUnanswered(because: because)
        }
        return nil
    }

    /// Whether the response names Origin in its Vary header (a server that answers each
    /// origin its own Access-Control-Allow-Origin, as the Fetch standard asks of it).
    static func variesOnOrigin(_ headers: HeaderList) -> Bool {
        headers.all("Vary").contains { value in
            value.split(separator: ",").contains { token in
                let name = String(token).trimmingOWS
                return name == "*" || name.caseInsensitiveEquals("origin")
            }
        }
    }

    /// What makes a request not CORS-simple, nil when it is simple.
    static func preflightReason(_ request: RecordedRequest) -> String? {
        let method = request.method
        if !simpleMethods.contains(where: { method.caseInsensitiveEquals($0) }) { return "the method \(method.uppercased())" }
        for field in request.headers {
            let name = field.name.asciiLowercased
            if engineHeaders.contains(name) || name.hasPrefix("sec-") || name.hasPrefix("proxy-") || name.hasPrefix(":") || safelisted.contains(name) { continue }
            if name == "content-type" {
                let type = field.value.split(separator: ";").first.map { $0.trimmingOWS.asciiLowercased } ?? ""
                if simpleContentTypes.contains(type) { continue }
                return "the Content-Type \(type)"
            }
            return "the header \(field.name)"
        }
        return nil
    }

    /// An OPTIONS to the same URL before `e`, answered 2xx and allowing the origin.
    static func answeredPreflight(for e: Exchange, from origin: String, in exchanges: [Exchange]) -> Bool {
        exchanges[..<e.sequence].contains { p in
            guard p.request.method == "OPTIONS", p.request.url == e.request.url, (200..<300).contains(p.response.status) else { return false }
            let allow = p.response.headers.first("Access-Control-Allow-Origin")?.trimmingOWS.lowercased()
            return allow == "*" || allow == origin
        }
    }
}
