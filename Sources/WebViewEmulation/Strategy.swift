import TrafficModel

/// Which of the two jars a transport reads or writes (docs/model.md, "The jars and the page").
public enum JarSide: String, Sendable, Hashable, Codable {
    case native, web

    public var other: JarSide { self == .native ? .web : .native }
    /// `NativeJar` or `WebJar`, as the model names them.
    public var jarName: String { self == .native ? "NativeJar" : "WebJar" }
}

/// How a redirect chain is followed, and so what the page sees.
public enum RedirectHandling: String, Sendable, Hashable, Codable {
    /// WebKit follows each hop itself: the page sees every hop and ends at the last URL.
    case engine
    /// A native session follows the chain and hands the final response to the page under
    /// the original URL (P4 silent, S5 silent).
    case silent
    /// WebKit is told of each hop and follows, but each hop crosses IPC again (P4 forwarded).
    case forwarded
    /// S5 reload-document (NetEase): a main document's 3xx is handed to WebKit, cancelled,
    /// and the Location loaded with a GET; subresource redirects are followed silently.
    case reloadDocument = "reload-document"
    /// A native session follows the chain and tells the page the final URL
    /// (CapacitorHttp's bridge, CAPH2; Tauri's HTTP plugin, TAU3).
    case reported
}

/// What a transport does to the page's body on its way, beyond losing it whole: a
/// bridge's conversion (CAPH4, CAPH5).
public struct BodyChange: Sendable, Hashable {
    public enum Effect: Sendable, Hashable {
        /// The server receives these bytes instead of the page's.
        case replaced(BodyFingerprint)
        /// The server receives the same content in other bytes (a rebuilt multipart body).
        case reencoded(BodyFingerprint)
        /// The conversion fails and the request is never sent.
        case neverSent
    }
    public var rule: RuleID
    public var effect: Effect
    /// Why, in words, for the finding.
    public var reason: String

    public init(rule: RuleID, effect: Effect, reason: String) {
        self.rule = rule
        self.effect = effect
        self.reason = reason
    }
}

/// What a strategy does to one load: a request the page issued and, when it redirects,
/// the hops that follow. Each decision carries the rule that makes it.
public struct TransportPlan: Sendable, Hashable {
    public var requestJar: JarSide
    public var requestJarRule: RuleID
    public var responseJar: JarSide
    public var responseJarRule: RuleID
    /// The rule that empties the page's request body, nil when it arrives.
    public var bodyLostBy: RuleID?
    public var redirects: RedirectHandling
    public var redirectRule: RuleID
    /// The rule by which the page receives a different response (X2), nil when intact.
    public var responseMutatedBy: RuleID?
    /// Whether the request goes through an interceptor in the app (not WebKit alone).
    public var intercepted: Bool
    /// S3: the body reaches the handler only as HTTPBodyStream.
    public var streamOnlyBy: RuleID?
    /// P2: a third-party request caught by a global interceptor.
    public var thirdPartyBy: RuleID?
    /// Rules that act without a finding of their own (P5, S8), noted on the outcome.
    public var notes: [Change] = []
    /// A conversion of the body on its way (CAPH4, CAPH5).
    public var bodyChange: BodyChange?
    /// A jar copied into the other once the response is in (CAPC2).
    public var jarCopyAfter: JarMirror?

    public init(requestJar: JarSide, requestJarRule: RuleID, responseJar: JarSide, responseJarRule: RuleID, bodyLostBy: RuleID?, redirects: RedirectHandling, redirectRule: RuleID, responseMutatedBy: RuleID? = nil, intercepted: Bool = true) {
        self.requestJar = requestJar
        self.requestJarRule = requestJarRule
        self.responseJar = responseJar
        self.responseJarRule = responseJarRule
        self.bodyLostBy = bodyLostBy
        self.redirects = redirects
        self.redirectRule = redirectRule
        self.responseMutatedBy = responseMutatedBy
        self.intercepted = intercepted
    }
}

/// What the emulator knows while planning a load: the profile, the scenario's facts a
/// plan asks, and where the request stands (a small value, built per request).
public struct EmulationContext: Sendable {
    public var profile: Profile
    /// Binary bodies count as Blob (the scenario's `binaryBodies`).
    public var binaryAsBlob: Bool
    /// Third-party pages live in a plain web view (the scenario's `thirdPartyWebView`, S8).
    public var thirdPartyInPlainWebView: Bool
    /// The URL of the top-level document when the request is issued.
    public var documentURL: String?
    /// The request goes to another origin than the top-level document's.
    public var crossOrigin: Bool
    /// The app's own page sent it, on the framework's custom scheme (A1, A2).
    public var appPage: AppShell?
    /// The scenario marks the XHR's upload listener (S3).
    public var uploadListener: Bool
    /// CAPH5: the multipart body as native code writes it again, worked out once per
    /// exchange by the replay input; nil when the context was built without one.
    public var nativeMultipart: NativeMultipart?

    /// The request belongs to a third-party page (P2, S8): the exchange's facts say.
    public var thirdPartyPage = false
    /// A form's submission its page's script made (`form.submit()`): the exchange's facts say.
    public var submittedByScript = false

    public init(profile: Profile, scenario: Scenario, documentURL: String? = nil, crossOrigin: Bool = false, uploadListener: Bool = false) {
        self.profile = profile
        binaryAsBlob = scenario.binaryAsBlob
        thirdPartyInPlainWebView = scenario.thirdPartyInPlainWebView
        self.documentURL = documentURL
        self.crossOrigin = crossOrigin
        self.uploadListener = uploadListener
    }
}

/// An interception strategy: the transport path a WKWebView's traffic takes
/// (docs/model.md, "Strategies"). A small value with one job, composed into a preset.
public protocol InterceptionStrategy: Sendable {
    /// `native`, `urlprotocol`, `schemehandler`.
    var kind: String { get }
    /// Options in `key=value` form, for listings.
    var options: [String: String] { get }
    /// Every rule a plan of this strategy can cite.
    var citedRules: [RuleID] { get }
    /// How NativeJar and WebJar exchange cookies under this strategy (J1-J3, or TAU3's
    /// jar of its own).
    var jarLink: JarLink { get }
    func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan
}

// MARK: - native

/// Plain WKWebView, no interception (N1, N2; N3 and N4 act through the jars).
public struct NativeStrategy: InterceptionStrategy {
    public init() {}
    public var jarLink: JarLink { .system }
    public var citedRules: [RuleID] { ["N1", "N2"] }
    public var options: [String: String] { [:] }

    public func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan {
        TransportPlan(requestJar: .web, requestJarRule: "N2", responseJar: .web, responseJarRule: "N2", bodyLostBy: nil, redirects: .engine, redirectRule: "N1", intercepted: false)
    }
}

// MARK: - urlprotocol

/// NSURLProtocol registered for http and https through `registerSchemeForCustomProtocol:`.
public struct URLProtocolStrategy: InterceptionStrategy {
    /// P4: `silent` (dataTask with a completion handler) or `forwarded`
    /// (`wasRedirectedToRequest:`).
    public var redirects: RedirectHandling

    public init(redirects: RedirectHandling = .silent) {
        self.redirects = redirects
    }

    public var jarLink: JarLink { .system }
    public var citedRules: [RuleID] { ["P1", "P2", "P3", "P4", "P5"] }
    public var options: [String: String] { ["redirects": redirects.rawValue] }

    public func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan {
        var plan = TransportPlan(
            requestJar: .native, requestJarRule: "P3",  // P3: re-sent natively with NativeJar cookies
            responseJar: .native, responseJarRule: "P3",  // P3: Set-Cookie lands in NativeJar
            bodyLostBy: exchange.request.body.isEmpty ? nil : "P1",  // P1: no HTTPBody across IPC
            redirects: redirects, redirectRule: "P4")
        // P2: the registration is global; third-party pages go through it too.
        if context.thirdPartyPage { plan.thirdPartyBy = "P2" }
        // P5: clearing a video's src does not reach stopLoading.
        if exchange.initiator == .media { plan.notes.append(Change(rule: "P5", what: "cancelling this media load would not reach stopLoading")) }
        return plan
    }
}

// MARK: - schemehandler

/// WKURLSchemeHandler for http and https, by hooking `handlesURLScheme:`.
public struct SchemeHandlerStrategy: InterceptionStrategy {
    /// S1 as the profile asks it, once per request with a body.
    static let s1 = Profile.Bounded("S1")
    /// S5: `silent` (default), `reload-document`, or `engine` for the private
    /// `_didPerformRedirection:` SPI, with which redirects behave as native.
    public var redirects: RedirectHandling

    public init(redirects: RedirectHandling = .silent) {
        self.redirects = redirects
    }

    public var jarLink: JarLink { .system }
    public var citedRules: [RuleID] { ["S1", "S2", "S3", "S5", "S6", "S7", "S8"] + NativeStrategy().citedRules }
    public var options: [String: String] { ["redirects": redirects == .engine ? "spi" : redirects.rawValue] }

    public func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan {
        var lostBy: RuleID?
        if !exchange.request.body.isEmpty {
            if context.profile.holds(Self.s1) {
                lostBy = "S1"  // S1: before iOS 11.3 every body is lost
            } else if exchange.bodyKind.isBlobBacked(binaryAsBlob: context.binaryAsBlob) {
                lostBy = "S2"  // S2: a Blob-backed body arrives empty
            }
        }
        // S8: the handler serves only the web views it is configured on.
        if context.thirdPartyInPlainWebView && context.thirdPartyPage {
            var plan = NativeStrategy().plan(for: exchange, in: context)
            plan.notes.append(Change(rule: "S8", what: "a third-party page in a plain web view is not intercepted"))
            return plan
        }
        var plan = TransportPlan(
            requestJar: .native, requestJarRule: "S7",  // S7: NativeJar cookies
            responseJar: .native, responseJarRule: "S6",  // S6: Set-Cookie not applied to WebJar
            bodyLostBy: lostBy,
            redirects: redirects, redirectRule: "S5")
        // S3: a body arrives in HTTPBody (FormData included, as WebKit's own tests show),
        // except when the page touched xhr.upload: then only as HTTPBodyStream.
        if lostBy == nil, !exchange.request.body.isEmpty, context.uploadListener {
            plan.streamOnlyBy = "S3"
        }
        return plan
    }
}

// MARK: - jsproxy

/// XHR fully proxied to native through the JS bridge (KKJSBridge AjaxHook, IMYWebLoader;
/// X1-X3). What it does not hook goes through `base`.
public struct JSProxyStrategy: InterceptionStrategy {
    public var base: any InterceptionStrategy
    /// X3: whether the library also polyfills fetch.
    public var hooksFetch: Bool
    /// X1: whether binary request bodies survive the bridge (IMYWebLoader: no).
    public var serialisesBinary: Bool

    public init(base: any InterceptionStrategy = NativeStrategy(), hooksFetch: Bool = false, serialisesBinary: Bool = false) {
        self.base = base
        self.hooksFetch = hooksFetch
        self.serialisesBinary = serialisesBinary
    }

    public var jarLink: JarLink { .system }
    public var citedRules: [RuleID] { ["X1", "X2", "X3"] + base.citedRules }
    public var options: [String: String] { ["base": base.kind, "fetch": hooksFetch ? "hooked" : "not hooked", "binary-bodies": serialisesBinary ? "serialised" : "lost"] }

    /// Whether the bridge carries this request: XHR always, fetch when polyfilled (X3).
    /// An ajax request of unknown API counts as an XHR here; the emulator evaluates it both ways.
    public func hooks(_ initiator: Initiator) -> Bool {
        initiator == .xhr || initiator == .ajax || (initiator == .fetch && hooksFetch)
    }

    public func plan(for exchange: Exchange, in context: EmulationContext) -> TransportPlan {
        guard hooks(exchange.initiator) else {
            // X3: fetch (unless polyfilled), forms and beacons take the base strategy.
            var plan = base.plan(for: exchange, in: context)
            if [.fetch, .formSubmission, .beacon].contains(exchange.initiator) {
                plan.notes.append(Change(rule: "X3", note: .notHookedByBridge(base: base.kind)))
            }
            return plan
        }
        let binaryBody = exchange.bodyKind.isBinary
        let binaryResponse = Self.isBinary(contentType: exchange.response.headers.first("Content-Type"))
        return TransportPlan(
            requestJar: .native, requestJarRule: "X1", responseJar: .native, responseJarRule: "X1",
            bodyLostBy: binaryBody && !serialisesBinary && !exchange.request.body.isEmpty ? "X1" : nil,
            redirects: .silent, redirectRule: "X1",
            responseMutatedBy: binaryResponse && !exchange.response.body.isEmpty ? "X2" : nil)
    }

    /// Responses that a JSON bridge cannot carry as an arraybuffer or blob (X2).
    static func isBinary(contentType: String?) -> Bool {
        guard let contentType else { return false }
        return binaryTypes.contains { contentType.hasCaseInsensitivePrefix($0) }
    }

    static let binaryTypes = ["image/", "audio/", "video/", "application/octet-stream", "application/pdf", "application/zip", "application/x-protobuf", "application/protobuf", "font/"]
}

// MARK: - as a preset file writes them

extension NativeStrategy: PresetPart {
    public static var kindName: String { "native" }
    public init(options: NoOptions) {}
}

/// The options of a strategy whose only choice is what it does with redirects.
public struct RedirectOptions: PartOptions {
    public var redirects: String?
    enum CodingKeys: String, CodingKey, CaseIterable { case redirects }
    public static let keys = CodingKeys.allCases.map(\.stringValue)
}

extension URLProtocolStrategy: PresetPart {
    public static var kindName: String { "urlprotocol" }
    /// P4: forwarding the redirect to the page shows it the hop.
    public static var choices: [OptionChoice] { [OptionChoice("redirects", default: #""silent""#, counters: [#""forwarded""#], rules: ["P4"])] }

    public init(options: RedirectOptions) throws {
        switch options.redirects ?? "silent" {
        case "silent": self.init(redirects: .silent)
        case "forwarded": self.init(redirects: .forwarded)
        default: throw ConfigProblem(at: "redirects", "urlprotocol redirects are silent or forwarded (P4)")
        }
    }
}

extension SchemeHandlerStrategy: PresetPart {
    public static var kindName: String { "schemehandler" }
    /// S5: the SPI makes redirects behave as native; reloading the document shows the page its URL.
    public static var choices: [OptionChoice] { [OptionChoice("redirects", default: #""silent""#, counters: [#""spi""#, #""reload-document""#], rules: ["S5"])] }

    public init(options: RedirectOptions) throws {
        switch options.redirects ?? "silent" {
        case "silent": self.init(redirects: .silent)
        case "reload-document": self.init(redirects: .reloadDocument)
        case "spi": self.init(redirects: .engine)
        default: throw ConfigProblem(at: "redirects", "schemehandler redirects are silent, reload-document or spi (S5)")
        }
    }
}

extension JSProxyStrategy: PresetPart {
    public static var kindName: String { "jsproxy" }
    /// X1: binary bodies survive where the bridge serialises them; X3: fetch goes through it once hooked.
    public static var choices: [OptionChoice] {
        [OptionChoice("serialisesBinary", default: "false", counters: ["true"], rules: ["X1"]), OptionChoice("hooksFetch", default: "false", counters: ["true"], rules: ["X3"])]
    }

    public struct Options: PartOptions {
        /// The strategy for what the bridge does not carry; native when left out.
        public var base: StrategySpec?
        public var hooksFetch: Bool?
        public var serialisesBinary: Bool?
        enum CodingKeys: String, CodingKey, CaseIterable { case base, hooksFetch, serialisesBinary }
        public static let keys = CodingKeys.allCases.map(\.stringValue)
    }

    public init(options: Options) {
        self.init(base: options.base?.value ?? NativeStrategy(), hooksFetch: options.hooksFetch ?? false, serialisesBinary: options.serialisesBinary ?? false)
    }
}
