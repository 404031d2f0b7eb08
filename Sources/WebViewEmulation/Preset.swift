/// A named strategy with its mitigations: one column of the side-by-side matrix
/// (BEHAVIOUR.md section 5).
public struct Preset: Sendable {
    public var name: String
    public var summary: String
    public var strategy: any InterceptionStrategy
    public var mitigations: [any Mitigation] {
        didSet { hooks = ComposedHooks(mitigations) }
    }
    /// The mitigations' hooks gathered once, for every replay under this preset.
    private(set) var hooks: ComposedHooks
    /// Profile numbers this preset overrides (from a preset file), applied over the run's.
    public var profileOverride: ProfileOverride?

    /// The profile this preset replays under, given the run's.
    public func profile(over base: Profile) -> Profile {
        profileOverride.map { base.applying($0) } ?? base
    }

    public init(name: String, summary: String, strategy: any InterceptionStrategy, mitigations: [any Mitigation] = []) {
        self.name = name
        self.summary = summary
        self.strategy = strategy
        self.mitigations = mitigations
        hooks = ComposedHooks(mitigations)
    }

    /// A preset composed as a strategy and the mitigations layered on it, in order:
    ///
    ///     Preset(name: "our-app", summary: "...", strategy: URLProtocolStrategy()) {
    ///         BodyBridge(idParameter: "rid")
    ///         CookieSetterHook(synchronous: true)
    ///     }
    public init(name: String, summary: String, strategy: any InterceptionStrategy, @MitigationList mitigations: () -> [any Mitigation]) {
        self.init(name: name, summary: summary, strategy: strategy, mitigations: mitigations())
    }

    /// Every rule this preset's strategy and mitigations can cite.
    public var citedRules: [RuleID] { strategy.citedRules + mitigations.flatMap(\.citedRules) }

    /// The built-in presets, in matrix order: BEHAVIOUR.md section 5, and
    /// `urlprotocol-forwarded` for P4's forwarded form.
    public static let builtIn: [Preset] = [
        Preset(name: "plain", summary: "WKWebView without interception", strategy: NativeStrategy()),
        Preset(name: "plain-cookie-sync", summary: "WKWebView with the seeds' cookie recipes: Cookie header on loadRequest, document-start cookie script (seeds 000, 002)",
            strategy: NativeStrategy()) {
            CookieHeaderOnLoad()
            CookieScriptInject()
        },
        Preset(name: "urlprotocol-naive", summary: "NSURLProtocol through the private registerSchemeForCustomProtocol:, redirects followed silently (seed 003 sample)", strategy: URLProtocolStrategy(redirects: .silent)),
        Preset(name: "urlprotocol-forwarded", summary: "NSURLProtocol that forwards redirects with wasRedirectedToRequest:", strategy: URLProtocolStrategy(redirects: .forwarded)),
        Preset(name: "kkjsbridge-protocolhook", summary: "KKJSBridge ProtocolHook: NSURLProtocol plus a body bridge and an async cookie setter hook (seed 000)",
            strategy: URLProtocolStrategy(redirects: .silent)) {
            BodyBridge(covers: [.xhr, .fetch, .formSubmit], idParameter: "KKJSBridge-RequestId", rebuildsFormData: true)
            CookieSetterHook(synchronous: false)
        },
        Preset(name: "kkjsbridge-ajaxhook", summary: "KKJSBridge AjaxHook: XHR proxied through the JS bridge, with the cookie recipes (seed 000)",
            strategy: JSProxyStrategy()) {
            CookieHeaderOnLoad()
            CookieScriptInject()
            CookieSetterHook(synchronous: false)
        },
        Preset(name: "netease-schemehandler", summary: "NetEase: WKURLSchemeHandler that reloads redirected documents, a body bridge below 11.3 or for Blobs, cookie store sync and a sync setter hook (seed 001)",
            strategy: SchemeHandlerStrategy(redirects: .reloadDocument)) {
            BodyBridge(covers: [.xhr, .fetch], idParameter: "identifier", when: .below113OrBlob, rejoinsURLSearchParams: true)
            CookieStoreSync()
            CookieSetterHook(synchronous: true)
        },
        Preset(name: "yanxuan-xcache", summary: "Yanxuan XCache: NSURLProtocol with a body bridge that marks requests by header, a sync setter hook and cookie store sync (seed 004)",
            strategy: URLProtocolStrategy(redirects: .silent)) {
            BodyBridge(covers: [.xhr, .fetch], idParameter: "yx-wkwebview-request-id", markerHeader: "x-wkwebview-request-type")
            CookieSetterHook(synchronous: true)
            CookieStoreSync()
        },
        Preset(name: "postscheme-header", summary: "NSURLProtocol with the body moved into a header and a Cookie header on loadRequest (seed 003)",
            strategy: URLProtocolStrategy(redirects: .silent)) {
            BodyInHeader()
            CookieHeaderOnLoad()
        },
        Preset(name: "schemehandler-naive", summary: "WKURLSchemeHandler for http/https, redirects followed silently", strategy: SchemeHandlerStrategy(redirects: .silent)),
    ]

    public static func named(_ name: String) -> Preset? { builtIn.first { $0.name == name } }
}

/// Composes a preset's mitigations in the order written.
@resultBuilder
public enum MitigationList {
    public static func buildExpression(_ mitigation: any Mitigation) -> [any Mitigation] { [mitigation] }
    public static func buildBlock(_ parts: [any Mitigation]...) -> [any Mitigation] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [any Mitigation]?) -> [any Mitigation] { part ?? [] }
    public static func buildEither(first: [any Mitigation]) -> [any Mitigation] { first }
    public static func buildEither(second: [any Mitigation]) -> [any Mitigation] { second }
}
